// The whole loader as a user writes it (README's example): source → decode on wasm threads into
// batch buffers → batches → GPU ring → WGSL normalisation. Every item must be delivered exactly
// once or reported with its stage and reason.
import { DecodeError, DecodePool, ImageBatcher, type ImageBatch } from '../../src/decode/index.ts';
import { acquireGpu, BatchUploader, NormalizeKernel, readBuffer } from '../../src/gpu/index.ts';
import { normalizeByHand } from './normalize-by-hand.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { check } from './assert.ts';
import { sampleImages } from './transfer-scenarios.ts';

export async function loaderAccountsForEveryItem(): Promise<{ delivered: number; failed: number }> {
  const items = sampleImages(30, 96);
  items[4] = { ...items[4]!, bytes: items[4]!.bytes.subarray(0, 200), key: 'cut-4' };
  items[17] = { ...items[17]!, bytes: new TextEncoder().encode('<html>not an image</html>'), key: 'html-17' };
  const gpu = await acquireGpu();
  const pool = await DecodePool.create({ threads: 2 });
  const batcher = new ImageBatcher(pool, { batchSize: 8, height: 32, width: 32, buffers: 3 });
  const uploader = new BatchUploader(gpu.device, { maxBatchBytes: batcher.batchBytes, slots: 2 });
  const normalize = await NormalizeKernel.create(gpu.device, { images: 8, height: 32, width: 32, channels: 3 });
  const output = gpu.device.createBuffer({ size: normalize.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const pipeline = new PipelineBuilder()
    .addSource(items, { repeat: 2 })
    .batch(batcher, { name: 'decode', concurrency: 4 })
    // The test keeps a copy of each batch's bytes, to check the GPU's normalisation against the CPU.
    .pipe((batch: ImageBatch) => ((hostBytes = batch.data.slice()), batch), { name: 'copy-for-test' })
    .pipe((batch: ImageBatch, ctx) => uploader.upload(batch, ctx.signal), { name: 'upload' })
    .addSink(2)
    .build();
  const seen = new Map<string, number>();
  let delivered = 0;
  let hostBytes = new Uint8Array(0);
  let lastHostBytes = new Uint8Array(0);
  let lastCount = 0;
  try {
    for await (const batch of pipeline) {
      const encoder = gpu.device.createCommandEncoder();
      normalize.encode(encoder, batch.buffer, output);
      gpu.device.queue.submit([encoder.finish()]);
      batch.release();
      delivered += batch.count;
      for (const key of batch.keys) seen.set(key, (seen.get(key) ?? 0) + 1);
      lastHostBytes = hostBytes;
      lastCount = batch.count;
    }
    // The last batch's normalised tensor against the CPU reference of the same bytes.
    const values = new Float32Array(await readBuffer(gpu.device, output));
    const want = normalizeByHand(lastHostBytes, { images: lastCount, height: 32, width: 32, channels: 3 });
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs((values[i] ?? Number.NaN) - (want[i] ?? 0)));
    check(lastCount > 0 && worst < 1e-5, `normalised batch on the GPU differs from the CPU reference by ${worst}`);
  } finally {
    await pipeline.stop();
    await uploader.close();
    normalize.destroy();
    output.destroy();
    batcher.close();
    await pool.close();
    gpu.close();
  }
  const failures = pipeline.failures();
  check(delivered === 56, `2 epochs × 28 good images delivered, got ${delivered}`);
  check(failures.length === 4, `2 epochs × 2 bad images reported, got ${failures.length}`);
  check(
    failures.every((f) => f.stage === 'decode' && f.error instanceof DecodeError),
    'failures name the decode stage with a DecodeError',
  );
  const codes = failures.map((f) => (f.error as DecodeError).code).sort();
  check(codes.join() === 'truncated,truncated,unknown-format,unknown-format', `failure reasons: ${codes.join()}`);
  // Exactly once per epoch, by key: every good image twice (2 epochs), the bad ones never.
  const good = items.filter((_, i) => i !== 4 && i !== 17).map((item) => item.key!);
  check(
    good.every((key) => seen.get(key) === 2) && seen.size === good.length,
    `every good image delivered exactly once per epoch: ${JSON.stringify([...seen].filter(([, n]) => n !== 2))}, ${seen.size} keys`,
  );
  const reported = failures.map((f) => (f.input.includes('cut-4') ? 'cut-4' : f.input.includes('html-17') ? 'html-17' : f.input)).sort();
  check(reported.join() === 'cut-4,cut-4,html-17,html-17', `the two bad images are the ones reported, once per epoch: ${reported.join()}`);
  return { delivered, failed: failures.length };
}

/** The loader scenarios by title: every runtime registers them from here. */
export const loaderScenarios: Record<string, () => Promise<void>> = {
  async 'the loader pipeline delivers every good image once and reports every bad one'() {
    const r = await loaderAccountsForEveryItem();
    check(r.delivered === 56 && r.failed === 4, `56 delivered and 4 failed, got ${JSON.stringify(r)}`);
  },
};
