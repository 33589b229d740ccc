// One short run for the text kill test (test/deno/text-resume.test.ts): textLoader over the token
// shards in DATA (best-fit, shuffled, 2 epochs), a stand-in training step per batch, and a
// checkpoint every EVERY batches written atomically (the loader's state beside the step count,
// as a model's checkpoint would hold them).
//   deno run -A test/shared/text-resume-child.ts DIR EVERY DATA
// It appends to DIR/batches.log with synchronous writes: "run", "resume N" when it continues from a
// checkpoint after N batches, "N HASH" per batch (a hash of its inputs, labels and document ids),
// and "done N" at the end.
import { textLoader, type TextLoaderState } from '../../src/text/index.ts';

const [dir, everyArg, data] = Deno.args as [string, string, string];
const every = Number(everyArg);
const log = (line: string) => Deno.writeTextFileSync(`${dir}/batches.log`, `${line}\n`, { append: true });
const checkpoint = `${dir}/run.ckpt`;

export function batchHash(...arrays: Int32Array[]): string {
  let h = 0x811c9dc5;
  for (const a of arrays)
    for (let i = 0; i < a.length; i++) {
      h ^= a[i]! & 0xffff;
      h = Math.imul(h, 0x01000193) >>> 0;
      h ^= a[i]! >>> 16;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  return h.toString(16);
}

if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const shards = JSON.parse(Deno.readTextFileSync(`${data}/shards.json`)).shards.map((s: { name: string }) => `${data}/${s.name}`);
  let saved: { batches: number; loader: TextLoaderState } | undefined;
  try {
    saved = JSON.parse(Deno.readTextFileSync(checkpoint));
  } catch {
    saved = undefined;
  }
  log(saved ? `resume ${saved.batches}` : 'run');
  const loader = textLoader(
    { tokens: shards, shuffleBuffer: 16 },
    {
      seqLen: 32,
      batchSize: 4,
      pack: 'best-fit',
      fitWindow: 8,
      shuffle: true,
      seed: 7,
      epochs: 2,
      ...(saved ? { resumeFrom: saved.loader } : {}),
    },
  );
  let n = saved?.batches ?? 0;
  for await (const b of loader) {
    n++;
    log(`${n} ${batchHash(b.inputs, b.labels, b.docIds)}`);
    b.release();
    await new Promise((r) => setTimeout(r, 4)); // the training step's time: kills land between batches and inside them
    if (n % every === 0) {
      const tmp = `${checkpoint}.tmp`;
      Deno.writeTextFileSync(tmp, JSON.stringify({ batches: n, loader: loader.state() }));
      Deno.renameSync(tmp, checkpoint);
    }
  }
  await loader.close();
  log(`done ${n}`);
}
