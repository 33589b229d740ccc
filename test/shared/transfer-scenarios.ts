// Runtime-neutral bodies for the decode → batch → GPU path; each throws on failure.
import { DecodeError, DecodePool, ImageBatcher, type EncodedImage, type ImageBatch } from '../../src/decode/index.ts';
import { acquireGpu, BatchUploader, readBuffer, type GpuBatch, type UploadMethod } from '../../src/gpu/index.ts';
import { Rng } from '../../src/random/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';

export function sampleImages(count: number, size = 160): EncodedImage[] {
  return Array.from({ length: count }, (_, i) => {
    const s = renderSample(7, i, { width: size, height: (size * 3) / 4, classes: 4 });
    return { bytes: encodeJpeg(s.rgb, s.width, s.height, { quality: 85 }), label: s.label, key: `img-${i}` };
  });
}

/** Drives the batcher the way the pipeline does: decode stage, then its aggregator, then flush. */
export async function decodeToBatches(
  batcher: ImageBatcher,
  items: EncodedImage[],
  onBatch: (b: ImageBatch) => Promise<void>,
): Promise<unknown[]> {
  const aggregator = batcher.aggregator();
  const failures: unknown[] = [];
  const inFlight = items.map(async (item) => {
    const tokens = [];
    try {
      for await (const token of batcher.decodeStage(item)) tokens.push(token);
    } catch (error) {
      failures.push(error);
    }
    return tokens;
  });
  for (const settled of inFlight) {
    for (const token of await settled) {
      const batch = aggregator.push(token);
      if (batch) await onBatch(batch);
    }
  }
  const last = aggregator.flush();
  if (last) await onBatch(last);
  return failures;
}

/**
 * Every decoded byte arrives on the GPU: each batch is read back from its device slot and
 * compared with the bytes the decoder wrote, for both upload methods, through a ring of 2 slots
 * reused many times, with validation errors treated as failures. Failed items leave dense batches.
 */
export async function gpuBytesEqualDecodedBytes(method: UploadMethod): Promise<{ batches: number; images: number }> {
  const gpu = await acquireGpu();
  const pool = await DecodePool.create({ threads: 2 });
  const batcher = new ImageBatcher(pool, { batchSize: 5, height: 24, width: 32, channels: 3, buffers: 3 });
  const uploader = new BatchUploader(gpu.device, { maxBatchBytes: batcher.batchBytes, slots: 2, method });
  const items = sampleImages(23);
  items[6] = { bytes: items[6]!.bytes.subarray(0, 300), label: 99, key: 'cut' };
  items[13] = { bytes: new Uint8Array(0), label: 99, key: 'empty' };
  let batches = 0;
  let images = 0;
  const keys = new Set<string>();
  gpu.device.pushErrorScope('validation');
  try {
    const failures = await decodeToBatches(batcher, items, async (batch) => {
      const expected = batch.data.slice();
      for (const k of batch.keys) keys.add(k);
      check(!batch.labels.includes(99), 'a failed item leaked into a batch');
      const onGpu = await uploader.upload(batch);
      let threw = false;
      try {
        void batch.data;
      } catch {
        threw = true;
      }
      check(threw, 'a released CPU batch must refuse access');
      const got = new Uint8Array(await readBuffer(gpu.device, onGpu.buffer, onGpu.byteLength)).subarray(0, expected.length);
      check(
        checksum(got) === checksum(expected) && got.every((v, i) => v === expected[i]),
        `batch ${batch.sequence}: GPU bytes differ from decoded bytes`,
      );
      check(onGpu.shape[0] === onGpu.count && onGpu.dtype === 'uint8' && onGpu.layout === 'NHWC', 'GPU batch metadata');
      onGpu.release();
      let reused = false;
      try {
        void onGpu.buffer;
      } catch {
        reused = true;
      }
      check(reused, 'a released GPU batch must refuse access');
      batches++;
      images += onGpu.count;
    });
    check(
      failures.length === 2 && failures.every((f) => f instanceof DecodeError),
      `two typed failures, got ${failures.map(String).join('; ')}`,
    );
    check(images === 21 && keys.size === 21, `21 of 23 images delivered exactly once, got ${images} (${keys.size} distinct)`);
    check(batches === 5, `5 batches (4 full + 1 partial), got ${batches}`);
    const error = await gpu.device.popErrorScope();
    check(error === null, `WebGPU validation error: ${error?.message}`);
    return { batches, images };
  } finally {
    await uploader.close();
    batcher.close();
    await pool.close();
    gpu.close();
  }
}

function checksum(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * Double buffering under contention: the consumer holds both slots of a 2-slot ring, so the next
 * upload must wait; it then releases one of the two at random. Every batch read back while held
 * (before and after the other slot was refilled) must equal the bytes that were uploaded into it.
 */
export async function ringHeldByConsumer(method: UploadMethod, batches = 24, seed = 11): Promise<{ uploads: number; waited: number }> {
  const gpu = await acquireGpu();
  const bytes = 32 * 24 * 3 * 2; // two 32×24 RGB images
  const uploader = new BatchUploader(gpu.device, { maxBatchBytes: bytes, slots: 2, method });
  const rng = new Rng(seed);
  const held: Array<{ batch: GpuBatch; expected: Uint8Array }> = [];
  let hostReleases = 0;
  let waited = 0;
  const readBack = async (h: { batch: GpuBatch; expected: Uint8Array }, when: string) => {
    const got = new Uint8Array(await readBuffer(gpu.device, h.batch.buffer, h.batch.byteLength)).subarray(0, h.expected.length);
    check(
      got.every((v, i) => v === h.expected[i]),
      `batch ${h.batch.sequence} (${method}) differs on readback ${when}`,
    );
  };
  gpu.device.pushErrorScope('validation');
  try {
    for (let sequence = 0; sequence < batches; sequence++) {
      const data = new Uint8Array(bytes);
      for (let i = 0; i < data.length; i++) data[i] = rng.next() & 255;
      const expected = data.slice();
      const pending = uploader.upload({
        sequence,
        count: 2,
        shape: [2, 24, 32, 3],
        data,
        labels: Int32Array.of(sequence, sequence),
        release: () => void hostReleases++,
      });
      if (held.length === 2) {
        // Both slots are the consumer's: the upload may not overwrite either.
        const state = await Promise.race([pending.then(() => 'uploaded'), new Promise((resolve) => setTimeout(resolve, 30, 'waiting'))]);
        check(state === 'waiting', `upload ${sequence} (${method}) did not wait for a slot while both were held`);
        waited++;
        for (const h of held) await readBack(h, 'while the next upload waits');
        const [victim] = held.splice(rng.next() % 2, 1);
        victim!.batch.release();
      }
      const batch = await pending;
      held.push({ batch, expected });
      for (const h of held) await readBack(h, `after upload ${sequence}`);
      // Sometimes give a slot back early, so releases come in every order.
      if (held.length === 2 && rng.next() % 3 === 0) held.splice(rng.next() % 2, 1)[0]!.batch.release();
    }
    for (const h of held.splice(0)) h.batch.release();
    const error = await gpu.device.popErrorScope();
    check(error === null, `WebGPU validation error: ${error?.message}`);
    check(hostReleases === batches, `every host batch released once: ${hostReleases} of ${batches}`);
    return { uploads: batches, waited };
  } finally {
    await uploader.close();
    gpu.close();
  }
}

/** The transfer scenarios by title, for each upload method: every runtime registers them from here. */
export function transferScenarios(method: UploadMethod): Record<string, () => Promise<void>> {
  return {
    [`decoded batches arrive byte-exact on the GPU (${method}, ring of 2 reused)`]: async () => {
      const r = await gpuBytesEqualDecodedBytes(method);
      check(r.batches === 5 && r.images === 21, `5 batches of 21 images, got ${JSON.stringify(r)}`);
    },
    [`the consumer holds both ring slots and releases them in random order; every batch reads back byte-exact (${method})`]: async () => {
      const r = await ringHeldByConsumer(method);
      check(r.uploads === 24 && r.waited > 4, `24 uploads, more than 4 waits for a slot, got ${JSON.stringify(r)}`);
    },
  };
}
