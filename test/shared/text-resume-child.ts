// One short training run for the text kill test (test/deno/text-resume.test.ts): textLoader over the
// token shards in DATA (best-fit, shuffled) to Deno's WebGPU, the tiny GPT trained on every batch,
// and every EVERY steps one checkpoint, written atomically, holding the weights, the optimizer and
// the loader's state together: what a resumed run needs to be the run that never stopped.
//   deno run -A test/shared/text-resume-child.ts DIR EVERY DATA
// It appends to DIR/batches.log with synchronous writes: "run", "resume N" when it continues from a
// checkpoint after N steps, "N HASH" per step (a hash of the batch's inputs, labels and document
// ids, read back), and "done N WEIGHTS" at the end (a hash of the final weights).
import { acquireGpu, readBuffer } from '../../src/gpu/index.ts';
import { GptTrainer, gptPresets } from '../../src/gpt/index.ts';
import { textLoader, type TextLoaderState } from '../../src/text/index.ts';

export function hashWords(...arrays: ArrayLike<number>[]): string {
  let h = 0x811c9dc5;
  for (const a of arrays)
    for (let i = 0; i < a.length; i++) {
      const v = a[i] ?? 0;
      h = Math.imul(h ^ (v & 0xffff), 0x01000193) >>> 0;
      h = Math.imul(h ^ (v >>> 16), 0x01000193) >>> 0;
    }
  return h.toString(16);
}

const SEQ = 32;
const ROWS = 4;

async function main(dir: string, every: number, data: string): Promise<void> {
  const log = (line: string) => Deno.writeTextFileSync(`${dir}/batches.log`, `${line}\n`, { append: true });
  const checkpoint = `${dir}/run.ckpt`;
  const manifest = JSON.parse(Deno.readTextFileSync(`${data}/shards.json`)) as { shards: { name: string }[] };
  const shards = manifest.shards.map((s) => `${data}/${s.name}`);
  let saved: { steps: number; loader: TextLoaderState; gpt: number[] } | undefined;
  try {
    saved = JSON.parse(Deno.readTextFileSync(checkpoint));
  } catch {
    saved = undefined;
  }
  log(saved ? `resume ${saved.steps}` : 'run');
  using gpu = await acquireGpu();
  const gpt = await GptTrainer.create(gpu.device, { config: { ...gptPresets.tiny, context: SEQ }, batchSize: ROWS, seed: 3 });
  if (saved) gpt.loadCheckpoint(Uint8Array.from(saved.gpt));
  const loader = textLoader(
    { tokens: shards, shuffleBuffer: 16 },
    {
      seqLen: SEQ,
      batchSize: ROWS,
      pack: 'best-fit',
      fitWindow: 8,
      shuffle: true,
      seed: 7,
      to: gpu,
      ...(saved ? { resumeFrom: saved.loader } : {}),
    },
  );
  let steps = saved?.steps ?? 0;
  for await (const b of loader) {
    const encoder = gpu.device.createCommandEncoder();
    gpt.step(encoder, b);
    gpu.device.queue.submit([encoder.finish()]);
    const read = (buffer: GPUBuffer) => readBuffer(gpu.device, buffer).then((x) => new Int32Array(x));
    const [inputs, labels, docIds] = await Promise.all([read(b.inputs), read(b.labels), read(b.docIds)]);
    b.release();
    steps++;
    log(`${steps} ${hashWords(inputs, labels, docIds)}`);
    if (steps % every === 0) {
      const state = { steps, loader: loader.state(), gpt: Array.from(await gpt.saveCheckpoint()) };
      Deno.writeTextFileSync(`${checkpoint}.tmp`, JSON.stringify(state));
      Deno.renameSync(`${checkpoint}.tmp`, checkpoint);
    }
  }
  await loader.close();
  const weights = await gpt.readParams();
  log(`done ${steps} ${hashWords(new Uint32Array(weights.buffer, weights.byteOffset, weights.length))}`);
  gpt.close();
}

if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const [dir, every, data] = Deno.args as [string, string, string];
  await main(dir, Number(every), data);
}
