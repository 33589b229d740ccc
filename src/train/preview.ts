// Reads a few images of the batch being trained on back from the GPU, now and then, without
// stalling the training loop: the copy is recorded in the step's own command encoder and the map
// resolves later; while one read is pending, further requests are skipped.
import { IMAGENET_MEAN, IMAGENET_STD } from '../gpu/index.ts';
import type { PreviewEvent } from './events.ts';

export class PreviewReader {
  readonly count: number;
  readonly #size: number;
  readonly #staging: GPUBuffer;
  readonly #labels: Int32Array<ArrayBuffer>;
  #pending: Promise<void> | undefined;

  constructor(device: GPUDevice, o: { batchSize: number; imageSize: number; count: number }) {
    this.count = Math.min(o.count, o.batchSize);
    this.#size = o.imageSize;
    this.#labels = new Int32Array(this.count);
    const bytes = this.count * 3 * o.imageSize * o.imageSize * 4; // the first images of f32 NCHW
    this.#staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  get busy(): boolean {
    return this.#pending !== undefined;
  }

  /** Records the copy of the normalised images; call `read` after submitting the encoder. */
  encode(encoder: GPUCommandEncoder, images: GPUBuffer): void {
    encoder.copyBufferToBuffer(images, 0, this.#staging, 0, this.#staging.size);
  }

  read(step: number, labels: Int32Array, emit: (e: PreviewEvent) => void): void {
    this.#labels.set(labels.subarray(0, this.count));
    this.#pending = this.#staging
      .mapAsync(GPUMapMode.READ)
      .then(() => {
        const floats = new Float32Array(this.#staging.getMappedRange());
        const event = {
          type: 'preview' as const,
          step,
          rgba: toRgba(floats, this.count, this.#size),
          count: this.count,
          size: this.#size,
          labels: this.#labels.slice(),
        };
        this.#staging.unmap();
        emit(event);
      })
      .finally(() => (this.#pending = undefined));
  }

  async close(): Promise<void> {
    await this.#pending?.catch(() => undefined);
    this.#staging.destroy();
  }
}

/** f32 NCHW normalised with ImageNet's mean/std → RGBA tiles in one row (count·size wide). */
export function toRgba(nchw: Float32Array, count: number, size: number): Uint8ClampedArray<ArrayBuffer> {
  const plane = size * size;
  const width = count * size;
  const out = new Uint8ClampedArray(width * size * 4);
  for (let n = 0; n < count; n++) {
    for (let c = 0; c < 3; c++) {
      const base = (n * 3 + c) * plane;
      const mean = IMAGENET_MEAN[c]!,
        std = IMAGENET_STD[c]!;
      for (let p = 0; p < plane; p++) {
        const y = (p / size) | 0,
          x = p - y * size;
        out[(y * width + n * size + x) * 4 + c] = (nchw[base + p]! * std + mean) * 255;
      }
    }
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) out[(y * width + n * size + x) * 4 + 3] = 255;
  }
  return out;
}
