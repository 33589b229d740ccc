// The text loader's GPU end: a packed batch's four i32 arrays go up in one write through the one
// GPU ring (src/gpu/ring.ts), are copied on the GPU into one of its buffer sets, and are handed
// out as a TokenDeviceBatch.
import type { GpuContext } from '../gpu/index.ts';
import { DeviceRing } from '../gpu/internal.ts';
import type { StageContext } from '../pipeline/index.ts';
import type { PackedBatch } from './batches.ts';
import type { TokenDeviceBatch } from './types.ts';

/** A device batch with the packer's position after it (for the loader's state). */
export type PackedDeviceBatch = TokenDeviceBatch & { readonly snapshot: PackedBatch['snapshot'] };

const FIELDS = ['inputs', 'labels', 'docIds', 'positions'] as const;
const EMPTY_LABELS = new Int32Array(0);

/** The `to: gpu` stage: upload, copy into a free set, submit; the CPU batch is released once uploaded. */
export function openTokenRing(gpu: GpuContext, batchSize: number, seqLen: number, sets = 4) {
  const bytes = batchSize * seqLen * 4;
  const buffers = { inputs: bytes, labels: bytes, docIds: bytes, positions: bytes };
  const ring = new DeviceRing(gpu.device, { buffers, sets, maxBatchBytes: 4 * bytes, label: 'tandem text' });
  const shape = [4, batchSize, seqLen, 4] as const;
  const convert = (batch: PackedBatch, ctx: StageContext): Promise<PackedDeviceBatch> => {
    const { count, padding, keys, snapshot, whole } = batch;
    const data = new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength);
    const host = { sequence: 0, count, shape, data, labels: EMPTY_LABELS, release: () => batch.release() };
    return ring.convert(host, ctx, (encoder, uploaded, set) => {
      for (const [i, field] of FIELDS.entries()) encoder.copyBufferToBuffer(uploaded.buffer, i * bytes, set[field], 0, bytes);
      return { count, shape: batch.shape, padding, keys, snapshot };
    });
  };
  return { convert, held: () => ring.held, close: () => ring.close() };
}

export type TokenRing = ReturnType<typeof openTokenRing>;
