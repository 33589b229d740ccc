// The ONNX Runtime Web feed bench page: one model, one WebGPU device (ONNX Runtime's own, adopted
// by Tandem), the same JPEGs, fed two ways, one timed pass per call from the orchestrator
// (bench/onnx-feed.ts) through Playwright:
//   - "ort": ONNX Runtime Web's own input path as its docs show it for images: createImageBitmap →
//     canvas 2D drawImage at the model's input size → getImageData → a hand-written normalisation
//     loop into a Float32Array (NCHW) → new ort.Tensor → session.run (on the WebGPU execution
//     provider ONNX Runtime uploads the input);
//   - "tandem": Tandem's loader: wasm pthreads decode into batch buffers → upload ring → WGSL
//     normalise → Tensor.fromGpuBuffer (tandem/onnx's OnnxFeeder), on the same device; on the wasm
//     execution provider, OnnxFeeder's CPU tensors.
// Each pass runs the model on every batch (outputs kept where the provider made them, not read)
// and ends when the GPU has finished its last batch. GPU→CPU readbacks are counted. check()
// compares the two paths' outputs on the first batch.
import * as ort from 'onnxruntime-web';
import { DecodePool, ImageBatcher } from '../../src/decode/index.ts';
import { OnnxFeeder } from '../../src/onnx/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { embeddingModel } from '../../test/shared/onnx-model.ts';
import { countReadbacks } from '../../test/shared/readbacks.ts';

/** 'model': the session alone, on one input made beforehand and reused (the ceiling of both paths). */
export type FeedPath = 'ort' | 'tandem' | 'model';
export type Provider = 'webgpu' | 'wasm';
export interface FeedSample {
  images: number;
  seconds: number;
  readbacks: number;
  batches: number;
}
/** The first batch through both paths, outputs compared (max absolute difference over embedding and logits). */
export interface FeedCheck {
  images: number;
  /** ONNX Runtime's path (its normalisation loop, ort.Tensor) on Tandem's decoded pixels, against Tandem's feed. */
  samePixels: number;
  /** ONNX Runtime's whole path (the canvas's own decode and resize) against Tandem's feed. */
  canvas: number;
  /** Canvas pixels against Tandem's pixels, 0..255: mean and max absolute difference. */
  pixelMean: number;
  pixelMax: number;
  /** The smallest mean absolute difference between a canvas image and Tandem's pixels of another image. */
  otherImages: number;
  /** Images whose canvas pixels are nearer to Tandem's pixels of the same image than to any other image's. */
  matched: number;
  /** The largest absolute output value (the scale the differences compare with). */
  outputMax: number;
}
export interface FeedPageApi {
  load(
    count: number,
    size: number,
    batch: number,
    threads: number,
  ): Promise<{ crossOriginIsolated: boolean; cores: number; adapter: string; ort: string; wasmThreads: number }>;
  pass(path: FeedPath, provider: Provider): Promise<FeedSample>;
  check(provider: Provider): Promise<FeedCheck>;
}
declare global {
  interface Window {
    tandemOnnxFeedBench?: FeedPageApi;
  }
}

const CLASSES = 4;
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
let blobs: Blob[] = [];
let items: { bytes: Uint8Array; label: number; key: string }[] = [];
let size = 32;
let batchSize = 32;
let device: GPUDevice;
let pool: DecodePool;
const sessions = new Map<Provider, ort.InferenceSession>();
const feeders = new Map<Provider, OnnxFeeder>();
const fixedInputs = new Map<Provider, ort.Tensor>();
let ctx: CanvasRenderingContext2D;

/** The hand-written loop of ONNX Runtime's image examples: RGBA bytes → (x/255 − mean)/std, planar RGB. */
function fillNchw(rgba: Uint8ClampedArray | Uint8Array, out: Float32Array, image: number): void {
  const hw = size * size;
  const base = image * 3 * hw;
  for (let p = 0; p < hw; p++) {
    for (let c = 0; c < 3; c++) out[base + c * hw + p] = (rgba[p * 4 + c]! / 255 - MEAN[c]!) / STD[c]!;
  }
}

/** ONNX Runtime's own path for images [start, end): decode, draw at the input size, read, normalise. */
async function canvasInput(indices: readonly number[]): Promise<{ input: ort.Tensor; rgba: Uint8ClampedArray[] }> {
  // The browser decodes the batch's images in parallel, off the main thread.
  const bitmaps = await Promise.all(indices.map((i) => createImageBitmap(blobs[i]!)));
  const data = new Float32Array(indices.length * 3 * size * size);
  const rgba: Uint8ClampedArray[] = [];
  for (const [i, bitmap] of bitmaps.entries()) {
    ctx.drawImage(bitmap, 0, 0, size, size);
    bitmap.close();
    const pixels = ctx.getImageData(0, 0, size, size).data;
    fillNchw(pixels, data, i);
    rgba.push(pixels);
  }
  return { input: new ort.Tensor('float32', data, [indices.length, 3, size, size]), rgba };
}

const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

function disposeAll(outputs: ort.InferenceSession.OnnxValueMapType): void {
  for (const t of Object.values(outputs)) t.dispose();
}

async function modelPass(provider: Provider): Promise<number> {
  const session = sessions.get(provider)!;
  const input = fixedInputs.get(provider)!;
  const batches = Math.ceil(items.length / batchSize);
  for (let b = 0; b < batches; b++) disposeAll(await session.run({ pixels: input }));
  return batches;
}

async function ortPass(provider: Provider): Promise<number> {
  const session = sessions.get(provider)!;
  const starts = range(0, Math.ceil(items.length / batchSize)).map((b) => b * batchSize);
  const prepare = (start: number) => canvasInput(range(start, Math.min(items.length, start + batchSize)));
  // One batch prepared ahead while the model runs (the loader's prefetch, in the simplest form).
  let next: ReturnType<typeof prepare> | undefined = prepare(starts[0]!);
  let batches = 0;
  for (let b = 0; next; b++) {
    const { input } = await next;
    next = b + 1 < starts.length ? prepare(starts[b + 1]!) : undefined;
    disposeAll(await session.run({ pixels: input }));
    input.dispose();
    batches++;
  }
  return batches;
}

function loader(source: typeof items) {
  const batcher = new ImageBatcher(pool, { batchSize, height: size, width: size, decode: { fit: 'stretch' } });
  const pipeline = new PipelineBuilder()
    .addSource(source)
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();
  return { batcher, pipeline };
}

async function tandemPass(provider: Provider): Promise<number> {
  const session = sessions.get(provider)!;
  const feeder = feeders.get(provider)!;
  const { batcher, pipeline } = loader(items);
  let batches = 0;
  for await (const batch of pipeline) {
    const fed = await feeder.tensors(batch); // the batch goes back to the batcher
    disposeAll(await session.run({ pixels: fed.input }));
    fed.dispose(); // after session.run resolves: the buffer then takes the next batch
    batches++;
  }
  await batcher.close();
  return batches;
}

async function outputs(session: ort.InferenceSession, input: ort.Tensor): Promise<Float32Array> {
  const r = await session.run({ pixels: input });
  const embedding = (await r.embedding!.getData()) as Float32Array;
  const logits = (await r.logits!.getData()) as Float32Array;
  disposeAll(r);
  return Float32Array.from([...embedding, ...logits]);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return Number.isNaN(worst) ? Infinity : worst;
}

const api: FeedPageApi = {
  async load(count, imageSize, batch, threads) {
    size = imageSize;
    batchSize = batch;
    const fetched = await Promise.all(
      Array.from({ length: count }, async (_, i) => new Uint8Array(await (await fetch(`/bench-assets/image/${i}`)).arrayBuffer())),
    );
    items = fetched.map((bytes, i) => ({ bytes, label: i % CLASSES, key: String(i) }));
    blobs = fetched.map((bytes) => new Blob([bytes], { type: 'image/jpeg' }));
    const model = embeddingModel(1, size, size, CLASSES);
    // Outputs stay on the GPU (not read back): the pass measures the input path and the model.
    sessions.set(
      'webgpu',
      await ort.InferenceSession.create(model, { executionProviders: ['webgpu'], preferredOutputLocation: 'gpu-buffer' }),
    );
    sessions.set('wasm', await ort.InferenceSession.create(model, { executionProviders: ['wasm'] }));
    device = await ort.env.webgpu.device;
    pool = await DecodePool.create({ threads });
    const shape = { batchSize, height: size, width: size, mean: MEAN, std: STD };
    feeders.set('webgpu', await OnnxFeeder.create(ort, { ...shape, location: 'webgpu' }));
    feeders.set('wasm', await OnnxFeeder.create(ort, shape));
    const values = Float32Array.from({ length: batchSize * 3 * size * size }, (_, i) => ((i * 7919) % 255) / 127 - 1);
    const dims = [batchSize, 3, size, size];
    const buffer = device.createBuffer({
      size: values.byteLength,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(buffer, 0, values);
    fixedInputs.set('webgpu', ort.Tensor.fromGpuBuffer(buffer, { dataType: 'float32', dims }));
    fixedInputs.set('wasm', new ort.Tensor('float32', values, dims));
    const canvas = document.createElement('canvas');
    canvas.width = size;
    canvas.height = size;
    ctx = canvas.getContext('2d', { willReadFrequently: true })!;
    const info = device.adapterInfo;
    return {
      crossOriginIsolated,
      cores: navigator.hardwareConcurrency,
      adapter: [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' / '),
      ort: ort.env.versions.web ?? '?',
      wasmThreads: ort.env.wasm.numThreads ?? 0,
    };
  },

  async pass(path, provider) {
    const started = performance.now();
    const { result: batches, readbacks } = await countReadbacks(
      () => (path === 'ort' ? ortPass(provider) : path === 'tandem' ? tandemPass(provider) : modelPass(provider)),
      { ort },
    );
    // Ends when the GPU has run everything (onSubmittedWorkDone, not a readback).
    await device.queue.onSubmittedWorkDone();
    const seconds = (performance.now() - started) / 1000;
    return { images: items.length, seconds, readbacks, batches };
  },

  async check(provider) {
    const session = sessions.get(provider)!;
    const feeder = feeders.get(provider)!;
    // Tandem's first batch: its decoded pixels kept, then fed as the timed pass feeds it.
    const { batcher, pipeline } = loader(items.slice(0, batchSize));
    let first: { keys: readonly string[]; pixels: Uint8Array } | undefined;
    let tandem: Float32Array | undefined;
    for await (const batch of pipeline) {
      if (first) {
        batch.release();
        continue;
      }
      first = { keys: [...batch.keys!], pixels: batch.data.slice(0, batch.count * size * size * 3) };
      const fed = await feeder.tensors(batch);
      tandem = await outputs(session, fed.input);
      fed.dispose();
    }
    await batcher.close();
    const { keys, pixels } = first!;
    const indices = keys.map(Number);
    const n = indices.length;
    const hw = size * size;
    // ONNX Runtime's own path on exactly Tandem's pixels (RGB → RGBA, alpha 255).
    const data = new Float32Array(n * 3 * hw);
    for (let i = 0; i < n; i++) {
      const rgba = new Uint8Array(hw * 4).fill(255);
      for (let p = 0; p < hw; p++) for (let c = 0; c < 3; c++) rgba[p * 4 + c] = pixels[(i * hw + p) * 3 + c]!;
      fillNchw(rgba, data, i);
    }
    const samePixels = await outputs(session, new ort.Tensor('float32', data, [n, 3, size, size]));
    // ONNX Runtime's whole path, the canvas decoding and resizing the same images in the same order.
    const canvas = await canvasInput(indices);
    const canvasOut = await outputs(session, canvas.input);
    // Canvas pixels against Tandem's: mean absolute difference per image pair (0..255). Each image
    // must be nearer to Tandem's pixels for the same image than to any other image's.
    const apart = (i: number, j: number) => {
      let sum = 0;
      for (let p = 0; p < hw; p++) for (let c = 0; c < 3; c++) sum += Math.abs(canvas.rgba[i]![p * 4 + c]! - pixels[(j * hw + p) * 3 + c]!);
      return sum / (hw * 3);
    };
    let pixelSum = 0;
    let pixelMax = 0;
    let otherImages = Infinity;
    let matched = 0;
    for (let i = 0; i < n; i++) {
      for (let p = 0; p < hw; p++)
        for (let c = 0; c < 3; c++) pixelMax = Math.max(pixelMax, Math.abs(canvas.rgba[i]![p * 4 + c]! - pixels[(i * hw + p) * 3 + c]!));
      const own = apart(i, i);
      pixelSum += own;
      let nearestOther = Infinity;
      for (let j = 0; j < n; j++) if (j !== i) nearestOther = Math.min(nearestOther, apart(i, j));
      otherImages = Math.min(otherImages, nearestOther);
      if (own < nearestOther) matched++;
    }
    return {
      images: n,
      samePixels: maxAbsDiff(samePixels, tandem!),
      canvas: maxAbsDiff(canvasOut, tandem!),
      pixelMean: pixelSum / n,
      pixelMax,
      otherImages,
      matched,
      outputMax: Math.max(...tandem!.map(Math.abs)),
    };
  },
};
window.tandemOnnxFeedBench = api;
document.getElementById('status')!.textContent = 'ready';
