// Does loading hide behind training? One epoch of the default dataset three ways, in one run:
// loader + training overlapped (as `tandem train` runs), the loader alone (read → decode → batch →
// upload → normalise, no training), and training alone (ViT steps from batches already in GPU
// memory). Interleaved repetitions, medians. Goal: overlapped ≤ 1.05 × max(loader, training).
//   npx deno run -A bench/overlap.ts [--images 1024] [--batch 32] [--threads 2] [--reps 5] [--out docs/bench/overlap.md] [--smoke]
// Prints the table; --out FILE writes it too. --smoke (bench/shared/args.ts): 40 images, batches
// of 8, 1 repetition, the table also written under test-results/bench-smoke/.
import { folderData, resolveDataFolder } from '../src/cli/files.ts';
import { DecodePool } from '../src/decode/index.ts';
import { acquireGpu, NormalizeKernel } from '../src/gpu/index.ts';
import { writeFileAtomic } from '../src/runtime/index.ts';
import { loader } from '../src/loader/index.ts';
import { presets, ViTTrainer } from '../src/vit/index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median } from './shared/stats.ts';

const args = benchArgs('overlap', {
  images: { type: 'number', default: 1024, smoke: 40 },
  batch: { type: 'number', default: 32, smoke: 8 },
  threads: { type: 'number', default: 2 },
  reps: { type: 'number', default: 5, smoke: 1 },
  out: { type: 'string', smoke: smokeOut('bench-overlap.md'), help: 'also write the table to this file' },
});
const { images, batch: B, threads, reps, out: outPath } = args.values;
const loadAtStart = machineLoad();

const data = await folderData(await resolveDataFolder(undefined, images, console.log));
const gpu = await acquireGpu();
const { device } = gpu;
const pool = await DecodePool.create({ threads });
const model = { ...presets.tiny, classes: data.classes.length };
const S = model.imageSize;
const steps = Math.ceil(data.train.length / B);
const trainer = await ViTTrainer.create(device, {
  config: model,
  batchSize: B,
  seed: 1,
  train: { lr: 2e-3, warmupSteps: 5, totalSteps: steps * reps * 3, weightDecay: 0.05, clipNorm: 1 },
});
const normalize = await NormalizeKernel.create(device, { images: B, height: S, width: S, channels: 3 });
const input = device.createBuffer({ size: normalize.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const labels = device.createBuffer({ size: B * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
device.queue.writeBuffer(labels, 0, new Int32Array(B).fill(1));

/** One epoch through the loader; `train` adds a ViT step per batch. Returns seconds and time waited for batches. */
async function loaderEpoch(train: boolean): Promise<{ seconds: number; waited: number }> {
  const loaded = loader(data.train, { to: device, normalize: false, pool, batchSize: B, size: S, failureBudget: {} });
  const fences: Promise<undefined>[] = [];
  const t0 = performance.now();
  let waited = 0;
  const batches = loaded[Symbol.asyncIterator]();
  for (;;) {
    const w0 = performance.now();
    const next = await batches.next();
    waited += performance.now() - w0;
    if (next.done) break;
    const encoder = device.createCommandEncoder();
    normalize.encode(encoder, next.value.buffer, input);
    if (train) trainer.step(encoder, input, labels);
    device.queue.submit([encoder.finish()]);
    next.value.release();
    fences.push(device.queue.onSubmittedWorkDone());
    if (fences.length > 2) await fences.shift(); // the session's bound: at most two steps queued
  }
  await device.queue.onSubmittedWorkDone();
  const seconds = (performance.now() - t0) / 1000;
  await loaded.close();
  return { seconds, waited: waited / 1000 };
}

// Training alone: the epoch's batches decoded, uploaded and normalised once, kept on the GPU.
const resident: GPUBuffer[] = [];
{
  const loaded = loader(data.train, { to: device, normalize: false, pool, batchSize: B, size: S, failureBudget: {} });
  for await (const batch of loaded) {
    const buffer = device.createBuffer({ size: normalize.outputBytes, usage: GPUBufferUsage.STORAGE });
    const encoder = device.createCommandEncoder();
    normalize.encode(encoder, batch.buffer, buffer);
    device.queue.submit([encoder.finish()]);
    batch.release();
    resident.push(buffer);
  }
  await device.queue.onSubmittedWorkDone();
  await loaded.close();
}
async function trainingEpoch(): Promise<{ seconds: number; waited: number }> {
  const fences: Promise<undefined>[] = [];
  const t0 = performance.now();
  for (const buffer of resident) {
    const encoder = device.createCommandEncoder();
    trainer.step(encoder, buffer, labels);
    device.queue.submit([encoder.finish()]);
    fences.push(device.queue.onSubmittedWorkDone());
    if (fences.length > 2) await fences.shift();
  }
  await device.queue.onSubmittedWorkDone();
  return { seconds: (performance.now() - t0) / 1000, waited: 0 };
}

const runs = { overlapped: [] as number[], loader: [] as number[], training: [] as number[], waited: [] as number[] };
await loaderEpoch(true); // warm-up: shader compilation, first pthread jobs, file cache
for (let r = 0; r < reps; r++) {
  // Rotate the order so drift in the machine's load does not favour one mode.
  const order = [0, 1, 2].map((i) => (i + r) % 3);
  for (const mode of order) {
    if (mode === 0) {
      const o = await loaderEpoch(true);
      runs.overlapped.push(o.seconds);
      runs.waited.push(o.waited / o.seconds);
    } else if (mode === 1) runs.loader.push((await loaderEpoch(false)).seconds);
    else runs.training.push((await trainingEpoch()).seconds);
  }
  console.log(
    `rep ${r + 1}/${reps}: overlapped ${runs.overlapped.at(-1)!.toFixed(2)} s, loader ${runs.loader.at(-1)!.toFixed(2)} s, training ${runs.training.at(-1)!.toFixed(2)} s`,
  );
}
const m = {
  overlapped: median(runs.overlapped),
  loader: median(runs.loader),
  training: median(runs.training),
  waited: median(runs.waited),
};
const ratio = m.overlapped / Math.max(m.loader, m.training);
const summary = [
  `epoch: ${data.train.length} images in ${steps} batches of ${B} (${S}×${S}), ${threads} decode threads; ${gpu.runtime}; median of ${reps} interleaved repetitions`,
  `| mode | epoch seconds | images/s |`,
  `|---|---|---|`,
  ...(['overlapped', 'loader', 'training'] as const).map(
    (k) =>
      `| ${k === 'overlapped' ? 'loader + training, overlapped' : k === 'loader' ? 'loader only' : 'training only (batches resident on the GPU)'} | ${m[k].toFixed(2)} | ${(data.train.length / m[k]).toFixed(0)} |`,
  ),
  ``,
  `overlapped / max(loader, training) = ${ratio.toFixed(3)} (goal ≤ 1.05); sum would be ${(m.overlapped / (m.loader + m.training)).toFixed(3)} of loader + training`,
  `the training loop waited for data ${(m.waited * 100).toFixed(1)}% of the overlapped epoch (median)`,
  ``,
  ...machineLines(loadAtStart, machineLoad()),
].join('\n');
console.log(summary);
if (outPath) await writeFileAtomic(outPath, new TextEncoder().encode(`${summary}\n`));
for (const b of resident) b.destroy();
trainer.destroy();
normalize.destroy();
input.destroy();
labels.destroy();
await pool.close();
gpu.close();
args.done(`overlapped / max(loader, training) = ${ratio.toFixed(3)} over ${data.train.length} images`);
