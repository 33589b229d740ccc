// Messages between the demo page and its training worker (structured-cloneable data only).
import type { TrainingEvent } from '../src/train/index.ts';

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
      /** ViT weights in timm's layout (safetensors) to fine-tune from. */
      weights?: Blob;
      /** Continue the run saved in OPFS (built-in dataset, the saved settings). */
      resume?: boolean;
    }
  | { type: 'stop' };

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
  | { type: 'error'; message: string };
