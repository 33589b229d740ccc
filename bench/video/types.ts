// Shapes shared by the orchestrator (bench/video.ts, Deno) and the bench page (Chromium).

/** The clip job every column does: 8 frames 2 apart, one clip per video, cover to 112×112, RGB. */
export const CLIP = { frames: 8, stride: 2, size: 112, channels: 3, batchSize: 8 } as const;
/** ImageNet's mean and std (videoLoader's default), for the peers' own normalisation. */
export const MEAN = [0.485, 0.456, 0.406] as const;
export const STD = [0.229, 0.224, 0.225] as const;

/** One video of a corpus as the page gets it: its bytes are served at /bench-assets/video/<corpus>/<index>. */
export interface ClipPlan {
  key: string;
  label: number;
  width: number;
  height: number;
  /** The sampler's frame times (s) of the video's one clip, worked out once before any pass. */
  times: number[];
}

export type PageColumn = 'tandem-webcodecs' | 'tandem-wasm' | 'element' | 'webcodecs-own';

/** One timed pass of one column over one corpus. */
export interface PageSample {
  seconds: number;
  /** From the pass's start to the first batch in the consumer's hands (Tandem) or written (peers). */
  firstBatchSeconds: number;
  clips: number;
  batches: number;
  /** GPU→CPU readbacks of every kind during the pass (test/shared/readbacks.ts). */
  readbacks: number;
  /** Clips whose frame times were not the plan's (a wrong clip is not a faster clip). */
  wrongTimes: number;
  failures: number;
  firstError?: string;
}

/** Each column's first batch against the wasm road's, mean absolute difference on the 0..255 scale. */
export interface PixelCheck {
  column: PageColumn;
  clips: number;
  /** Over every value of the batch, and of the worst clip. */
  mean: number;
  worstClip: number;
  /** Per clip, in corpus order. */
  each: number[];
  /** The smallest mean difference between a clip and another clip of the wasm road: what a wrong frame would cost. */
  otherClip: number;
}

/** What bench/video/page/main.ts puts on `window.tandemVideoBench`. */
export interface VideoPageApi {
  /** Fetches a corpus's files into the page (untimed); the first call also opens the GPU and the pool. */
  load(corpus: string, plans: ClipPlan[], threads: number): Promise<{ crossOriginIsolated: boolean; adapter: string; cores: number }>;
  pass(corpus: string, column: PageColumn): Promise<PageSample>;
  /** Every column's first batch (untimed, read back), compared with the wasm road's. */
  check(corpus: string): Promise<PixelCheck[]>;
  close(): Promise<void>;
}

declare global {
  interface Window {
    tandemVideoBench?: VideoPageApi;
  }
}

/** The cover geometry of videoLoader's 'cover': the source rectangle that fills `out`×`out` after scaling. */
export function coverSource(width: number, height: number, out: number): { sx: number; sy: number; sw: number; sh: number } {
  const scale = Math.max(out / width, out / height);
  const sw = out / scale,
    sh = out / scale;
  return { sx: (width - sw) / 2, sy: (height - sh) / 2, sw, sh };
}
