// Shapes shared by the orchestrator (bench/decode.ts, Deno) and the bench page (Chromium).

/** 'resize': Resize 224 + CenterCrop 224 to RGB (the torchvision job); 'decode': full size, colour conversion only. */
export type Transform = 'resize' | 'decode';

/** One timed pass over every image. */
export interface Sample {
  /** Wall seconds of the pass. */
  seconds: number;
  /** CPU seconds of the process (tree) that did the work, all threads. */
  cpu: number;
  /** Items that produced no pixels (decode errors, wrong output size, timeouts). */
  failed: number;
  /** Items abandoned after the per-file timeout (only @ffmpeg/ffmpeg has one). */
  hangs?: number;
  /** Instances replaced after a failure or a hang (@ffmpeg/ffmpeg). */
  reloads?: number;
  /** The first failure's reason, for the report. */
  firstError?: string;
  /** Peak resident memory of the process, when the variant runs in a process of its own. */
  maxRssKb?: number;
}

/** What a pass in the page reports; the orchestrator adds CPU time from /proc. */
export type PageSample = Omit<Sample, 'cpu' | 'maxRssKb'>;

export interface ImageInfo {
  width: number;
  height: number;
}

export const OUT = 224;

/** torchvision Resize(224) (shorter side, rounded as PIL does) then CenterCrop(224). */
export function coverGeometry(w: number, h: number): { rw: number; rh: number; left: number; top: number } {
  const s = OUT / Math.min(w, h);
  const rw = Math.max(OUT, Math.round(w * s)),
    rh = Math.max(OUT, Math.round(h * s));
  return { rw, rh, left: Math.floor((rw - OUT) / 2), top: Math.floor((rh - OUT) / 2) };
}

export type FfmpegCore = 'st' | 'mt';
export interface FfmpegConfig {
  core: FfmpegCore;
  instances: number;
}

/** What bench/decode/page/main.ts puts on `window.tandemBench`. */
export interface PageApi {
  /** Fetches the images from the bench server into the page (and its bitmap workers). */
  load(count: number, infos: ImageInfo[], maxThreads: number): Promise<{ crossOriginIsolated: boolean; cores: number }>;
  tandem(threads: number, transform: Transform, reducedScale: boolean): Promise<PageSample>;
  bitmap(workers: number, transform: Transform): Promise<PageSample>;
  ffmpegLoad(config: FfmpegConfig): Promise<{ loadSeconds: number }>;
  /** One pass over the first `count` images. */
  ffmpeg(config: FfmpegConfig, timeoutMs: number, count: number): Promise<PageSample>;
  close(): Promise<void>;
}

declare global {
  interface Window {
    tandemBench?: PageApi;
  }
}
