// videoLoader(): one object from video files to batches of clips, the video counterpart of loader():
//
//   source videos (seeded order per epoch, this rank's share)
//     → read      event loop, async I/O
//     → sample    wasm demuxer (every frame's time; the packets too for WebCodecs) → clip sampler
//                 → a crop box and flip per clip; each clip becomes its own item
//     → decode    WebCodecs (VideoDecoder → WGSL frame pass, into the batch's GPU buffer) or the
//                 wasm threads (into wasm memory; for a GPU, uploaded and normalised in WGSL)
//     → the consumer's `for await`: VideoClipBatch (u8, wasm memory) or VideoDeviceBatch (f32, GPU)
import { DecodeError, DecodePool, type DemuxedVideo, VideoClipBatcher, type VideoClipBatch } from '../decode/index.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import { onCpuAdapter } from '../gpu/internal.ts';
import { listOrder, LoaderShell, resolveSource, type PassItem, type PassOrder, type Releasable } from '../loader/internal.ts';
import type { LoaderSource } from '../loader/index.ts';
import { OptionError } from '../errors/index.ts';
import { PipelineBuilder, type Pipeline } from '../pipeline/index.ts';
import { drawClipCrop } from './crop.ts';
import { configOf, GpuClipBatcher, type ClipJob, type VideoDeviceBatch } from './gpu-clips.ts';
import { checkVideoLoaderOptions, type VideoLoaderOptions, type VideoLoaderSettings } from './options.ts';
import { sampleClips } from './samplers.ts';
import { WebCodecsClipDecoder } from './webcodecs.ts';

/** The file names a folder source keeps. */
export const VIDEO_EXTENSIONS = /\.(mp4|m4v|mov|webm|mkv)$/i;

/** What a `for await` over the video loader gives: f32 clips on the GPU with `to` a device, else u8 clips in wasm memory. */
export type VideoLoaderBatch<O extends VideoLoaderOptions> = O extends { to: GPUDevice | GpuContext } ? VideoDeviceBatch : VideoClipBatch;

/** Clips sent down each road so far (counted when sampled; a clip that then fails to decode is in failures() too). */
export interface VideoRoads {
  webcodecs: number;
  wasm: number;
}

interface Opened {
  pool: DecodePool;
  ownPool: boolean;
  order: PassOrder;
  classes: readonly string[];
  batcher: VideoClipBatcher | GpuClipBatcher;
  webcodecs: WebCodecsClipDecoder | undefined;
}

/**
 * Batches of clips from the videos of `source` (a class folder, files, URLs or browser files, as
 * loader() takes them), sampled, decoded and sent where `options.to` says. Options are checked now
 * (an OptionError names a bad one); threads, decoders and buffers are made on the first `for await`.
 */
export function videoLoader<const O extends VideoLoaderOptions>(source: LoaderSource, options: O): VideoLoader<VideoLoaderBatch<O>> {
  return new VideoLoader<VideoLoaderBatch<O>>(source, checkVideoLoaderOptions(options));
}

export class VideoLoader<B> extends LoaderShell<B, Opened, Releasable> {
  protected readonly loaderName = 'videoLoader';
  readonly #source: LoaderSource;
  readonly #o: VideoLoaderSettings;
  #epoch = 0;
  readonly #roads: VideoRoads = { webcodecs: 0, wasm: 0 };

  constructor(source: LoaderSource, settings: VideoLoaderSettings) {
    super(settings.signal);
    this.#source = source;
    this.#o = settings;
  }

  /** Clips per batch, frames per clip, frame height and width, channels. */
  get shape(): { batchSize: number; frames: number; height: number; width: number; channels: 3 } {
    const { batchSize, frames, height, width } = this.#o;
    return { batchSize, frames, height, width, channels: 3 };
  }

  async classes(): Promise<readonly string[]> {
    return (await this.open()).classes;
  }

  /** Clips sent through WebCodecs and through the wasm threads so far. */
  roads(): VideoRoads {
    return { ...this.#roads };
  }

  /**
   * Starts the next pass at the beginning of `epoch`. A `for await` runs `epochs` epochs from the
   * current one (0, or setEpoch's); the next goes on after them. A pass left early (`break`) starts
   * its epoch over next time: the video loader keeps no position within an epoch (no
   * `state()`/`resumeFrom` yet).
   */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new OptionError('videoLoader.setEpoch', 'epoch', epoch, 'a whole number');
    this.betweenPasses('setEpoch');
    this.#epoch = epoch;
  }

  /** Batch buffers not back with the loader (0 once every batch is released). */
  held(): number {
    const batcher = this.opened?.batcher;
    if (!batcher) return 0;
    const s = batcher.stats();
    return s.buffers - s.free;
  }

  protected async closeOpened(r: Opened): Promise<void> {
    await r.webcodecs?.close();
    r.batcher.close();
    if (r.ownPool) await r.pool.close();
  }

  protected override passEnded(finished: boolean): void {
    if (finished) this.#epoch += this.#o.epochs;
  }

  protected buildPass(r: Opened): Pipeline<Releasable> {
    return this.#build(r);
  }

  #build(r: Opened): Pipeline<Releasable> {
    const o = this.#o;
    const items = r.order.items(this.#epoch, 0, o.epochs, () => {});
    // The key rides at the top of each stage's item: a failure is reported under it.
    const read = async (item: PassItem) => ({ key: item.key, item, bytes: await item.read() });
    const sample = async ({ item, bytes }: { item: PassItem; bytes: Uint8Array }) => this.#sample(r, item, bytes);
    const batcher = r.batcher;
    const decoded = new PipelineBuilder()
      .addSource(items)
      .pipe(read, { name: 'read', concurrency: o.readConcurrency })
      .pipe(sample, { name: 'sample', concurrency: r.pool.maxInFlight })
      .disaggregate({ name: 'clips' });
    const batched =
      batcher instanceof GpuClipBatcher
        ? decoded.batch(batcher, { name: 'decode', concurrency: r.pool.maxInFlight + o.decoders, ordered: 'input' })
        : decoded.batch(batcher, { name: 'decode', concurrency: r.pool.maxInFlight, ordered: 'input' });
    return (batched as PipelineBuilder<Releasable>).addSink(2).build({ failureBudget: o.failureBudget, consumer: o.consumer });
  }

  /** One video's clips: its timeline (and packets, for WebCodecs) from the demuxer, then the sampler's draw. */
  async #sample(r: Opened, item: PassItem, bytes: Uint8Array): Promise<ClipJob[]> {
    const o = this.#o;
    const wantPackets = r.webcodecs !== undefined;
    const video = await r.pool.demuxVideo(bytes, { packets: wantPackets, ...o.decode });
    const usable = wantPackets && (await WebCodecsClipDecoder.isSupported(configOf(video)));
    if (o.backend === 'webcodecs' && !usable) throw unsupported(video);
    const demuxed: DemuxedVideo | undefined = usable ? video : undefined;
    const shape = { framesPerClip: o.frames, ...(o.fps !== undefined ? { fps: o.fps } : { stride: o.stride ?? 1 }) };
    const draw = { seed: o.seed, epoch: item.epoch, key: item.key };
    const clips = sampleClips({ frameTimes: video.frameTimes, durationSeconds: video.durationSeconds }, shape, o.sampler, draw, o.pastEnd);
    const many = clips.length > 1;
    return clips.map((clip) => {
      const random =
        o.transform === 'random-crop'
          ? drawClipCrop(video.codedWidth, video.codedHeight, o.cropScale, { ...draw, clip: clip.clipIndex })
          : undefined;
      if (demuxed) this.#roads.webcodecs++;
      else this.#roads.wasm++;
      return {
        key: many ? `${item.key}#${clip.clipIndex}` : item.key,
        label: item.label,
        bytes,
        clip,
        times: clip.frameTimes,
        demuxed,
        flip: random?.flip ?? false,
        ...(random ? { crop: random.crop } : {}),
      };
    });
  }

  protected async openResources(): Promise<Opened> {
    const o = this.#o;
    const ownPool = o.pool === undefined;
    const starting = o.pool ? Promise.resolve(o.pool) : DecodePool.create({ threads: o.threads });
    const pool = await starting;
    let webcodecs: WebCodecsClipDecoder | undefined;
    try {
      const resolved = await resolveSource(this.#source, o.fetch, VIDEO_EXTENSIONS);
      if (!resolved.list)
        throw new OptionError(
          'videoLoader',
          'source',
          this.#source,
          'a folder or a list of files, URLs or items (a video source is shuffled and shared out by rank)',
        );
      const order = listOrder(resolved.list, o);
      let batcher: VideoClipBatcher | GpuClipBatcher;
      if (o.to === 'cpu') {
        batcher = new VideoClipBatcher(pool, {
          batchSize: o.batchSize,
          frames: o.frames,
          height: o.height,
          width: o.width,
          fit: o.transform === 'stretch' ? 'stretch' : 'cover',
          decode: o.decode,
        });
      } else {
        const gpu: GpuContext = 'queue' in o.to ? await acquireGpu({ device: o.to }) : o.to;
        // On a CPU adapter (SwiftShader, lavapipe) the GPU's work is the CPU's too and frames reach it
        // through a bitmap copy, so 'auto' keeps the wasm road there (docs/video.md, measured).
        const webcodecsPays = o.backend === 'webcodecs' || !onCpuAdapter(gpu.device);
        if (o.backend !== 'wasm' && webcodecsPays && typeof VideoDecoder !== 'undefined')
          webcodecs = await WebCodecsClipDecoder.create(gpu.device, { decoders: o.decoders, decodeQueueSize: o.decodeQueueSize });
        const fit = o.transform === 'stretch' ? 'stretch' : 'cover';
        batcher = await GpuClipBatcher.create(gpu.device, pool, { ...o, fit }, webcodecs);
      }
      return { pool, ownPool, order, classes: resolved.classes, batcher, webcodecs };
    } catch (error) {
      await webcodecs?.close();
      if (ownPool) await pool.close();
      throw error;
    }
  }
}

function unsupported(video: DemuxedVideo): Error {
  const what = video.codecString || video.codec;
  return new DecodeError(
    'unknown-format',
    `this browser's VideoDecoder does not take ${what} (backend 'webcodecs'; 'auto' decodes it on the wasm threads)`,
  );
}
