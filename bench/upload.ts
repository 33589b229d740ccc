// Upload bandwidth and upload/compute overlap, side by side in one run.
//   npx deno run -A bench/upload.ts [--batch-mb 9.6] [--reps 7] [--out docs/bench/upload.md] [--smoke]
// Methods: raw writeBuffer from a plain ArrayBuffer (the ceiling), the uploader's write-buffer
// path from shared wasm memory, and its mapped-staging ring. Interleaved repetitions, medians.
// --smoke (bench/shared/args.ts): batches of 0.5 MB, 1 repetition, the report under
// test-results/bench-smoke/.
import { DecodePool } from '../src/decode/index.ts';
import { acquireGpu, BatchUploader, type HostBatch, type UploadMethod } from '../src/gpu/index.ts';
import { readText } from '../src/runtime/index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median } from './shared/stats.ts';

const args = benchArgs('upload', {
  'batch-mb': { type: 'number', default: 9.6, smoke: 0.5 },
  reps: { type: 'number', default: 7, smoke: 1 },
  out: { type: 'string', default: 'docs/bench/upload.md', smoke: smokeOut('bench-upload.md') },
});
const outPath = args.values.out;
const loadAtStart = machineLoad();
const batchBytes = Math.round((args.values['batch-mb'] * 1e6) / 4) * 4; // 64 × 224 × 224 × 3 ≈ 9.6 MB
const reps = args.values.reps;
const batchesPerRep = 16;

const gpu = await acquireGpu();
const { device } = gpu;
const pool = await DecodePool.create({ threads: 1 });
const wasmPtr = pool.malloc(batchBytes);
const wasmView = new Uint8Array(pool.memory.buffer, wasmPtr, batchBytes);
for (let i = 0; i < batchBytes; i++) wasmView[i] = i & 0xff;
const plain = new Uint8Array(batchBytes).fill(7);
const hostBatch = (sequence: number): HostBatch => ({
  sequence,
  count: 1,
  shape: [1, 1, 1, batchBytes],
  data: wasmView,
  labels: new Int32Array(1),
  release() {},
});

async function rawWriteBuffer(): Promise<number> {
  const targets = [0, 1].map(() => device.createBuffer({ size: batchBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }));
  await device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  for (let i = 0; i < batchesPerRep; i++) device.queue.writeBuffer(targets[i % 2]!, 0, plain);
  await device.queue.onSubmittedWorkDone();
  const s = (performance.now() - t0) / 1000;
  for (const b of targets) b.destroy();
  return s;
}

async function viaUploader(method: UploadMethod, compute?: (input: GPUBuffer) => void): Promise<number> {
  const uploader = new BatchUploader(device, { maxBatchBytes: batchBytes, slots: 2, method });
  await device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  for (let i = 0; i < batchesPerRep; i++) {
    const batch = await uploader.upload(hostBatch(i));
    if (compute) compute(batch.buffer);
    batch.release();
  }
  await device.queue.onSubmittedWorkDone();
  const s = (performance.now() - t0) / 1000;
  await uploader.close();
  return s;
}

// A synthetic compute load that reads the batch buffer: `iterations` rounds of ALU work per word.
const loadCode = await readText(new URL('./compute-load.wgsl', import.meta.url));
const loadModule = device.createShaderModule({ code: loadCode });
const loadPipeline = device.createComputePipeline({ layout: 'auto', compute: { module: loadModule, entryPoint: 'main' } });
const sink = device.createBuffer({ size: batchBytes, usage: GPUBufferUsage.STORAGE });
const iterationsBuffer = device.createBuffer({ size: 4, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const words = batchBytes / 4;
const groups = Math.ceil(words / 256);
const groupsX = Math.min(groups, 65535);
const groupsY = Math.ceil(groups / groupsX);
const bindGroups = new Map<GPUBuffer, GPUBindGroup>();
function computeOn(input: GPUBuffer): void {
  let bg = bindGroups.get(input);
  if (!bg) {
    bg = device.createBindGroup({
      layout: loadPipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: input } },
        { binding: 1, resource: { buffer: sink } },
        { binding: 2, resource: { buffer: iterationsBuffer } },
      ],
    });
    bindGroups.set(input, bg);
  }
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(loadPipeline);
  pass.setBindGroup(0, bg);
  pass.dispatchWorkgroups(groupsX, groupsY);
  pass.end();
  device.queue.submit([encoder.finish()]);
}
const fixedInput = device.createBuffer({ size: batchBytes, usage: GPUBufferUsage.STORAGE });
async function computeOnly(): Promise<number> {
  await device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  for (let i = 0; i < batchesPerRep; i++) computeOn(fixedInput);
  await device.queue.onSubmittedWorkDone();
  return (performance.now() - t0) / 1000;
}

// Calibrate the load so one compute step takes about as long as one upload.
const uploadOnce = (await viaUploader('write-buffer')) / batchesPerRep;
let iterations = 1;
for (;;) {
  device.queue.writeBuffer(iterationsBuffer, 0, new Uint32Array([iterations]));
  const perStep = (await computeOnly()) / batchesPerRep;
  if (perStep >= uploadOnce * 0.9 || iterations > 1 << 16) break;
  iterations = Math.ceil(iterations * Math.max(1.2, Math.min(8, uploadOnce / perStep)));
}

const results: Record<string, number[]> = { raw: [], writeBuffer: [], staging: [], uploadOnly: [], computeOnly: [], overlapped: [] };
for (let r = 0; r < reps; r++) {
  results.raw!.push(await rawWriteBuffer());
  results.writeBuffer!.push(await viaUploader('write-buffer'));
  results.staging!.push(await viaUploader('staging'));
  results.computeOnly!.push(await computeOnly());
  results.overlapped!.push(await viaUploader('write-buffer', computeOn));
}
results.uploadOnly = results.writeBuffer!;
const gbps = (s: number) => (batchBytes * batchesPerRep) / s / 1e9;
const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)])) as Record<string, number>;
const overlapRatio = m.overlapped! / Math.max(m.uploadOnly!, m.computeOnly!);
const lines = [
  `# Upload benchmark`,
  ``,
  `Command: \`npx deno run -A bench/upload.ts\` (Deno ${Deno.version.deno}; ${gpu.runtime}).`,
  `Batch ${(batchBytes / 1e6).toFixed(1)} MB, ${batchesPerRep} batches per repetition, ${reps} interleaved repetitions, medians.`,
  ``,
  ...machineLines(loadAtStart, machineLoad()),
  ``,
  `| method | GB/s | ratio to raw writeBuffer |`,
  `|---|---|---|`,
  `| raw writeBuffer (plain ArrayBuffer) | ${gbps(m.raw!).toFixed(2)} | 1.00 |`,
  `| uploader write-buffer (from shared wasm memory) | ${gbps(m.writeBuffer!).toFixed(2)} | ${(m.raw! / m.writeBuffer!).toFixed(2)} |`,
  `| uploader staging ring (mapped buffers) | ${gbps(m.staging!).toFixed(2)} | ${(m.raw! / m.staging!).toFixed(2)} |`,
  ``,
  `Overlap (compute load calibrated to ${iterations} rounds/word ≈ one upload):`,
  `upload-only ${(m.uploadOnly! * 1000).toFixed(0)} ms, compute-only ${(m.computeOnly! * 1000).toFixed(0)} ms, ` +
    `both ${(m.overlapped! * 1000).toFixed(0)} ms → ${overlapRatio.toFixed(2)} × max(upload, compute) (goal ≤ 1.05).`,
  ``,
  `On a CPU adapter (lavapipe, SwiftShader) the "GPU" runs on the same cores as the uploads, so`,
  `overlap there is bounded by the cores; the figure that matters comes from a real GPU.`,
];
console.log(lines.join('\n'));
await Deno.writeTextFile(outPath, lines.join('\n') + '\n');
for (const b of [sink, iterationsBuffer, fixedInput]) b.destroy();
pool.free(wasmPtr);
await pool.close();
gpu.close();
args.done(
  `write-buffer ${gbps(m.writeBuffer!).toFixed(2)} GB/s, staging ${gbps(m.staging!).toFixed(2)} GB/s, overlap ${overlapRatio.toFixed(2)}×`,
);
