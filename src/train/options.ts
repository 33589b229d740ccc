// What a training session can be asked to do, and the one set of defaults every entry point
// (the CLI's `tandem train`, the demo page, the notebook) starts from.
import type { GpuContext } from '../gpu/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import type { ViTConfig, ViTTrainer } from '../vit/index.ts';

export interface TrainingOptions {
  epochs: number;
  batchSize: number;
  /** Decode threads (pool size). */
  threads: number;
  /** Where the decode modules are served, if not beside the package (DecodePoolOptions.moduleBase). */
  moduleBase?: string | URL;
  seed: number;
  lr: number;
  /** Random resized crop, flip and jitter on the GPU; off, batches are only normalised. */
  augment: boolean;
  /** AdamW's weight decay on the matrices (default 0.05). */
  weightDecay?: number;
  /** Clip the global gradient norm to this; 0 disables (default 1). */
  clipNorm?: number;
  /** Linear warm-up steps before the cosine decay (default: a tenth of the steps, at most 20). */
  warmupSteps?: number;
  /** With `augment`: the crop's share of the image area, and the brightness and contrast jitter (default [0.6, 1], 0.1, 0.1). */
  augmentation?: { scale: [number, number]; brightness: number; contrast: number };
  /** Files read at once (default 16); the loader sizes its buffers and queues from the pool and the batch. */
  loader?: { readConcurrency?: number };
  /** The model (default: the tiny preset with as many classes as the data has). */
  model?: ViTConfig;
  /**
   * Weights to start from, in `model`'s flat layout (as `loadTimmWeights` returns them, with the
   * head sized for the data's classes); absent, the model starts from seeded weights.
   */
  initialParams?: Float32Array<ArrayBuffer>;
  /** Read loss and accuracy back every this many steps (default 4). */
  reportEvery?: number;
  /** Emit per-stage statistics this often (default 1000 ms). */
  statsIntervalMs?: number;
  /** Read a few images of the current batch back every this many steps (0 or absent: never). */
  previewEvery?: number;
  previewImages?: number;
  signal?: AbortSignal;
  /** Use this device (left open) instead of acquiring one (closed at the end). */
  gpu?: GpuContext;
  /** Called with the trainer once training ends, before it is destroyed (e.g. to save a checkpoint). */
  onTrained?: (trainer: ViTTrainer) => Promise<void>;
  /**
   * Every this many steps, and after the last, a training checkpoint (model, AdamW moments, step,
   * data position, epoch records: `encodeTrainingCheckpoint`) goes to `onCheckpoint`, which should
   * store it atomically (the CLI writes a file, then renames it). 0 or absent: none.
   */
  checkpointEvery?: number;
  onCheckpoint?: (bytes: Uint8Array<ArrayBuffer>, step: number) => Promise<void>;
  /**
   * Continue from a training checkpoint of the same run (same model, data, seed, batch size,
   * epochs, lr, augmentation; else a `CheckpointError` says what differs): the weights, moments and
   * schedule are restored and the data resumes after the items the checkpoint's steps consumed.
   * With the same seed, the run ends with the same weights as one that never stopped.
   */
  resumeFrom?: Uint8Array;
  /** Called after each step is submitted with the keys of the images it trained on. */
  onStepKeys?: (step: number, keys: readonly string[]) => void;
}

/**
 * The one set of training defaults (the CLI's `tandem train` and the demo page start from it).
 * Measured on 2 cores with lavapipe (docs/vit.md): 6 epochs of 8192 generated images in batches
 * of 32 at lr 2.5e-3 reach 71.7% held-out with seeds 1 and 2 (68.1% with seed 3), where batches
 * of 64 landed between 66.2% and 73.0% by seed. Decode threads: the machine's cores, at most 8.
 */
/** The defaults of TrainingOptions' optional training and loader settings, in one place. */
export const trainingSettingDefaults = {
  weightDecay: 0.05,
  clipNorm: 1,
  warmupSteps: (steps: number) => Math.min(20, Math.floor(steps / 10)),
  augmentation: { scale: [0.6, 1] as [number, number], brightness: 0.1, contrast: 0.1 },
  loader: { batchBuffers: 4, gpuSlots: 2, readConcurrency: 16, sinkDepth: 2 },
} as const;

export const defaultTrainingOptions: Readonly<TrainingOptions> = {
  epochs: 6,
  batchSize: 32,
  threads: Math.max(1, Math.min(8, hardwareConcurrency())),
  seed: 1,
  lr: 2.5e-3,
  augment: false,
};
