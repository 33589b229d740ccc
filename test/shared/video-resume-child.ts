// One run of the video kill test (test/shared/video-resume-scenarios.ts, killedVideoRunsResume):
// the shuffled two-epoch videoLoader run of the resume scenarios, as a training loop would take it,
// checkpointing the loader's state after every batch.
//   deno run -A --no-check test/shared/video-resume-child.ts DIR
//   node --import ./test/shared/video-ts-hooks.mjs test/shared/video-resume-child.ts DIR
// It appends to DIR/batches.log with synchronous writes: "run", or "resume N" when it continues
// from a checkpoint taken after N batches; "N FINGERPRINT" for each batch (its keys and a hash of
// its labels, frame times and pixels); "done N" at the end. After each batch and a training step
// (CHILD_STEP_MS) it writes DIR/run.ckpt, { batches, loader: state() }, atomically (a temporary
// file renamed over it). Both runtimes run src/ itself.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { DecodePool } from '../../src/decode/index.ts';
import { videoLoader, type VideoLoaderState } from '../../src/video/index.ts';
import { CHILD_STEP_MS, fingerprint, flakyPool, resumeOptions, resumeSource, seen } from './video-resume-scenarios.ts';

const dir = ((globalThis as { Deno?: { args: string[] } }).Deno?.args ?? process.argv.slice(2))[0] as string;
const log = (line: string) => appendFileSync(`${dir}/batches.log`, `${line}\n`);
const checkpoint = `${dir}/run.ckpt`;
const saved = existsSync(checkpoint)
  ? (JSON.parse(readFileSync(checkpoint, 'utf8')) as { batches: number; loader: VideoLoaderState })
  : undefined;
log(saved ? `resume ${saved.batches}` : 'run');

const fixtures = new URL('../fixtures/generated/', import.meta.url);
const source = await resumeSource(async (name) => new Uint8Array(readFileSync(new URL(name, fixtures))));
const pool = await DecodePool.create({ threads: 2 });
const data = videoLoader(source, resumeOptions(flakyPool(pool, source), saved ? { resumeFrom: saved.loader } : {}));
let batches = saved?.batches ?? 0;
for await (const batch of data) {
  const line = fingerprint(seen(batch));
  batch.release();
  log(`${++batches} ${line}`);
  await new Promise((resolve) => setTimeout(resolve, CHILD_STEP_MS));
  writeFileSync(`${checkpoint}.tmp`, JSON.stringify({ batches, loader: data.state() }));
  renameSync(`${checkpoint}.tmp`, checkpoint);
}
await data.close();
await pool.close();
log(`done ${batches}`);
