/**
 * How fast the tiny ViT learns the project's generated dataset (shapes on textured backgrounds,
 * 500×375 JPEGs, four classes), as held-out accuracy against training steps:
 *   npx deno run -A bench/vit-learn.ts [--images 4096] [--steps 3000] [--batch 32] [--lr 2e-3]
 *     [--warmup 100] [--init fan-in|0.02] [--augment] [--config '{"patchSize":4}']
 *     [--fit cover|stretch|contain] [--source 500x375] [--out docs/vit-learn.md]
 * The images are decoded once by the wasm pool to 32×32 and normalised on the CPU, so the figures
 * measure learning and the GPU step alone (the loader is measured by bench/overlap.ts). Every 5th
 * image is held out. Matrices start at N(0, 1/fan-in) with `--init fan-in`, or N(0, 0.02²) as the
 * trainer's default init does. `--augment` shifts each training image by up to 4 pixels (edges
 * repeated) and mirrors half of them, a fresh draw every time (the shapes keep their class).
 */
import { DecodePool } from '../src/decode/index.ts';
import { acquireGpu } from '../src/gpu/index.ts';
import { cacheDir } from '../src/runtime/index.ts';
import { ensureSyntheticFolder, listImageFolder } from '../src/sources/index.ts';
import { initParams, presets, ViTTrainer, type ViTConfig } from '../src/vit/index.ts';

declare const Deno: { args: string[]; readFile(path: string): Promise<Uint8Array>; writeTextFile(path: string, text: string): Promise<void>; version: { deno: string } };

const flag = (name: string, fallback: string) => (Deno.args.includes(`--${name}`) ? Deno.args[Deno.args.indexOf(`--${name}`) + 1]! : fallback);
const images = Number(flag('images', '4096'));
const steps = Number(flag('steps', '3000'));
const batch = Number(flag('batch', '32'));
const lr = Number(flag('lr', '2e-3'));
const warmup = Number(flag('warmup', '100'));
const init = flag('init', 'fan-in');
const outPath = flag('out', 'docs/vit-learn.md');
const augment = Deno.args.includes('--augment');
const overrides = JSON.parse(flag('config', '{}')) as Partial<ViTConfig>;
const fit = flag('fit', 'cover') as 'cover' | 'stretch' | 'contain';
const [sourceWidth, sourceHeight] = flag('source', '500x375').split('x').map(Number) as [number, number];
const SIZE = overrides.imageSize ?? 32;
const PIXELS = SIZE * SIZE * 3;

const sized = sourceWidth === 500 && sourceHeight === 375 ? '' : `-${sourceWidth}x${sourceHeight}`;
const root = `${cacheDir()}/datasets/synthetic-s0-n${images}${sized}`;
await ensureSyntheticFolder(root, { count: images, seed: 0, width: sourceWidth, height: sourceHeight });
const { files, classes } = await listImageFolder(root);

// Decode everything once: u8 HWC 32×32, then f32 CHW normalised like NormalizeKernel's defaults.
const pool = await DecodePool.create({ threads: 2 });
const decoded = new Uint8Array(files.length * PIXELS);
const chunk = 8;
const target = pool.allocate(PIXELS * chunk);
for (let i = 0; i < files.length; i += chunk) {
  const part = files.slice(i, i + chunk);
  await Promise.all(part.map(async (f, j) => pool.decodeInto(await Deno.readFile(f.path), target + j * PIXELS, { width: SIZE, height: SIZE, fit })));
  decoded.set(new Uint8Array(pool.memory.buffer, target, part.length * PIXELS), i * PIXELS);
}
pool.free(target);
await pool.close();
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
function toChw(indices: readonly number[], out: Float32Array, jitter?: () => number): void {
  out.fill(0);
  indices.forEach((k, b) => {
    const dx = jitter ? Math.floor(jitter() * 9) - 4 : 0;
    const dy = jitter ? Math.floor(jitter() * 9) - 4 : 0;
    const mirror = jitter ? jitter() < 0.5 : false;
    for (let y = 0; y < SIZE; y++) {
      const sy = Math.min(SIZE - 1, Math.max(0, y + dy));
      for (let x = 0; x < SIZE; x++) {
        const sx = Math.min(SIZE - 1, Math.max(0, (mirror ? SIZE - 1 - x : x) + dx));
        const from = k * PIXELS + (sy * SIZE + sx) * 3;
        for (let c = 0; c < 3; c++) out[(b * 3 + c) * SIZE * SIZE + y * SIZE + x] = (decoded[from + c]! / 255 - MEAN[c]!) / STD[c]!;
      }
    }
  });
}

const labels = Int32Array.from(files.map((f) => f.label));
const held = [...files.keys()].filter((i) => i % 5 === 4);
const train = [...files.keys()].filter((i) => i % 5 !== 4);
const gpu = await acquireGpu();
const { device } = gpu;
const config: ViTConfig = { ...presets.tiny, ...overrides, classes: classes.length };
const params = initParams(config, 1, init === 'fan-in' ? 'fan-in' : Number(init));
const trainer = await ViTTrainer.create(device, { config, batchSize: batch, seed: 1, params, train: { lr, warmupSteps: warmup, totalSteps: steps, weightDecay: 0.05, clipNorm: 1 } });

const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
const imageBuffer = () => device.createBuffer({ size: batch * PIXELS * 4, usage });
const labelBuffer = () => device.createBuffer({ size: batch * 4, usage });
const host = new Float32Array(batch * PIXELS);
const hostLabels = new Int32Array(batch);
const heldBatches: { images: GPUBuffer; labels: GPUBuffer }[] = [];
for (let i = 0; i < held.length; i += batch) {
  const idx = held.slice(i, i + batch);
  toChw(idx, host);
  hostLabels.fill(-1);
  idx.forEach((k, b) => (hostLabels[b] = labels[k]!));
  const b = { images: imageBuffer(), labels: labelBuffer() };
  device.queue.writeBuffer(b.images, 0, host);
  device.queue.writeBuffer(b.labels, 0, hostLabels);
  heldBatches.push(b);
}
const ring = [0, 1, 2].map(() => ({ images: imageBuffer(), labels: labelBuffer() }));
let order: number[] = [];
let pos = 0;
let seed = 7;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const rows: string[] = [];
const every = Math.max(50, Math.floor(steps / 12));
const t0 = performance.now();
for (let s = 1; s <= steps; s++) {
  if (pos + batch > order.length) {
    order = train.slice();
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    pos = 0;
  }
  const idx = order.slice(pos, pos + batch);
  pos += batch;
  toChw(idx, host, augment ? random : undefined);
  idx.forEach((k, b) => (hostLabels[b] = labels[k]!));
  const slot = ring[s % ring.length]!;
  device.queue.writeBuffer(slot.images, 0, host);
  device.queue.writeBuffer(slot.labels, 0, hostLabels);
  const encoder = device.createCommandEncoder();
  trainer.step(encoder, slot.images, slot.labels);
  device.queue.submit([encoder.finish()]);
  if (s % 2 === 0) await device.queue.onSubmittedWorkDone(); // ring of 3: never overwrite a batch in use
  if (s % every === 0 || s === steps) {
    const seen = await trainer.readLoss();
    const held = await trainer.evaluate(heldBatches);
    const row = `| ${s} | ${((performance.now() - t0) / 1000).toFixed(0)} | ${seen.loss.toFixed(3)} | ${(seen.accuracy * 100).toFixed(1)}% | ${held.loss.toFixed(3)} | ${(held.accuracy * 100).toFixed(1)}% |`;
    console.log(row);
    rows.push(row);
  }
}
trainer.destroy();
for (const b of [...heldBatches, ...ring]) {
  b.images.destroy();
  b.labels.destroy();
}
gpu.close();

const text = `# How fast the tiny ViT learns the generated dataset

Command: \`npx deno run -A bench/vit-learn.ts --images ${images} --steps ${steps} --batch ${batch} --lr ${lr} --warmup ${warmup} --init ${init}${augment ? ' --augment' : ''}${Object.keys(overrides).length ? ` --config '${JSON.stringify(overrides)}'` : ''}\`
(Deno ${Deno.version.deno}, ${gpu.runtime}). ${files.length} generated ${sourceWidth}×${sourceHeight} JPEGs, ${classes.length} classes
(${classes.join(', ')}), decoded once to ${SIZE}×${SIZE}; ${train.length} train / ${held.length} held out (every 5th).
Tiny preset (${JSON.stringify(config)}), AdamW, warmup ${warmup} steps then cosine to ${steps}, weight decay 0.05,
gradient clipping at 1; ${augment ? 'augmentation: shifts of up to 4 px and mirroring; ' : ''}init: ${init === 'fan-in' ? 'matrices N(0, 1/fan-in), class token and positions N(0, 0.02²)' : `N(0, ${init}²)`}.
Training loss and accuracy are over the steps since the previous row.

| step | seconds | train loss | train accuracy | held-out loss | held-out accuracy |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
await Deno.writeTextFile(outPath, text);
console.log(`wrote ${outPath}`);
