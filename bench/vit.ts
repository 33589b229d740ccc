/**
 * ViT kernels and training throughput, side by side in one run:
 *   npx deno run -A bench/vit.ts [--reps 5] [--out docs/vit.md] [--smoke]
 * Matmul GFLOP/s of each variant (A·B, Aᵀ·B, A·Bᵀ) at the shapes the tiny preset's step uses and
 * at a square size, interleaved repetitions, median of `reps`; then training images/s of the tiny
 * preset (batch 64). Wall-clock timing over batches of dispatches (one wait per batch); the
 * step-time breakdown by kernel also uses GPU timestamps (one compute pass per dispatch) where the
 * adapter offers 'timestamp-query'. --smoke (bench/shared/args.ts): 1 repetition, batch 8 instead
 * of 64 (matmul shapes and training), a 128³ square, one dispatch per timing, 2 training steps,
 * the report under test-results/bench-smoke/.
 */
import { acquireGpu } from '../src/gpu/index.ts';
import { Kernels, record, type Dispatch } from '../src/vit/kernels.ts';
import { defaultTrain, dims, presets } from '../src/vit/config.ts';
import { optimValues } from '../src/vit/params.ts';
import { ViTTrainer } from '../src/vit/model.ts';
import { buildGraph } from '../src/vit/graph.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median } from './shared/stats.ts';

declare const Deno: {
  readTextFile(path: string): Promise<string>;
  writeTextFile(path: string, text: string): Promise<void>;
  version: { deno: string };
};

const args = benchArgs('vit', {
  reps: { type: 'number', default: 5, smoke: 1 },
  out: { type: 'string', default: 'docs/vit.md', smoke: smokeOut('vit.md') },
});
const { smoke } = args;
const { reps, out: outPath } = args.values;
const loadAtStart = machineLoad();

const gpu = await acquireGpu({ features: ['timestamp-query'] });
const { device } = gpu;
// Kernels side by side: the tiled kernel at [threads per side, outputs per thread per side], then
// the direct kernel (no workgroup memory; the default on CPU adapters).
const tiles: [number, number][] = [
  [8, 8],
  [16, 4],
  [16, 1],
];
const kernelSets = await Promise.all([
  ...tiles.map((matmulTile) => Kernels.create(device, { matmulTile })),
  Kernels.create(device, { matmul: 'direct' }),
]);
const columns = [...tiles.map(([wg, tb]) => `tiled ${wg}×${wg} threads × ${tb}×${tb}`), 'direct 8×8 threads × 4×4'];
const defaultKernels = await Kernels.create(device);
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
const buffer = (n: number) => {
  const b = device.createBuffer({ size: n * 4, usage });
  device.queue.writeBuffer(
    b,
    0,
    Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5),
  );
  return b;
};

async function time(dispatches: Dispatch[], repeat: number): Promise<number> {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  for (let i = 0; i < repeat; i++) record(pass, dispatches);
  pass.end();
  const t0 = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  return (performance.now() - t0) / 1000;
}

const tiny = presets.tiny;
const d = dims(tiny);
const R = (smoke ? 8 : 64) * d.tokens;
const shapes: [string, number, number, number][] = [
  ['tiny fc1 forward', R, d.hidden, tiny.width],
  ['tiny fc1 weight grad', tiny.width, d.hidden, R],
  ['square', ...((smoke ? [128, 128, 128] : [512, 512, 512]) as [number, number, number])],
];
const variants = [
  ['A·B', false, false],
  ['Aᵀ·B', true, false],
  ['A·Bᵀ', false, true],
] as const;
const rows: string[] = [];
const gflops: Record<string, number[]> = {};
const cases: { key: string; flops: number; repeat: number; dispatch: Dispatch }[] = [];
for (const [shapeName, M, N, K] of shapes) {
  const a = buffer(M * K);
  const b = buffer(K * N);
  const c = buffer(M * N);
  const flops = 2 * M * N * K;
  for (const [name, transA, transB] of variants) {
    kernelSets.forEach((k, t) => {
      cases.push({
        key: `${shapeName}|${name}|${t}`,
        flops,
        repeat: smoke ? 1 : Math.max(1, Math.round(2e8 / flops)),
        dispatch: k.matmul({ a, b, c, M, N, K, transA, transB }),
      });
    });
  }
}
for (const cs of cases) await time([cs.dispatch], 1); // warm-up: shader compilation
for (let r = 0; r < reps; r++) {
  for (const cs of cases) {
    const s = await time([cs.dispatch], cs.repeat);
    (gflops[cs.key] ??= []).push((cs.flops * cs.repeat) / s / 1e9);
  }
}

// Training throughput of the tiny preset (batch 64): forward + backward + AdamW per step.
const B = smoke ? 8 : 64;
const trainer = await ViTTrainer.create(device, { config: tiny, batchSize: B });
const images = buffer(B * tiny.channels * tiny.imageSize ** 2);
const labels = device.createBuffer({ size: B * 4, usage });
device.queue.writeBuffer(
  labels,
  0,
  Int32Array.from({ length: B }, (_, i) => i % tiny.classes),
);
const stepTimes: number[] = [];
const stepsPerRep = smoke ? 2 : 10;
const runSteps = async (n: number) => {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const encoder = device.createCommandEncoder();
    trainer.step(encoder, images, labels);
    device.queue.submit([encoder.finish()]);
  }
  await device.queue.onSubmittedWorkDone();
  return (performance.now() - t0) / 1000;
};
await runSteps(smoke ? 1 : 2);
for (let r = 0; r < reps; r++) stepTimes.push((await runSteps(stepsPerRep)) / stepsPerRep);
const stepSeconds = median(stepTimes);
// FLOPs of one step, counted from the matmuls (forward 1×, backward 2×); other kernels are small.
const perTokenBlock = 2 * (3 * tiny.width ** 2 + tiny.width ** 2 + 2 * tiny.width * d.hidden) + 4 * d.tokens * tiny.width;
const stepFlops = 3 * B * (d.tokens * perTokenBlock * tiny.depth + d.patches * 2 * d.patchDim * tiny.width);
const report = (await trainer.readLoss()).loss;
trainer.destroy();

// Step-time breakdown by kernel: the step's dispatches (same graph as the trainer) timed one at a
// time, each repeated 5× in one submit, median of `reps`, summed per kernel. Wall clock, so each
// figure includes one submit + wait of overhead divided by 5.
const graph = buildGraph(device, defaultKernels, tiny, B, optimValues(0, 0, defaultTrain));
const perKernel = new Map<string, number[]>();
for (const dispatch of [...graph.forward, ...graph.backward]) {
  await time([dispatch], 1);
  const ts: number[] = [];
  const repeat = smoke ? 1 : 5;
  for (let r = 0; r < reps; r++) ts.push((await time([dispatch], repeat)) / repeat);
  const list = perKernel.get(dispatch.label) ?? [];
  list.push(median(ts));
  perKernel.set(dispatch.label, list);
}
const breakdownTotal = [...perKernel.values()].flat().reduce((a, b) => a + b, 0);
const gpuPerKernel = device.features.has('timestamp-query') ? await timestamped([...graph.forward, ...graph.backward]) : undefined;
const gpuTotal = gpuPerKernel ? [...gpuPerKernel.values()].reduce((a, b) => a + b, 0) : NaN;
const breakdown = [...perKernel]
  .map(([name, ts]) => [name, ts.length, ts.reduce((a, b) => a + b, 0)] as const)
  .sort((a, b) => b[2] - a[2])
  .map(([name, n, t]) => {
    const g = gpuPerKernel?.get(name);
    const gpuCells = g === undefined ? '— | —' : `${(g * 1000).toFixed(1)} | ${((100 * g) / gpuTotal).toFixed(0)}%`;
    return `| ${name} | ${n} | ${(t * 1000).toFixed(1)} | ${((100 * t) / breakdownTotal).toFixed(0)}% | ${gpuCells} |`;
  });
for (const b of graph.buffers) b.destroy();

/**
 * The step's dispatches, each in its own compute pass with GPU timestamps at its start and end, in
 * one submit; per kernel, the median over `reps` of the summed pass durations (seconds).
 */
async function timestamped(dispatches: Dispatch[]): Promise<Map<string, number>> {
  const n = dispatches.length;
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * n });
  const resolved = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const samples = new Map<string, number[]>();
  for (let r = 0; r < reps + 1; r++) {
    const encoder = device.createCommandEncoder();
    dispatches.forEach((dispatch, i) => {
      const pass = encoder.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
      });
      record(pass, [dispatch]);
      pass.end();
    });
    encoder.resolveQuerySet(querySet, 0, 2 * n, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, readback, 0, 16 * n);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const ticks = new BigInt64Array(readback.getMappedRange().slice(0));
    readback.unmap();
    if (r === 0) continue; // warm-up
    const sums = new Map<string, number>();
    dispatches.forEach((dispatch, i) => {
      const ns = Number(ticks[2 * i + 1]! - ticks[2 * i]!);
      sums.set(dispatch.label, (sums.get(dispatch.label) ?? 0) + Math.max(0, ns) / 1e9);
    });
    for (const [label, t] of sums) samples.set(label, [...(samples.get(label) ?? []), t]);
  }
  querySet.destroy();
  resolved.destroy();
  readback.destroy();
  return new Map([...samples].map(([label, ts]) => [label, median(ts)]));
}

rows.push(
  `| shape (M×N×K) | variant | ${columns.join(' | ')} | register blocking: tiled 8×8 ÷ tiled 1×1 | direct ÷ tiled 8×8 |`,
  `|---|---|${columns.map(() => '---|').join('')}---|---|`,
);
for (const [shapeName, M, N, K] of shapes) {
  for (const [name] of variants) {
    const g = columns.map((_, t) => median(gflops[`${shapeName}|${name}|${t}`]!));
    rows.push(
      `| ${shapeName} ${M}×${N}×${K} | ${name} | ${g.map((x) => x.toFixed(2)).join(' | ')} | ${(g[0]! / g[tiles.length - 1]!).toFixed(2)}× | ${(g.at(-1)! / g[0]!).toFixed(2)}× |`,
    );
  }
}
for (const k of [...kernelSets, defaultKernels]) k.destroy();
const text = `## Benchmark

Command: \`npx deno run -A bench/vit.ts --reps ${reps}\` (Deno ${Deno.version.deno}), adapter: ${gpu.runtime}.
Median of ${reps} interleaved repetitions; each timing submits enough dispatches for ~0.2 GFLOP and
waits once. Figures are GFLOP/s; quote the ratios (the machine is shared and noisy).

${machineLines(loadAtStart, machineLoad()).join('\n')}

## Matmul: kernels side by side

The tiled kernel stages 16-deep K slices of A and B in workgroup memory; its first configuration
(64×64 tile, 8×8 outputs per thread) is the trainer's choice on GPUs, and its third is the same
tiling without register blocking. The direct kernel keeps a 4×4 block per thread in vec4
registers and reads storage directly, with no workgroup memory or barriers; the trainer uses it
on CPU adapters (this run: ${defaultKernels.matmulKernel}).

${rows.join('\n')}

## Training, tiny preset (${JSON.stringify(tiny)}), batch ${B}, ${defaultKernels.matmulKernel} matmul

- step (forward + backward + AdamW, one encoder): ${(stepSeconds * 1000).toFixed(1)} ms median
- ${(B / stepSeconds).toFixed(0)} images/s; ≈ ${(stepFlops / stepSeconds / 1e9).toFixed(2)} GFLOP/s of matmul work (${(stepFlops / 1e9).toFixed(2)} GFLOP per step)
- loss read back once at the end (finite: ${Number.isFinite(report)})

Step-time breakdown by kernel ('mm.tn' = Aᵀ·B, 'mm.nt' = A·Bᵀ), two ways: wall clock with each
dispatch alone (sum ${(breakdownTotal * 1000).toFixed(0)} ms), and ${gpuPerKernel ? `GPU timestamps with one compute pass per dispatch in one submit (sum ${(gpuTotal * 1000).toFixed(0)} ms)` : "GPU timestamps (not offered by this adapter: '—')"};
the recorded step takes ${(stepSeconds * 1000).toFixed(0)} ms:

| kernel | dispatches per step | wall ms per step | wall share | GPU ms per step | GPU share |
|---|---|---|---|---|---|
${breakdown.join('\n')}
`;
console.log(text);
// The figures replace everything after the marker; the prose above it is kept.
const MARKER = '<!-- bench/vit.ts writes below this line -->';
const previous = await Deno.readTextFile(outPath).catch(() => `# ViT in WGSL\n\n${MARKER}\n`);
const head = previous.includes(MARKER) ? previous.slice(0, previous.indexOf(MARKER)) : `${previous.trimEnd()}\n\n`;
await Deno.writeTextFile(outPath, `${head}${MARKER}\n\n${text}`);
gpu.close();
args.done(`${rows.length - 2} matmul rows, ${breakdown.length} kernels; training ${(B / stepSeconds).toFixed(0)} images/s at batch ${B}`);
