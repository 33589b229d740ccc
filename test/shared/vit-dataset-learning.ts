// The tiny ViT learning the project's generated dataset, runtime-neutral: every image decoded
// once by the wasm pool (u8 HWC), normalised on the CPU per batch, trained on the GPU with a
// seeded order, held-out accuracy (every 5th image) measured along the way. Used by
// bench/vit-learn.ts (the curve and the accuracy figure, written to docs/bench/vit-learn.md).
import { DecodePool } from '../../src/decode/index.ts';
import { cacheDir, readFile } from '../../src/runtime/index.ts';
import { ensureSyntheticFolder, listImageFolder } from '../../src/sources/index.ts';
import { initParams, presets, ViTTrainer, type ViTConfig } from '../../src/vit/index.ts';

export interface DatasetLearningOptions {
  images: number;
  steps: number;
  batch?: number;
  lr?: number;
  warmup?: number;
  init?: 'fan-in' | number;
  /** Shifts of up to 4 px and mirroring, drawn afresh every time an image is used. */
  augment?: boolean;
  config?: Partial<ViTConfig>;
  fit?: 'cover' | 'stretch' | 'contain';
  /** Generated image size (default 500×375); other sizes are cached in their own folder. */
  source?: [number, number];
  /** Evaluate the held-out images every this many steps (and after the last). */
  evalEvery: number;
  onRow?: (row: LearningRow) => void;
}

export interface LearningRow {
  step: number;
  seconds: number;
  /** Over the steps since the previous row. */
  trainLoss: number;
  trainAccuracy: number;
  heldLoss: number;
  heldAccuracy: number;
}

export interface DatasetLearningResult {
  rows: LearningRow[];
  config: ViTConfig;
  classes: string[];
  train: number;
  held: number;
}

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];

export async function learnGeneratedDataset(device: GPUDevice, o: DatasetLearningOptions): Promise<DatasetLearningResult> {
  const [width, height] = o.source ?? [500, 375];
  const B = o.batch ?? 32;
  const size = o.config?.imageSize ?? 32;
  const pixels = size * size * 3;
  const sized = width === 500 && height === 375 ? '' : `-${width}x${height}`;
  const root = `${cacheDir()}/datasets/synthetic-s0-n${o.images}${sized}`;
  await ensureSyntheticFolder(root, { count: o.images, seed: 0, width, height });
  const { files, classes } = await listImageFolder(root);

  const pool = await DecodePool.create({ threads: 2 });
  const decoded = new Uint8Array(files.length * pixels);
  const chunk = 8;
  const target = pool.malloc(pixels * chunk);
  try {
    for (let i = 0; i < files.length; i += chunk) {
      const part = files.slice(i, i + chunk);
      await Promise.all(
        part.map(async (f, j) =>
          pool.decodeInto(await readFile(f.path), target + j * pixels, { width: size, height: size, fit: o.fit ?? 'cover' }),
        ),
      );
      decoded.set(new Uint8Array(pool.memory.buffer, target, part.length * pixels), i * pixels);
    }
  } finally {
    pool.free(target);
    await pool.close();
  }
  const toChw = (indices: readonly number[], out: Float32Array, jitter?: () => number) => {
    out.fill(0);
    indices.forEach((k, b) => {
      const dx = jitter ? Math.floor(jitter() * 9) - 4 : 0;
      const dy = jitter ? Math.floor(jitter() * 9) - 4 : 0;
      const mirror = jitter ? jitter() < 0.5 : false;
      for (let y = 0; y < size; y++) {
        const sy = Math.min(size - 1, Math.max(0, y + dy));
        for (let x = 0; x < size; x++) {
          const sx = Math.min(size - 1, Math.max(0, (mirror ? size - 1 - x : x) + dx));
          const from = k * pixels + (sy * size + sx) * 3;
          for (let c = 0; c < 3; c++) out[(b * 3 + c) * size * size + y * size + x] = (decoded[from + c]! / 255 - MEAN[c]!) / STD[c]!;
        }
      }
    });
  };

  const labels = Int32Array.from(files.map((f) => f.label));
  const held = [...files.keys()].filter((i) => i % 5 === 4);
  const train = [...files.keys()].filter((i) => i % 5 !== 4);
  const config: ViTConfig = { ...presets.tiny, ...o.config, classes: classes.length };
  const params = initParams(config, 1, o.init ?? 'fan-in');
  const trainer = await ViTTrainer.create(device, {
    config,
    batchSize: B,
    seed: 1,
    params,
    train: { lr: o.lr ?? 2e-3, warmupSteps: o.warmup ?? 100, totalSteps: o.steps, weightDecay: 0.05, clipNorm: 1 },
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const pair = () => ({
    images: device.createBuffer({ size: B * pixels * 4, usage }),
    labels: device.createBuffer({ size: B * 4, usage }),
  });
  const host = new Float32Array(B * pixels);
  const hostLabels = new Int32Array(B);
  const heldBatches: ReturnType<typeof pair>[] = [];
  const ring = [pair(), pair(), pair()];
  const rows: LearningRow[] = [];
  try {
    for (let i = 0; i < held.length; i += B) {
      const idx = held.slice(i, i + B);
      toChw(idx, host);
      hostLabels.fill(-1);
      idx.forEach((k, b) => {
        hostLabels[b] = labels[k]!;
      });
      const b = pair();
      device.queue.writeBuffer(b.images, 0, host);
      device.queue.writeBuffer(b.labels, 0, hostLabels);
      heldBatches.push(b);
    }
    let order: number[] = [];
    let pos = 0;
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const t0 = performance.now();
    for (let s = 1; s <= o.steps; s++) {
      if (pos + B > order.length) {
        order = train.slice();
        for (let i = order.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        pos = 0;
      }
      const idx = order.slice(pos, pos + B);
      pos += B;
      toChw(idx, host, o.augment ? random : undefined);
      idx.forEach((k, b) => {
        hostLabels[b] = labels[k]!;
      });
      const slot = ring[s % ring.length]!;
      device.queue.writeBuffer(slot.images, 0, host);
      device.queue.writeBuffer(slot.labels, 0, hostLabels);
      const encoder = device.createCommandEncoder();
      trainer.step(encoder, slot.images, slot.labels);
      device.queue.submit([encoder.finish()]);
      if (s % 2 === 0) await device.queue.onSubmittedWorkDone(); // ring of 3: never overwrite a batch in use
      if (s % o.evalEvery === 0 || s === o.steps) {
        const seen = await trainer.readLoss();
        const h = await trainer.evaluate(heldBatches);
        const row = {
          step: s,
          seconds: (performance.now() - t0) / 1000,
          trainLoss: seen.loss,
          trainAccuracy: seen.accuracy,
          heldLoss: h.loss,
          heldAccuracy: h.accuracy,
        };
        rows.push(row);
        o.onRow?.(row);
      }
    }
  } finally {
    trainer.destroy();
    for (const b of [...heldBatches, ...ring]) {
      b.images.destroy();
      b.labels.destroy();
    }
  }
  return { rows, config, classes, train: train.length, held: held.length };
}
