// What a training session tells its listener, and the report it returns. Plain data only, so
// events can cross a worker boundary (postMessage) unchanged.
import type { PipelineStats } from '../pipeline/index.ts';
import type { ViTConfig } from '../vit/index.ts';

export interface StartEvent {
  type: 'start';
  adapter: string;
  /** How the decode pool runs: wasm pthreads on shared memory, or a fallback. */
  decodeMode: string;
  model: ViTConfig;
  train: number;
  validation: number;
  classes: readonly string[];
  epochs: number;
  steps: number;
  batchSize: number;
}

export interface StepEvent {
  type: 'step';
  step: number;
  steps: number;
  /** Fractional epoch (images seen / training images). */
  epoch: number;
  /** Mean loss and accuracy over the steps since the previous step event. */
  loss: number;
  accuracy: number;
  /** Over the same window. */
  imagesPerSecond: number;
  /** Share of the window the training loop spent waiting for the next batch (GPU starved). */
  waitedForData: number;
  seconds: number;
  secondsLeft: number;
}

export interface StageOccupancy {
  name: string;
  /** 'source', 'pipe', 'aggregate', 'disaggregate', or 'consumer' (the training loop, after the loader's stages). */
  kind: string;
  /** Mean fill of the stage's input queue so far, as a fraction of its capacity (0 for the source and the consumer). */
  queueFill: number;
  /** Working share over the last interval (`time.working`). */
  busy: number;
  /**
   * Where the stage's time went over the last interval, as shares of interval × concurrency
   * (they add up to 1): its own work, waiting for input, blocked on output, waiting for a pooled
   * resource (for the consumer: for what it named, e.g. the GPU).
   */
  time: { working: number; starved: number; blocked: number; resource: number };
  /** For the consumer: what its resource waits were for (e.g. 'GPU'), if it said. */
  resourceName?: string;
  inflight: number;
  concurrency: number;
}

export interface StatsEvent {
  type: 'stats';
  seconds: number;
  stages: StageOccupancy[];
  /** Share of the whole run so far that the training loop waited for data. */
  waitedForData: number;
  pool: { mode: string; threads: number; inFlight: number; queued: number; completed: number; failed: number };
}

export interface EpochRecord {
  epoch: number;
  trainLoss: number;
  trainAccuracy: number;
  valAccuracy: number;
  valLoss: number;
  imagesPerSecond: number;
  /** Training time of this epoch (evaluation excluded). */
  seconds: number;
  /** Seconds since the session started, when the epoch's evaluation ended. */
  endedAt: number;
}

export interface EpochEvent extends EpochRecord {
  type: 'epoch';
  epochs: number;
  step: number;
  steps: number;
  secondsLeft: number;
}

/** A few images of the current batch as the model sees them (after normalisation/augmentation). */
export interface PreviewEvent {
  type: 'preview';
  step: number;
  /** RGBA, `count` tiles of size×size side by side in one row-major strip (count × size × size × 4). */
  rgba: Uint8ClampedArray<ArrayBuffer>;
  count: number;
  size: number;
  labels: Int32Array<ArrayBuffer>;
}

export type TrainingEvent = StartEvent | StepEvent | StatsEvent | EpochEvent | PreviewEvent;

export interface TrainReport {
  adapter: string;
  decodeMode: string;
  model: ViTConfig;
  images: { train: number; validation: number; classes: string[] };
  epochs: EpochRecord[];
  steps: number;
  failures: number;
  loaderStats: PipelineStats | undefined;
  bottleneck: string | undefined;
  /** Time the training loop waited for the next batch (the GPU starved for data), and for the GPU. */
  waitedForDataSeconds: number;
  waitedForGpuSeconds: number;
  seconds: number;
  /** The step and stats events of the run, for charts over time (HTML report). */
  timeline: { steps: StepEvent[]; stats: StatsEvent[] };
  /** True when the run was cancelled through its signal before the last step. */
  cancelled: boolean;
  /**
   * What was still held when the session shut down: batch buffers and GPU slots not returned
   * once the loader had stopped, and decode worker threads alive after its pool closed. All 0
   * unless something leaked.
   */
  shutdown: { batchBuffersHeld: number; gpuSlotsHeld: number; workersAlive: number };
}
