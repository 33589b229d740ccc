// The bench page: holds each corpus's files and exposes `window.tandemVideoBench` (VideoPageApi)
// for the orchestrator to call through Playwright, one timed pass per call. Every column ends
// with the same thing on the same device: a batch of normalised f32 clips in a GPU buffer; a pass
// ends when the GPU has finished the work it was given (onSubmittedWorkDone).
import { DecodePool } from '../../../src/decode/index.ts';
import { acquireGpu, type GpuContext, readBuffer } from '../../../src/gpu/index.ts';
import { type VideoDeviceBatch, type VideoLoader, videoLoader } from '../../../src/video/index.ts';
import { countReadbacks } from '../../../test/shared/readbacks.ts';
import { CLIP, type ClipPlan, type PageColumn, type PageSample, type PixelCheck, STD, type VideoPageApi } from '../types.ts';
import { CLIP_FLOATS, ElementPeer, OwnWebCodecsPeer, type PeerResult } from './peers.ts';

interface Loaded {
  files: Uint8Array[];
  plans: ClipPlan[];
  times: Map<string, number[]>;
}
const corpora = new Map<string, Loaded>();
const loaders = new Map<string, VideoLoader<VideoDeviceBatch>>();
let gpu: GpuContext | undefined;
let pool: DecodePool | undefined;
let batchBuffer: GPUBuffer | undefined;
let element: ElementPeer | undefined;
let own: OwnWebCodecsPeer | undefined;
/** A delivered clip's times may differ from the plan's by the demuxer's µs rounding, no more. */
const TIME_TOLERANCE = 0.0015;

function loaderFor(corpus: string, backend: 'webcodecs' | 'wasm', c: Loaded): VideoLoader<VideoDeviceBatch> {
  const id = `${corpus}/${backend}`;
  let loader = loaders.get(id);
  if (!loader) {
    const items = c.plans.map((p, i) => ({ bytes: c.files[i]!, label: p.label, key: p.key }));
    loader = videoLoader(items, {
      clip: { frames: CLIP.frames, stride: CLIP.stride },
      sampler: 'uniform',
      clipsPerVideo: 1,
      size: CLIP.size,
      batchSize: CLIP.batchSize,
      backend,
      to: gpu!,
      pool: pool!,
      failureBudget: { maxFailures: c.files.length },
    });
    loaders.set(id, loader);
  }
  return loader;
}

/** One epoch of a videoLoader; its loader (decoders, buffers, shaders) is kept for the next pass. */
type PassResult = Omit<PageSample, 'seconds' | 'readbacks' | 'firstBatchSeconds'> & { firstBatchAt: number };

async function tandemPass(corpus: string, backend: 'webcodecs' | 'wasm', c: Loaded): Promise<PassResult> {
  const loader = loaderFor(corpus, backend, c);
  const failedBefore = loader.failures().length;
  let clips = 0,
    batches = 0,
    wrongTimes = 0,
    firstBatchAt = Number.NaN;
  for await (const batch of loader) {
    if (batches++ === 0) firstBatchAt = performance.now();
    clips += batch.count;
    batch.keys.forEach((key, i) => {
      const want = c.times.get(key);
      const got = batch.frameTimes.subarray(i * CLIP.frames, (i + 1) * CLIP.frames);
      if (!want || want.some((t, f) => !(Math.abs(t - got[f]!) <= TIME_TOLERANCE))) wrongTimes++;
    });
    batch.release();
  }
  const failures = loader.failures().slice(failedBefore);
  const roads = loader.roads();
  if (backend === 'webcodecs' && roads.wasm > 0) throw new Error(`the WebCodecs column decoded ${roads.wasm} clips on the wasm road`);
  return {
    clips,
    firstBatchAt,
    batches,
    wrongTimes,
    failures: failures.length,
    ...(failures[0] ? { firstError: `${failures[0].key}: ${String(failures[0].error)}` } : {}),
  };
}

/** One column's first batch of clips (as many as a batch holds), read back to the CPU. */
async function firstBatch(column: PageColumn, c: Loaded): Promise<Float32Array> {
  const device = gpu!.device;
  const n = Math.min(CLIP.batchSize, c.files.length);
  const first = { files: c.files.slice(0, n), plans: c.plans.slice(0, n), times: c.times };
  if (column === 'element' || column === 'webcodecs-own') {
    await (column === 'element' ? element! : own!).pass(device, batchBuffer!, first.files, first.plans);
    return new Float32Array(await readBuffer(device, batchBuffer!, n * CLIP_FLOATS * 4));
  }
  const loader = loaderFor(`check-${column}`, column === 'tandem-webcodecs' ? 'webcodecs' : 'wasm', first);
  try {
    for await (const batch of loader) {
      const floats = new Float32Array(await readBuffer(device, batch.clips, n * CLIP_FLOATS * 4));
      batch.release();
      return floats;
    }
    throw new Error(`${column}: no batch`);
  } finally {
    await loader.close();
    loaders.delete(`check-${column}/${column === 'tandem-webcodecs' ? 'webcodecs' : 'wasm'}`);
  }
}

/** Mean |a − b| of two clips' floats, back on the 0..255 scale (the floats are (x/255 − mean) / std). */
function clipDifference(a: Float32Array, b: Float32Array, i: number, j: number): number {
  let sum = 0;
  for (let k = 0; k < CLIP_FLOATS; k++) sum += Math.abs(a[i * CLIP_FLOATS + k]! - b[j * CLIP_FLOATS + k]!) * STD[k % 3]!;
  return (sum / CLIP_FLOATS) * 255;
}

const api: VideoPageApi = {
  async load(corpus, plans, threads) {
    gpu ??= await acquireGpu();
    pool ??= await DecodePool.create({ threads });
    if (pool.mode !== 'pthreads') throw new Error(`DecodePool runs in ${pool.mode} mode: the page is not cross-origin isolated`);
    batchBuffer ??= gpu.device.createBuffer({
      size: CLIP.batchSize * CLIP_FLOATS * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      label: 'peer clips',
    });
    element ??= new ElementPeer(threads);
    own ??= new OwnWebCodecsPeer(threads, pool);
    const files = await Promise.all(
      plans.map(async (_, i) => new Uint8Array(await (await fetch(`/bench-assets/video/${corpus}/${i}`)).arrayBuffer())),
    );
    corpora.set(corpus, { files, plans, times: new Map(plans.map((p) => [p.key, p.times])) });
    const info = gpu.adapter?.info;
    return {
      crossOriginIsolated,
      adapter: info ? `${info.vendor} ${info.architecture} ${info.description}`.trim() : 'unknown',
      cores: navigator.hardwareConcurrency,
    };
  },

  async pass(corpus: string, column: PageColumn): Promise<PageSample> {
    const c = corpora.get(corpus);
    if (!c || !gpu || !batchBuffer) throw new Error(`corpus ${corpus} not loaded`);
    const device = gpu.device;
    const t0 = performance.now();
    const counted = await countReadbacks(async () => {
      let r: PassResult;
      if (column === 'tandem-webcodecs' || column === 'tandem-wasm')
        r = await tandemPass(corpus, column === 'tandem-webcodecs' ? 'webcodecs' : 'wasm', c);
      else {
        const peer: PeerResult = await (column === 'element' ? element! : own!).pass(device, batchBuffer!, c.files, c.plans);
        r = { ...peer, wrongTimes: 0 };
      }
      await device.queue.onSubmittedWorkDone();
      return r;
    });
    const seconds = (performance.now() - t0) / 1000;
    const { firstBatchAt, ...result } = counted.result;
    return { ...result, seconds, firstBatchSeconds: (firstBatchAt - t0) / 1000, readbacks: counted.readbacks };
  },

  async check(corpus: string): Promise<PixelCheck[]> {
    const c = corpora.get(corpus);
    if (!c) throw new Error(`corpus ${corpus} not loaded`);
    const n = Math.min(CLIP.batchSize, c.files.length);
    const reference = await firstBatch('tandem-wasm', c);
    let otherClip = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) if (i !== j) otherClip = Math.min(otherClip, clipDifference(reference, reference, i, j));
    const out: PixelCheck[] = [];
    for (const column of ['tandem-webcodecs', 'element', 'webcodecs-own'] as const) {
      const floats = await firstBatch(column, c);
      const each = Array.from({ length: n }, (_, i) => clipDifference(floats, reference, i, i));
      out.push({ column, clips: n, mean: each.reduce((s, x) => s + x, 0) / n, worstClip: Math.max(...each), each, otherClip });
    }
    return out;
  },

  async close() {
    for (const l of loaders.values()) await l.close();
    loaders.clear();
    batchBuffer?.destroy();
    await pool?.close();
    gpu?.close();
  },
};

window.tandemVideoBench = api;
document.getElementById('status')!.textContent = 'ready';
