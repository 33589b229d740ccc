// Messages between the demo page and its training worker (structured-cloneable data only).
import type { HubSource, ParquetSource } from '../src/loader/index.ts';
import type { TrainingEvent } from '../src/train/index.ts';
import type { Prediction, PredictionFailure } from './trained-model.ts';

export interface DemoSettings {
  epochs: number;
  batchSize: number;
  threads: number;
  /** Images generated for the built-in dataset. */
  images: number;
  augment: boolean;
}

export type ToWorker =
  | {
      type: 'start';
      settings: DemoSettings;
      picked?: { images: { key: string; label: number; file: Blob }[]; classes: string[] };
      /** A Hub dataset or Parquet URLs, streamed by row group (no held-out images). */
      parquet?: HubSource | ParquetSource;
      /** ViT weights in timm's layout (safetensors) to fine-tune from. */
      weights?: Blob;
      /** Continue the run saved in OPFS (built-in dataset, the saved settings). */
      resume?: boolean;
    }
  /** Stops training; once training has ended, releases the trained model and ends the worker. */
  | { type: 'stop' }
  /** Classifies a file with the trained model (answered by a 'classified' with the same id). */
  | { type: 'classify'; id: number; name: string; file: Blob };

/** What a 'classify' gave: the softmax over the model's classes, or why the file could not be read. */
export type Classified = { id: number; probabilities: number[] } | { id: number; failure: PredictionFailure };

export type FromWorker =
  | TrainingEvent
  | { type: 'status'; text: string }
  /** The trained weights and optimizer state (ViTTrainer.saveCheckpoint), for a download. */
  | { type: 'checkpoint'; bytes: Uint8Array<ArrayBuffer> }
  /** The trained weights in timm's layout (safetensors), for a download. */
  | { type: 'weights'; bytes: Uint8Array<ArrayBuffer> }
  /** A training checkpoint was saved in OPFS at this step (a reload can continue from it). */
  | { type: 'saved'; step: number }
  | {
      type: 'done';
      steps: number;
      seconds: number;
      cancelled: boolean;
      failures: number;
      bottleneck: string | undefined;
      waitedForData: number;
    }
  /**
   * After a finished run (not a stopped one): the trained model's predictions on every held-out
   * image, in the loader's order, and the bytes of the first few for the page's grid. The worker
   * then stays alive with the model for 'classify' until the page sends 'stop'.
   */
  | {
      type: 'held-out';
      classes: string[];
      predictions: Prediction[];
      failures: PredictionFailure[];
      images: { key: string; file: Blob }[];
    }
  | ({ type: 'classified' } & Classified)
  /** The trained model was released (after 'stop'); the worker is closing. */
  | { type: 'released' }
  | { type: 'error'; message: string };
