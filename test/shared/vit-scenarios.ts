// Whole-model ViT scenarios, runtime-neutral (each throws on failure): a GPU training step against
// the CPU reference, checkpoint round trip, and learning on synthetic separable data.
import { rng, type TrainConfig, type ViTConfig } from '../../src/vit/config.ts';
import { ViTTrainer, type Batch } from '../../src/vit/model.ts';
import { adamwStep, ReferenceViT } from '../../src/vit/reference.ts';
import { initParams } from '../../src/vit/config.ts';
import { check } from './assert.ts';
import { close, random, upload } from './vit-helpers.ts';

const stepConfig: ViTConfig = { imageSize: 16, patchSize: 4, channels: 3, width: 32, depth: 2, heads: 4, mlpRatio: 2, classes: 5 };
/** The same with timm's exact GELU and LayerNorm ε, the form loaded timm weights train in. */
export const timmStepConfig: ViTConfig = { ...stepConfig, gelu: 'erf', layerNormEps: 1e-6 };

/** Two full training steps on the GPU vs the f64 reference: loss, every gradient tensor, every update. */
export async function trainingStepMatchesCpu(device: GPUDevice, c: ViTConfig = stepConfig): Promise<string[]> {
  const log: string[] = [];
  const B = 4;
  const train: Partial<TrainConfig> = { lr: 1e-3, warmupSteps: 1, totalSteps: 10, weightDecay: 0.05, clipNorm: 0.5 };
  // Larger-than-default init so attention is far from uniform and every gradient is sizeable.
  const init = initParams(c, 3, 0.2);
  const trainer = await ViTTrainer.create(device, { config: c, batchSize: B, train, params: init });
  const ref = new ReferenceViT(c);
  const params = Float64Array.from(init);
  const state = { m: new Float64Array(params.length), v: new Float64Array(params.length), step: 0 };
  try {
    for (let step = 1; step <= 2; step++) {
      const images = random(B * c.channels * c.imageSize ** 2, 100 + step, 2);
      const labels = step === 1 ? [1, 4, -1, 2] : [0, 3, 3, 1]; // -1: a padding row
      const encoder = device.createCommandEncoder();
      trainer.step(encoder, upload(device, images), upload(device, Int32Array.from(labels)));
      device.queue.submit([encoder.finish()]);
      const report = await trainer.readLoss();
      const fwd = ref.forward(params, images, labels, B);
      const grads = ref.backward(params, fwd, B);
      close(`step ${step} loss`, [(report.loss * report.samples) / B], [fwd.loss], 1e-3, log);
      const got = await trainer.readGrads();
      for (const t of ref.layout.tensors) close(`step ${step} grad ${t.name}`, ref.view(got, t.name), ref.view(grads, t.name), 1e-3, log);
      const before = Float64Array.from(params);
      // AdamW is checked on the GPU's own gradients (themselves checked just above at 1e-3): Adam
      // divides by √v + eps, so a gradient far below the 1e-3 bound (the key bias's is exactly 0:
      // softmax ignores a per-row constant) still turns its f32 noise into a whole ±lr step.
      const lr = adamwStep(params, Float64Array.from(got), state, trainer.train, ref.layout.decayEnd);
      // The schedule's cosine runs in WGSL, whose cos() is only specified to 2^-11 absolute error
      // (SwiftShader is 5e-5 off here), so the learning rate gets the 1e-3 bound too.
      close(`step ${step} lr`, [report.lr], [lr], 1e-3, log);
      close(`step ${step} grad norm`, [report.gradNorm], [Math.hypot(...grads)], 1e-3, log);
      const after = await trainer.readParams();
      for (const t of ref.layout.tensors) {
        const g = ref.view(grads, t.name);
        const maxG = g.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
        const gotG = ref.view(got, t.name);
        const zeros = Array.from(g.keys()).filter((i) => Math.abs(g[i]!) <= 1e-6 * maxG);
        check(
          zeros.every((i) => Math.abs(gotG[i]!) <= 1e-4 * maxG),
          `${t.name}: a zero gradient is not ~0 on the GPU`,
        );
        const want = ref.view(params, t.name).map((v, i) => v - before[t.offset + i]!);
        const have = ref.view(after, t.name).map((v, i) => v - before[t.offset + i]!);
        close(`step ${step} update ${t.name}`, have, want, 1e-3, log);
      }
      params.set(after); // continue from the GPU's f32 parameters so errors do not compound
    }
  } finally {
    trainer.destroy();
  }
  return log;
}

/** A checkpoint restores weights, AdamW moments and step: the next steps match bit for bit. */
export async function checkpointRoundTrip(device: GPUDevice): Promise<void> {
  const c = stepConfig;
  const B = 4;
  const images = upload(device, random(B * c.channels * c.imageSize ** 2, 7));
  const labels = upload(device, Int32Array.of(0, 1, 2, 3));
  const a = await ViTTrainer.create(device, { config: c, batchSize: B, seed: 1 });
  const b = await ViTTrainer.create(device, { config: c, batchSize: B, seed: 2 });
  try {
    const steps = (t: ViTTrainer, n: number) => {
      const encoder = device.createCommandEncoder();
      for (let i = 0; i < n; i++) t.step(encoder, images, labels);
      device.queue.submit([encoder.finish()]);
    };
    steps(a, 3);
    b.loadCheckpoint(await a.saveCheckpoint());
    steps(a, 2);
    steps(b, 2);
    const [pa, pb, ra, rb] = [await a.readParams(), await b.readParams(), await a.readLoss(), await b.readLoss()];
    check(ra.step === 5 && rb.step === 5, `steps after restore: ${ra.step}, ${rb.step}`);
    check(
      pa.every((v, i) => v === pb[i]),
      'parameters differ after restoring a checkpoint and taking the same steps',
    );
    let threw = false;
    try {
      b.loadCheckpoint(new Uint8Array(64));
    } catch {
      threw = true;
    }
    check(threw, 'a garbage checkpoint was accepted');
  } finally {
    a.destroy();
    b.destroy();
  }
}

/** Synthetic separable data: per-class random block templates on noise, NCHW f32. */
export function syntheticDataset(
  c: ViTConfig,
  n: number,
  seed: number,
  noise = 0.7,
): { images: Float32Array[]; labels: Int32Array[]; B: number } & { all: Int32Array } {
  const templates = Array.from({ length: c.classes }, (_, k) => {
    const next = rng(1000 + k);
    return Float32Array.from({ length: c.channels * 64 }, () => (next() < 0.5 ? -1 : 1)); // 8×8 blocks per channel
  });
  const next = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(Math.max(next(), 1e-12))) * Math.cos(2 * Math.PI * next());
  const S = c.imageSize;
  const all = Int32Array.from({ length: n }, () => Math.floor(next() * c.classes));
  const B = 64;
  const images: Float32Array[] = [];
  const labels: Int32Array[] = [];
  for (let start = 0; start + B <= n; start += B) {
    const img = new Float32Array(B * c.channels * S * S);
    for (let b = 0; b < B; b++) {
      const t = templates[all[start + b]!]!;
      for (let ch = 0; ch < c.channels; ch++)
        for (let y = 0; y < S; y++)
          for (let x = 0; x < S; x++)
            img[((b * c.channels + ch) * S + y) * S + x] =
              t[ch * 64 + Math.floor((y * 8) / S) * 8 + Math.floor((x * 8) / S)]! + noise * gauss();
    }
    images.push(img);
    labels.push(all.slice(start, start + B));
  }
  return { images, labels, B, all };
}

export interface LearningResult {
  losses: number[];
  valAccuracy: number;
  seconds: number;
  imagesPerSecond: number;
}

/** Trains `config` for `steps` on the synthetic set (optionally with shuffled labels); validates on held-out data. */
export async function trainSynthetic(
  device: GPUDevice,
  config: ViTConfig,
  steps: number,
  shuffleLabels: boolean,
  reportEvery = 10,
  params?: Float32Array<ArrayBuffer>,
): Promise<LearningResult> {
  const trainSet = syntheticDataset(config, 2048, 1);
  const valSet = syntheticDataset(config, 512, 2);
  const B = trainSet.B;
  if (shuffleLabels) {
    const next = rng(99);
    for (const l of trainSet.labels) for (let i = 0; i < l.length; i++) l[i] = Math.floor(next() * config.classes);
  }
  const toGpu = (s: typeof trainSet): Batch[] =>
    s.images.map((img, i) => ({ images: upload(device, img), labels: upload(device, s.labels[i]!) }));
  const batches = toGpu(trainSet);
  const val = toGpu(valSet);
  const trainer = await ViTTrainer.create(device, {
    config,
    batchSize: B,
    seed: 1,
    ...(params ? { params } : {}),
    train: { lr: 2e-3, warmupSteps: 10, totalSteps: steps, weightDecay: 0.05, clipNorm: 1 },
  });
  try {
    const pending: Promise<{ loss: number }>[] = [];
    const t0 = performance.now();
    for (let s = 0; s < steps; s++) {
      const batch = batches[s % batches.length]!;
      const encoder = device.createCommandEncoder();
      trainer.step(encoder, batch.images, batch.labels);
      device.queue.submit([encoder.finish()]);
      // Ask for the loss after the first step (the untrained model's, near ln(classes)) and then
      // every N steps, without awaiting it: the queue keeps its work.
      if (s === 0 || (s + 1) % reportEvery === 0) pending.push(trainer.readLoss());
      // Keep at most a few steps in flight so the wall clock measures the GPU, not queue growth.
      if (s % 8 === 7) await device.queue.onSubmittedWorkDone();
    }
    const losses = (await Promise.all(pending)).map((r) => r.loss);
    const seconds = (performance.now() - t0) / 1000;
    const { accuracy } = await trainer.evaluate(val);
    return { losses, valAccuracy: accuracy, seconds, imagesPerSecond: (steps * B) / seconds };
  } finally {
    trainer.destroy();
    for (const b of [...batches, ...val]) {
      b.images.destroy();
      b.labels.destroy();
    }
  }
}
