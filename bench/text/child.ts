// One side of bench/text.ts in a process of its own, so its CPU time is its own (every thread,
// the tokenizer's workers included, from /proc/self/stat). Deno runs this file; Node runs it
// transpiled with src/ beside it (bench/text/node-build.ts). Two sides, the same job: documents
// in memory → byte-level BPE ids (+ EOS) → concat windows of seqLen + 1 → batches on the GPU.
//   --side tandem  textLoader({ texts }, { tokenizer: { json }, pack: 'concat', to: gpu }) with
//                  the tokenizer in --workers worker threads; batches released as they come (a
//                  byte-level BPE tokenizer.json runs on Tandem's byte-level BPE road there);
//   --side library the same with { json, fast: false }: the workers run tokenizers.js on every document;
//   --side inline  the same loader given the loop's Tokenizer object, which it runs on its event loop;
//   --side loop    what a web user writes: @huggingface/tokenizers on the main thread, ids
//                  appended to one Int32Array stream, windows sliced into inputs/labels arrays,
//                  two writeBuffer calls per batch.
// Timed: from the loader's creation (the loop: the Tokenizer's) to the last batch's work done on
// the queue. Untimed: reading the inputs, acquiring the GPU. --gpu off: batches stay on the CPU.
// --check: also hashes every labelled position (input, label) so the parent can check both sides
// delivered the same ids. Prints one JSON line.
//
//   deno run -A bench/text/child.ts --side tandem|library|inline|loop --docs FILE --tokenizer FILE --seq 256
//        --batch 8 --eos ID [--workers 1] [--gpu on|off] [--check]
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { textLoader } from '../../src/text/index.ts';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: Object.fromEntries(
    ['side', 'docs', 'tokenizer', 'seq', 'batch', 'eos', 'workers', 'gpu'].map((n) => [n, { type: 'string' as const }]),
  ) as Record<string, { type: 'string' }>,
  strict: false,
  allowPositionals: false,
});
const arg = (name: string): string => {
  const v = values[name];
  if (typeof v !== 'string') throw new Error(`--${name} is required`);
  return v;
};
const check = process.argv.includes('--check');
const side = arg('side');
const seqLen = Number(arg('seq'));
const batchSize = Number(arg('batch'));
const eos = Number(arg('eos'));
const workers = Number(values.workers ?? 1);
const documents = JSON.parse(readFileSync(arg('docs'), 'utf8')) as string[];
const tokenizerText = readFileSync(arg('tokenizer'), 'utf8');
const runtime = typeof (globalThis as { Deno?: unknown }).Deno === 'object' ? 'deno' : 'node';

function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
}

/** FNV-1a over 32-bit values: the same function both sides and every runtime compute. */
class IdHash {
  h = 0x811c9dc5;
  add(x: number): void {
    this.h = Math.imul(this.h ^ (x & 0xffffffff), 0x01000193) >>> 0;
  }
}

let gpu: GpuContext | undefined;
let gpuWhy = '';
if (values.gpu !== 'off') {
  try {
    gpu = await acquireGpu();
  } catch (e) {
    gpuWhy = (e as Error).message.split('\n')[0] ?? '';
  }
}
const ids = new IdHash();
const counts = new IdHash();
let tokens = 0;
let batches = 0;
let firstBatch = Number.NaN;
const cpu0 = cpuSeconds();
const t0 = performance.now();
const delivered = (n: number) => {
  if (batches === 0) firstBatch = (performance.now() - t0) / 1000;
  batches++;
  tokens += n;
  counts.add(n);
};

if (side === 'tandem' || side === 'library' || side === 'inline') {
  // 'library': the workers keep every document on tokenizers.js (no byte-level BPE road).
  // 'inline': the same Tokenizer object the loop uses, run by the loader on its event loop (no workers).
  const tokenizer =
    side === 'inline'
      ? new Tokenizer(JSON.parse(tokenizerText), {})
      : side === 'library'
        ? { json: tokenizerText, fast: false }
        : { json: tokenizerText };
  const data = textLoader(
    { texts: documents },
    { tokenizer, tokenizerWorkers: workers, seqLen, batchSize, eos, pack: 'concat', to: gpu ?? 'cpu' },
  );
  try {
    for await (const b of data) {
      delivered(b.count * seqLen - b.padding);
      if (check && 'inputs' in b && b.inputs instanceof Int32Array && b.labels instanceof Int32Array) {
        for (let t = 0; t < b.count * seqLen; t++)
          if (b.labels[t] !== -1) {
            ids.add(b.inputs[t] ?? 0);
            ids.add(b.labels[t] ?? 0);
          }
      }
      b.release();
    }
  } finally {
    await data.close();
  }
} else if (side === 'loop') {
  await userLoop();
} else throw new Error(`--side wants tandem, library, inline or loop, got ${side}`);
if (gpu) await gpu.device.queue.onSubmittedWorkDone();
const seconds = (performance.now() - t0) / 1000;
const cpu = cpuSeconds() - cpu0;
const adapter = gpu?.adapter?.info;
console.log(
  JSON.stringify({
    side,
    runtime,
    version: runtime === 'deno' ? (process.versions.deno ?? '') : process.version,
    target: gpu ? 'gpu' : 'cpu',
    adapter: adapter ? `${adapter.vendor} ${adapter.architecture} ${adapter.description}`.trim() : '',
    gpuWhy,
    seconds,
    cpuSeconds: cpu,
    tokens,
    batches,
    firstBatchSeconds: firstBatch,
    counts: counts.h.toString(16),
    ids: check ? ids.h.toString(16) : undefined,
  }),
);
gpu?.close();
process.exit(0);

/** The web user's loop: everything on the main thread, two writeBuffer calls per batch. */
async function userLoop(): Promise<void> {
  const tokenizer = new Tokenizer(JSON.parse(tokenizerText), {});
  const rowTokens = seqLen + 1;
  const inputs = new Int32Array(batchSize * seqLen);
  const labels = new Int32Array(batchSize * seqLen);
  const bytes = inputs.byteLength;
  const usage = (globalThis as { GPUBufferUsage?: { STORAGE: number; COPY_DST: number } }).GPUBufferUsage;
  const inputBuffer = gpu && usage ? gpu.device.createBuffer({ size: bytes, usage: usage.STORAGE | usage.COPY_DST }) : undefined;
  const labelBuffer = gpu && usage ? gpu.device.createBuffer({ size: bytes, usage: usage.STORAGE | usage.COPY_DST }) : undefined;
  let stream = new Int32Array(1 << 16);
  let cursor = 0;
  let length = 0;
  let rows = 0;
  let filled = 0;
  const flush = () => {
    if (rows === 0) return;
    inputs.fill(eos, rows * seqLen);
    labels.fill(-1, rows * seqLen);
    if (gpu && inputBuffer && labelBuffer) {
      gpu.device.queue.writeBuffer(inputBuffer, 0, inputs);
      gpu.device.queue.writeBuffer(labelBuffer, 0, labels);
    }
    delivered(filled);
    rows = 0;
    filled = 0;
  };
  // One window of n tokens from the cursor into row `rows`; the next starts on its last token.
  const row = (n: number) => {
    const base = rows * seqLen;
    for (let t = 0; t < seqLen; t++) {
      inputs[base + t] = t < n ? (stream[cursor + t] ?? 0) : eos;
      labels[base + t] = t + 1 < n ? (stream[cursor + t + 1] ?? 0) : -1;
      if (check && t + 1 < n) {
        ids.add(inputs[base + t] ?? 0);
        ids.add(labels[base + t] ?? 0);
      }
    }
    filled += Math.min(n, seqLen);
    rows++;
    cursor += n < rowTokens ? n : seqLen;
    if (rows === batchSize) flush();
  };
  for (const text of documents) {
    const got = tokenizer.encode(text, { add_special_tokens: false }).ids;
    if (length + got.length + 1 > stream.length) {
      // Keep what is not yet windowed, at the front; grow when that is still too long.
      const kept = stream.subarray(cursor, length);
      const next = kept.length + got.length + 1 > stream.length ? new Int32Array(2 * (kept.length + got.length + 1)) : stream;
      if (next === stream) stream.copyWithin(0, cursor, length);
      else next.set(kept);
      stream = next;
      length -= cursor;
      cursor = 0;
    }
    for (let i = 0; i < got.length; i++) stream[length + i] = got[i] ?? 0;
    length += got.length;
    stream[length++] = eos;
    while (length - cursor >= rowTokens) row(rowTokens);
  }
  while (length - cursor >= 2) row(Math.min(rowTokens, length - cursor));
  flush();
}
