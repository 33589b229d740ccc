// Everything a training session allocates on the GPU and in the decode pool, opened together and
// released together: a session that fails half-way through opening leaks nothing.
import { DecodePool } from '../decode/index.ts';
import { acquireGpu, AugmentKernel, NormalizeKernel, type GpuBatch, type GpuContext } from '../gpu/index.ts';
import { ViTTrainer, type ViTConfig } from '../vit/index.ts';
import { trainingSettingDefaults, type TrainingOptions } from './options.ts';
import { PreviewReader } from './preview.ts';

export class TrainingResources {
  readonly #padded: Int32Array<ArrayBuffer>;
  readonly #ids: Uint32Array;
  readonly #cleanup: Array<() => void | Promise<void>>;

  private constructor(
    readonly gpu: GpuContext,
    readonly pool: DecodePool,
    readonly trainer: ViTTrainer,
    readonly augment: AugmentKernel,
    readonly normalize: NormalizeKernel,
    /** The step's input images after augmentation or normalisation (f32, NCHW). */
    readonly images: GPUBuffer,
    /** The step's labels (i32; −1 for padding rows past a short batch's count). */
    readonly labels: GPUBuffer,
    readonly preview: PreviewReader | undefined,
    cleanup: Array<() => void | Promise<void>>,
  ) {
    this.#padded = new Int32Array(trainer.batchSize);
    this.#ids = new Uint32Array(trainer.batchSize);
    this.#cleanup = cleanup;
  }

  /** `started` is told once the GPU and the decode pool exist, before the kernels compile. */
  static async open(
    o: TrainingOptions,
    model: ViTConfig,
    steps: number,
    started: (devices: { gpu: GpuContext; pool: DecodePool }) => void = () => {},
  ): Promise<TrainingResources> {
    const gpu = o.gpu ?? (await acquireGpu());
    // Undone in reverse on failure or close: each entry is pushed once its resource exists.
    const cleanup: Array<() => void | Promise<void>> = [];
    if (!o.gpu) cleanup.push(() => gpu.close());
    try {
      const pool = await DecodePool.create({ threads: o.threads, moduleBase: o.moduleBase });
      cleanup.push(() => pool.close());
      started({ gpu, pool });
      const device = gpu.device;
      const B = o.batchSize;
      const size = model.imageSize;
      const trainer = await ViTTrainer.create(device, {
        config: model,
        batchSize: B,
        seed: o.seed,
        ...(o.initialParams ? { params: o.initialParams } : {}),
        train: {
          lr: o.lr,
          warmupSteps: o.warmupSteps ?? trainingSettingDefaults.warmupSteps(steps),
          totalSteps: steps,
          weightDecay: o.weightDecay ?? trainingSettingDefaults.weightDecay,
          clipNorm: o.clipNorm ?? trainingSettingDefaults.clipNorm,
        },
      });
      cleanup.push(() => trainer.destroy());
      const shape = { images: B, srcHeight: size, srcWidth: size, channels: 3, outHeight: size, outWidth: size };
      const augment = await AugmentKernel.create(device, shape, o.augmentation ?? trainingSettingDefaults.augmentation);
      cleanup.push(() => augment.destroy());
      const normalize = await NormalizeKernel.create(device, { images: B, height: size, width: size, channels: 3 });
      cleanup.push(() => normalize.destroy());
      const images = device.createBuffer({ size: augment.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      cleanup.push(() => images.destroy());
      const labels = device.createBuffer({ size: B * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
      cleanup.push(() => labels.destroy());
      const preview = o.previewEvery
        ? new PreviewReader(device, { batchSize: B, imageSize: size, count: o.previewImages ?? 16 })
        : undefined;
      if (preview) cleanup.push(() => preview.close());
      return new TrainingResources(gpu, pool, trainer, augment, normalize, images, labels, preview, cleanup);
    } catch (e) {
      await runInReverse(cleanup);
      throw e;
    }
  }

  get device(): GPUDevice {
    return this.gpu.device;
  }

  writeLabels(batch: Pick<GpuBatch, 'labels'>): void {
    this.#padded.fill(-1); // rows past `count` are padding: the loss and accuracy skip label −1
    this.#padded.set(batch.labels);
    this.device.queue.writeBuffer(this.labels, 0, this.#padded);
  }

  /**
   * Encodes one training step on `batch`: its labels, augmentation (seeded per image by its
   * global index, so a rerun sees the same crops) or normalisation, then forward, backward and
   * the optimiser.
   */
  encodeStep(encoder: GPUCommandEncoder, batch: GpuBatch, step: number, o: Pick<TrainingOptions, 'augment' | 'seed'>): void {
    this.writeLabels(batch);
    const ids = this.#ids;
    for (let i = 0; i < ids.length; i++) ids[i] = step * ids.length + i;
    if (o.augment) this.augment.encode(encoder, batch.buffer, this.images, o.seed, ids);
    else this.normalize.encode(encoder, batch.buffer, this.images);
    this.trainer.step(encoder, this.images, this.labels);
  }

  /** Releases everything, newest first; the GPU last, and only if the session acquired it. */
  close(): Promise<void> {
    return runInReverse(this.#cleanup);
  }
}

/** Runs every step, newest first, even past one that throws; the first error is rethrown at the end. */
async function runInReverse(steps: Array<() => void | Promise<void>>): Promise<void> {
  let failure: { error: unknown } | undefined;
  while (steps.length > 0) {
    try {
      await steps.pop()?.();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
