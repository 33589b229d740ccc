// The bench page: loads the images from the bench server and exposes `window.tandemBench`
// (PageApi) for the orchestrator to call through Playwright, one timed pass per call.
import { DecodePool } from '../../../src/decode/index.ts';
import { decodePass } from '../tandem.ts';
import type { FfmpegConfig, ImageInfo, PageApi, PageSample, Transform } from '../types.ts';
import type { BitmapReply, BitmapRequest } from './bitmap-worker.ts';
import { ffmpegClose, ffmpegLoad, ffmpegPass } from './ffmpeg.ts';

let images: { bytes: Uint8Array; info: ImageInfo }[] = [];
const pools = new Map<number, DecodePool>();
let workers: Worker[] = [];

function ask(w: Worker, m: BitmapRequest, transfer: Transferable[] = []): Promise<BitmapReply> {
  return new Promise((resolve, reject) => {
    w.onmessage = (e: MessageEvent<BitmapReply>) => (e.data.type === 'error' ? reject(new Error(e.data.message)) : resolve(e.data));
    w.onerror = (e) => reject(new Error(e.message));
    w.postMessage(m, transfer);
  });
}

const api: PageApi = {
  async load(count, infos, maxThreads) {
    images = await Promise.all(
      Array.from({ length: count }, async (_, i) => ({
        bytes: new Uint8Array(await (await fetch(`/bench-assets/image/${i}`)).arrayBuffer()),
        info: infos[i]!,
      })),
    );
    workers = Array.from({ length: maxThreads }, () => new Worker(new URL('./bitmap-worker.ts', import.meta.url), { type: 'module' }));
    await Promise.all(workers.map((w) => ask(w, { type: 'load', images: images.map((m) => m.bytes.slice()), infos })));
    return { crossOriginIsolated, cores: navigator.hardwareConcurrency };
  },

  async tandem(threads: number, transform: Transform, reducedScale: boolean): Promise<PageSample> {
    let pool = pools.get(threads);
    if (!pool) pools.set(threads, (pool = await DecodePool.create({ threads })));
    if (pool.mode !== 'pthreads') throw new Error(`DecodePool runs in ${pool.mode} mode: the page is not cross-origin isolated`);
    return decodePass(pool, images, transform, reducedScale);
  },

  async bitmap(n: number, transform: Transform): Promise<PageSample> {
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const t0 = performance.now();
    const replies = await Promise.all(workers.slice(0, n).map((w) => ask(w, { type: 'run', transform, counter, quality: 'medium' })));
    const seconds = (performance.now() - t0) / 1000;
    return { seconds, failed: replies.reduce((s, r) => s + (r.type === 'done' ? r.failed : 0), 0) };
  },

  ffmpegLoad: (config: FfmpegConfig) => ffmpegLoad(config),
  ffmpeg: (config: FfmpegConfig, timeoutMs: number, count: number) =>
    ffmpegPass(
      config,
      images.slice(0, count).map((m) => m.bytes),
      timeoutMs,
    ),

  async close() {
    ffmpegClose();
    for (const w of workers) w.terminate();
    for (const p of pools.values()) await p.close();
    pools.clear();
  },
};

window.tandemBench = api;
document.getElementById('status')!.textContent = 'ready';
