// videoLoader(): one object from video files to batches of clips, the video counterpart of loader():
//
//   source videos (seeded order per epoch, this rank's share)
//     → read      event loop, async I/O. On the wasm road an MP4 is read in ranges: its index
//                 (mp4-index.ts), the clip sampler's draw over its frame times, then each clip's
//                 packets (clip-packets.ts); the rest of the file is never read. A Matroska or
//                 WebM file is walked for its blocks (mkv-index.ts): through ranged reads when it
//                 is large, else in memory after one whole read; the same way after. Other
//                 videos, and every video bound for WebCodecs, are read whole.
//     → sample    for a video handed on whole: the wasm demuxer (the times; the packets too for
//                 WebCodecs), or an index that gives times but no packets road → clip sampler
//                 → a crop box and flip per clip; each clip becomes its own item
//     → decode    WebCodecs (VideoDecoder → WGSL frame pass, into the batch's GPU buffer) or the
//                 wasm threads (into wasm memory; for a GPU, uploaded and normalised in WGSL): a
//                 clip's packets with no container opened, or the whole file
//     → the consumer's `for await`: VideoClipBatch (u8, wasm memory) or VideoDeviceBatch (f32, GPU)
//
// A `for await` runs `epochs` epochs and ends; the next one continues where it stopped (the next
// epoch after a full pass, the consumer's clip after a `break`), or from setEpoch(n). The position
// is (the video in the order, clips of it done with): a resumed pass samples that video again (the
// same clips: their draws are seeded by (seed, epoch, key)) and skips those.
import {
  type ByteSource,
  DecodeError,
  DecodePool,
  type DemuxedVideo,
  memoryByteSource,
  SharedClip,
  SharedClipDecode,
  VideoClipBatcher,
  type VideoClipBatch,
  type VideoPackets,
} from '../decode/index.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import { DEMUX_LIMITS } from '../decode/internal.ts';
import { onCpuAdapter } from '../gpu/internal.ts';
import {
  CellPosition,
  isHubSource,
  isParquetSource,
  isTfjs,
  openTfjsClipTarget,
  type ClipTensorBatch,
  type TfNamespaceLike,
  listOrder,
  loadParquetRows,
  listStartOf,
  LoaderShell,
  resolveSource,
  type PassItem,
  type PassOrder,
  type Releasable,
} from '../loader/internal.ts';
import type { LoaderSource } from '../loader/index.ts';
import type { RangedSource } from '../loader/internal.ts';
import { OptionError } from '../errors/index.ts';
import { LoaderError } from '../loader/index.ts';
import { PipelineBuilder, type Pipeline, type StageContext } from '../pipeline/index.ts';
import { drawClipCrop } from './crop.ts';
import { readClipPackets, sharingGroups } from './clip-packets.ts';
import { IndexCache } from './index-cache.ts';
import { readMatroskaIndex } from './mkv-index.ts';
import { type Mp4Index, type Mp4Timeline, readMp4Index, readMp4Timeline } from './mp4-index.ts';
import { configOf, GpuClipBatcher, type ClipJob, type VideoDeviceBatch } from './gpu-clips.ts';
import { checkVideoLoaderOptions, type VideoLoaderOptions, type VideoLoaderSettings } from './options.ts';
import { sampleClips, type SampledClip } from './samplers.ts';
import { clipping, type VideoLoaderState } from './state.ts';
import { WebCodecsClipDecoder } from './webcodecs.ts';

/** The file names a folder source keeps. */
export const VIDEO_EXTENSIONS = /\.(mp4|m4v|mov|webm|mkv)$/i;

/** What a `for await` over the video loader gives: f32 clips on the GPU with `to` a device, else u8 clips in wasm memory. */
export type VideoLoaderBatch<O extends VideoLoaderOptions> = O extends { to: GPUDevice | GpuContext }
  ? VideoDeviceBatch
  : O extends { to: TfNamespaceLike }
    ? ClipTensorBatch
    : VideoClipBatch;

/** Clips sent down each road so far (counted when sampled; a clip that then fails to decode is in failures() too). */
export interface VideoRoads {
  webcodecs: number;
  wasm: number;
}

/**
 * The wasm road's decode jobs so far, counted when sampled: `jobs` for `clips` clips. Clips of one
 * video that need some of the same frames share one job (`shared` of the clips).
 */
export interface VideoDecodes {
  clips: number;
  jobs: number;
  shared: number;
}

/**
 * Where the videos' timelines came from so far: the container's index (an MP4's sample tables,
 * read in the sample stage without a decode thread) or a demuxer scan of every packet on a
 * decode thread (other containers, fragmented or edited MP4s, and every video bound for WebCodecs,
 * which needs the packets).
 */
export interface VideoTimelines {
  index: number;
  scan: number;
}

/**
 * What the loader has read of its videos so far: `bytes` in all, in `requests` reads; `ranged`
 * videos were read in ranges (an MP4's index and its clips' packets), `whole` videos whole;
 * `cachedIndexes` of the ranged ones took their index from an earlier epoch's read (`indexCacheBytes`).
 */
export interface VideoReads {
  bytes: number;
  requests: number;
  ranged: number;
  whole: number;
  cachedIndexes: number;
}

/** A video of the pass, numbered in its order (the position logs its clips under that number). */
interface PassVideo {
  key: string;
  item: PassItem;
  seq: number;
}

type Timeline = Pick<Mp4Timeline, 'frameTimes' | 'durationSeconds' | 'codedWidth' | 'codedHeight'>;

/**
 * A video as the read stage hands it on: its clips drawn and their packets read through its index
 * (`packets[i]` for `clips[skip + i]`), or its bytes whole.
 */
type ReadVideo = PassVideo &
  ({ bytes: Uint8Array } | { timeline: Timeline; clips: SampledClip[]; packets: Array<VideoPackets | SharedClip> });

/**
 * A Matroska walk over HTTP reads through in windows this large: a round trip costs more than any
 * frame's bytes, so no header is read alone; the file is never held whole.
 */
const REMOTE_MATROSKA_WINDOW = 8 << 20;
/** At most this many clips share one decode, and their frames at most this many bytes of staging. */
const MAX_SHARED_CLIPS = 16;
const MAX_SHARED_BYTES = 32 << 20;

/** The frame times of several clips, one after another. */
function joined(times: ReadonlyArray<ArrayLike<number>>): Float64Array {
  const out = new Float64Array(times.reduce((n, t) => n + t.length, 0));
  let at = 0;
  for (const t of times) {
    out.set(t, at);
    at += t.length;
  }
  return out;
}

interface Opened {
  pool: DecodePool;
  ownPool: boolean;
  order: PassOrder;
  classes: readonly string[];
  batcher: VideoClipBatcher | GpuClipBatcher;
  webcodecs: WebCodecsClipDecoder | undefined;
  /** Closes what the source opened (a Parquet source's files). */
  closeSource: () => Promise<void>;
  /** `to: tf`: CPU clip batches into tf.js tensors. */
  tfjs: Awaited<ReturnType<typeof openTfjsClipTarget>> | undefined;
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
  /** Where the next pass starts (epoch, videos into it, clips of that video done), and where the current one stands. */
  #epoch = 0;
  #offset = 0;
  #clips = 0;
  #startStep = 0;
  /** The epoch the pass in progress (or interrupted) ends before; undefined between passes. */
  #passEnd: number | undefined;
  /** Whether `resumeFrom` has been applied (once, at the first pass). */
  #resumed = false;
  #position: CellPosition;
  readonly #roads: VideoRoads = { webcodecs: 0, wasm: 0 };
  readonly #decodes: VideoDecodes = { clips: 0, jobs: 0, shared: 0 };
  /** Shared decodes not yet done with: freed at the end of their pass should it stop first. */
  readonly #shared = new Set<SharedClipDecode>();
  readonly #timelines: VideoTimelines = { index: 0, scan: 0 };
  readonly #reads: VideoReads = { bytes: 0, requests: 0, ranged: 0, whole: 0, cachedIndexes: 0 };
  readonly #indexes: IndexCache;

  constructor(source: LoaderSource, settings: VideoLoaderSettings) {
    super(settings.signal);
    this.#source = source;
    this.#o = settings;
    this.#position = new CellPosition(settings.batchSize);
    this.#indexes = new IndexCache(settings.indexCacheBytes);
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

  /** Clips decoded on the wasm threads so far, and the jobs that decoded them. */
  decodes(): VideoDecodes {
    return { ...this.#decodes };
  }

  #countDecode(input: Uint8Array | VideoPackets | SharedClip): void {
    this.#roads.wasm++;
    const d = this.#decodes;
    d.clips++;
    const shared = input instanceof SharedClip;
    if (shared) d.shared++;
    if (!shared || input.member === 0) d.jobs++;
  }

  /** Videos whose timeline came from the container's index, and those scanned by the demuxer. */
  timelines(): VideoTimelines {
    return { ...this.#timelines };
  }

  /** Bytes and reads so far, and how many videos were read in ranges and how many whole. */
  reads(): VideoReads {
    return { ...this.#reads };
  }

  /**
   * Starts the next pass at the beginning of `epoch` (new shuffle, new clips and crops). A `for
   * await` runs `epochs` epochs from where the last one stopped: the next epoch after a pass that
   * ran to its end, the clip after the consumer's last batch after a `break`.
   */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new OptionError('videoLoader.setEpoch', 'epoch', epoch, 'a whole number');
    this.betweenPasses('setEpoch');
    this.#epoch = epoch;
    this.#offset = 0;
    this.#clips = 0;
    this.#position = new CellPosition(this.#o.batchSize);
    const perEpoch = this.opened?.order.perEpoch;
    this.#startStep = perEpoch === undefined ? 0 : epoch * perEpoch;
    this.#passEnd = undefined;
    this.#resumed = true; // an explicit epoch wins over resumeFrom
  }

  /**
   * Where the consumer stands, as JSON (a batch in hand counts as taken): pass it as `resumeFrom`
   * to a videoLoader over the same source and settings to continue with exactly the same batches.
   */
  state(): VideoLoaderState {
    const order = this.opened?.order;
    if (!order) throw new LoaderError('busy', 'videoLoader.state: the loader has not started yet (take a batch first)');
    const { sampler, until } = order.state(this.#startStep + this.#position.items, this.#passEnd);
    if (!sampler) throw new LoaderError('busy', 'videoLoader.state: the order has no sampler');
    return {
      kind: 'tandem.video',
      version: 1,
      sampler,
      clips: this.#position.slots,
      ...(until === undefined ? {} : { until }),
      clipping: clipping(this.#o),
    };
  }

  /** The epoch the next clip belongs to. */
  get epoch(): number {
    const perEpoch = this.opened?.order.perEpoch;
    return perEpoch ? Math.floor((this.#startStep + this.#position.items) / perEpoch) : this.#epoch;
  }

  /** Batch buffers not back with the loader (0 once every batch is released). */
  held(): number {
    const batcher = this.opened?.batcher;
    if (!batcher) return 0;
    const s = batcher.stats();
    return s.buffers - s.free;
  }

  /** Shared decodes whose clips a stopped pass never filled. */
  #dropShared(): void {
    for (const shared of [...this.#shared]) shared.close();
  }

  protected async closeOpened(r: Opened): Promise<void> {
    this.#dropShared();
    await r.webcodecs?.close();
    await r.closeSource();
    await r.tfjs?.close();
    r.batcher.close();
    if (r.ownPool) await r.pool.close();
  }

  protected override batchTaken(batch: Releasable): void {
    // Counted as the consumer takes it: a state() taken while it is in hand includes it.
    this.#position.consumed(batch.keys ?? []);
  }

  protected override passEnded(finished: boolean): void {
    this.#dropShared();
    const perEpoch = this.opened?.order.perEpoch;
    if (perEpoch === undefined) return;
    // A pass that ran to its end is done with every clip, also failed ones after the last batch.
    let step = this.#startStep + this.#position.items;
    let clips = this.#position.slots;
    if (finished) {
      step = (this.#passEnd ?? this.#epoch + this.#o.epochs) * perEpoch;
      clips = 0;
      this.#passEnd = undefined;
    }
    this.#startStep = step;
    this.#clips = clips;
    this.#position = new CellPosition(this.#o.batchSize, clips);
    if (perEpoch > 0) this.#epoch = Math.floor(step / perEpoch);
    this.#offset = step - this.#epoch * perEpoch;
  }

  protected buildPass(r: Opened): Pipeline<Releasable> {
    const resumeFrom = this.#o.resumeFrom;
    if (resumeFrom && !this.#resumed) {
      const here = clipping(this.#o);
      if (resumeFrom.clipping !== undefined && resumeFrom.clipping !== here)
        throw new OptionError(
          'videoLoader options',
          'resumeFrom',
          resumeFrom,
          `the state of a video loader that draws clips alike (it drew ${resumeFrom.clipping}, this one ${here})`,
        );
      const { epoch, offset, until } = listStartOf(resumeFrom, r.order, 'videoLoader options');
      this.#epoch = epoch;
      this.#offset = offset;
      this.#clips = resumeFrom.clips;
      this.#passEnd = until;
    }
    this.#resumed = true;
    this.#startStep = this.#epoch * (r.order.perEpoch ?? 0) + this.#offset;
    this.#position = new CellPosition(this.#o.batchSize, this.#clips);
    if (this.#passEnd === undefined || this.#epoch >= this.#passEnd) this.#passEnd = this.#epoch + this.#o.epochs;
    return this.#build(r, this.#passEnd);
  }

  #build(r: Opened, passEnd: number): Pipeline<Releasable> {
    const o = this.#o;
    const position = this.#position;
    // The first video of a resumed pass gives only the clips after those done with.
    const skip = this.#clips;
    const items = r.order.items(this.#epoch, this.#offset, passEnd - this.#epoch, () => {}) as Iterable<PassItem>;
    // The key rides at the top of each stage's item: a failure is reported under it.
    // The stages' signal ends a Matroska walk and a demux when the pass stops (break, close, abort).
    const read = (v: PassVideo, ctx: StageContext) => this.#read(r, v, v.seq === 0 ? skip : 0, ctx.signal);
    const sample = (v: ReadVideo, ctx: StageContext) => this.#sample(r, v, position, v.seq === 0 ? skip : 0, ctx.signal);
    const batcher = r.batcher;
    const decoded = new PipelineBuilder()
      .addSource(numbered(items, position))
      .pipe(read, { name: 'read', concurrency: o.readConcurrency })
      .pipe(sample, { name: 'sample', concurrency: r.pool.maxInFlight })
      .disaggregate({ name: 'clips' });
    const tfjs = r.tfjs;
    let batched: PipelineBuilder<Releasable>;
    if (batcher instanceof GpuClipBatcher)
      batched = decoded.batch(batcher, { name: 'decode', concurrency: r.pool.maxInFlight + o.decoders, ordered: 'input' });
    else {
      const clips = decoded.batch(batcher, { name: 'decode', concurrency: r.pool.maxInFlight, ordered: 'input' });
      batched = tfjs ? clips.pipe((b) => tfjs.convert(b), { name: 'to-tfjs', concurrency: 1 }) : clips;
    }
    return batched.addSink(2).build({ failureBudget: o.failureBudget, consumer: o.consumer });
  }

  /**
   * Reads one video. Bound for the wasm threads, it is decoded from its packets: an MP4 read in
   * ranges through its index (the sampler's draw, then the packets of the clips after the first
   * `skip`), a Matroska or WebM file walked for its blocks (in ranges when it is at least
   * `matroskaReadWholeBelow` bytes, else read whole first); a video neither index takes, and every
   * video bound for WebCodecs, is handed on whole.
   */
  async #read(r: Opened, v: PassVideo, skip: number, signal: AbortSignal): Promise<ReadVideo> {
    const o = this.#o;
    const reads = this.#reads;
    const wasmRoad = r.webcodecs === undefined && o.backend !== 'webcodecs';
    const ranged = wasmRoad ? await v.item.open?.() : undefined;
    if (!ranged) {
      const bytes = await v.item.read();
      reads.whole++;
      reads.requests++;
      reads.bytes += bytes.length;
      return wasmRoad ? this.#fromBytes(r, v, bytes, skip, signal) : { ...v, bytes };
    }
    // The first read (the MP4 reader's head) is kept: a Matroska walk starts in the same bytes.
    let head: Uint8Array | undefined;
    const source: RangedSource = {
      size: ranged.size,
      read: async (offset, length) => {
        if (head && offset + length <= head.length) return head.subarray(offset, offset + length);
        const bytes = await ranged.read(offset, length);
        if (offset === 0) head ??= bytes;
        reads.requests++;
        reads.bytes += bytes.length;
        return bytes;
      },
      close: () => ranged.close(),
    };
    try {
      const cached = this.#indexes.get(v.key, ranged.size);
      if (cached) reads.cachedIndexes++;
      const index =
        cached ??
        (await readMp4Index(source)) ??
        (ranged.size < o.matroskaReadWholeBelow
          ? undefined
          : await readMatroskaIndex(source, { readAhead: ranged.remote ? REMOTE_MATROSKA_WINDOW : 'adaptive', signal }));
      if (!index?.codec || overLimits(index, o.decode)) {
        reads.whole++;
        return this.#fromBytes(r, v, await readWhole(source), skip, signal);
      }
      if (!cached) this.#indexes.put(v.key, ranged.size, index);
      reads.ranged++;
      return { ...v, ...(await this.#clipsOf(r, v.item, index, source, skip)) };
    } finally {
      await source.close();
    }
  }

  /** A video read whole, on the wasm road: its packets where an index takes it, else its bytes. */
  async #fromBytes(r: Opened, v: PassVideo, bytes: Uint8Array, skip: number, signal: AbortSignal): Promise<ReadVideo> {
    const index = (await readMatroskaIndex(memoryByteSource(bytes), { signal })) ?? readMp4Timeline(bytes);
    if (!index?.codec || overLimits(index, this.#o.decode)) return { ...v, bytes };
    // Kept for later epochs: where the item takes ranged reads, they read only the clips' packets.
    this.#indexes.put(v.key, bytes.length, index);
    return { ...v, ...(await this.#clipsOf(r, v.item, index, memoryByteSource(bytes), skip)) };
  }

  /**
   * The sampler's clips of an indexed video, and the packets of those after the first `skip`.
   * Clips whose decodes would share frames get one read and one decode between them (a
   * SharedClipDecode), unless each clip has a crop of its own.
   */
  async #clipsOf(r: Opened, item: PassItem, index: Mp4Index, source: ByteSource, skip: number) {
    const o = this.#o;
    const clips = this.#draw(item, index);
    const wanted = clips.slice(skip).map((c) => c.frameTimes);
    const clipBytes = o.frames * o.height * o.width * 3;
    const maxMembers =
      o.transform === 'random-crop' ? 1 : Math.max(1, Math.min(MAX_SHARED_CLIPS, Math.floor(MAX_SHARED_BYTES / clipBytes)));
    const groups = sharingGroups(index, wanted, maxMembers);
    const read = await Promise.all(groups.map((g) => readClipPackets(source, index, joined(g.map((i) => wanted[i] ?? [])))));
    // Made only once every read succeeded: a shared decode is never left without its clips.
    const packets = new Array<VideoPackets | SharedClip>(wanted.length);
    groups.forEach((g, k) => {
      const p = read[k]?.packets as VideoPackets;
      if (g.length === 1) packets[g[0] ?? 0] = p;
      else {
        const shared: SharedClipDecode = new SharedClipDecode(
          r.pool,
          p,
          g.map((i) => wanted[i] ?? []),
          () => this.#shared.delete(shared),
        );
        this.#shared.add(shared);
        for (const [member, i] of g.entries()) packets[i] = shared.clip(member);
      }
    });
    return { timeline: index, clips, packets };
  }

  /** The sampler's clips of a video with this timeline (seeded by the item's epoch and key). */
  #draw(item: PassItem, video: Timeline): SampledClip[] {
    const o = this.#o;
    const shape = { framesPerClip: o.frames, ...(o.fps !== undefined ? { fps: o.fps } : { stride: o.stride ?? 1 }) };
    const draw = { seed: o.seed, epoch: item.epoch, key: item.key };
    return sampleClips({ frameTimes: video.frameTimes, durationSeconds: video.durationSeconds }, shape, o.sampler, draw, o.pastEnd);
  }

  /**
   * One video's clips as decode jobs: drawn in the read stage with their packets, or here from its
   * timeline (an MP4's index, or the demuxer's scan, with the packets for WebCodecs). Their keys
   * are logged in `position` under the video's number, and the first `skip` clips (done with
   * before a resume) are left out.
   */
  async #sample(r: Opened, v: ReadVideo, position: CellPosition, skip: number, signal: AbortSignal): Promise<ClipJob[]> {
    const o = this.#o;
    const { item, seq } = v;
    let video: Timeline;
    let clips: SampledClip[];
    let inputs: (clip: number) => Uint8Array | VideoPackets | SharedClip;
    let demuxed: DemuxedVideo | undefined;
    if ('packets' in v) {
      video = v.timeline;
      clips = v.clips;
      inputs = (i) => v.packets[i - skip] as VideoPackets | SharedClip;
      this.#timelines.index++;
    } else {
      const bytes = v.bytes;
      const wantPackets = r.webcodecs !== undefined;
      // The wasm road needs only the times: an MP4's index gives them here, off the decode threads.
      const indexed = wantPackets || o.backend === 'webcodecs' ? undefined : indexedTimeline(bytes, o.decode);
      if (indexed) {
        video = indexed;
        this.#timelines.index++;
      } else {
        const scanned = await r.pool.demuxVideo(bytes, { packets: wantPackets, ...o.decode }, signal);
        this.#timelines.scan++;
        const usable = wantPackets && (await WebCodecsClipDecoder.isSupported(configOf(scanned)));
        if (o.backend === 'webcodecs' && !usable) throw unsupported(scanned);
        if (usable) demuxed = scanned;
        video = scanned;
      }
      clips = this.#draw(item, video);
      inputs = () => bytes;
    }
    const many = clips.length > 1;
    const keys = clips.map((clip) => (many ? `${item.key}#${clip.clipIndex}` : item.key));
    position.reached(seq, keys);
    const jobs: ClipJob[] = [];
    for (const clip of skip > 0 ? clips.slice(skip) : clips) {
      const random =
        o.transform === 'random-crop'
          ? drawClipCrop(video.codedWidth, video.codedHeight, o.cropScale, {
              seed: o.seed,
              epoch: item.epoch,
              key: item.key,
              clip: clip.clipIndex,
            })
          : undefined;
      const input = inputs(clip.clipIndex);
      if (demuxed) this.#roads.webcodecs++;
      else this.#countDecode(input);
      jobs.push({
        key: keys[clip.clipIndex] ?? item.key,
        label: item.label,
        bytes: input,
        clip,
        times: clip.frameTimes,
        ownFrameTimes: true,
        demuxed,
        flip: random?.flip ?? false,
        ...(random ? { crop: random.crop } : {}),
      });
    }
    return jobs;
  }

  protected async openResources(): Promise<Opened> {
    const o = this.#o;
    const ownPool = o.pool === undefined;
    const starting = o.pool ? Promise.resolve(o.pool) : DecodePool.create({ threads: o.threads });
    const pool = await starting;
    let webcodecs: WebCodecsClipDecoder | undefined;
    let closeSource = async () => {};
    let tfjs: Opened['tfjs'];
    try {
      const source = this.#source;
      // A Parquet or Hub source's rows are the videos (the reader is loaded only for one).
      const parquet =
        isParquetSource(source) || isHubSource(source) ? await (await loadParquetRows())(source, o.fetch, 'videoLoader') : undefined;
      if (parquet) closeSource = () => parquet.close();
      const resolved = parquet ? { list: parquet.list, classes: parquet.classes } : await resolveSource(source, o.fetch, VIDEO_EXTENSIONS);
      if (!resolved.list)
        throw new OptionError(
          'videoLoader',
          'source',
          this.#source,
          'a folder or a list of files, URLs or items (a video source is shuffled and shared out by rank)',
        );
      const order = listOrder(resolved.list, o);
      let batcher: VideoClipBatcher | GpuClipBatcher;
      if (o.to === 'cpu' || isTfjs(o.to)) {
        batcher = new VideoClipBatcher(pool, {
          batchSize: o.batchSize,
          frames: o.frames,
          height: o.height,
          width: o.width,
          fit: o.transform === 'stretch' ? 'stretch' : 'cover',
          decode: o.decode,
        });
        if (isTfjs(o.to)) tfjs = await openTfjsClipTarget(o.to, { ...o, frames: o.frames });
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
      return { pool, ownPool, order, classes: resolved.classes, batcher, webcodecs, closeSource, tfjs };
    } catch (error) {
      await webcodecs?.close();
      await tfjs?.close();
      await closeSource();
      if (ownPool) await pool.close();
      throw error;
    }
  }
}

/** The pass's videos, numbered in order as the position logs them. */
function* numbered(items: Iterable<PassItem>, position: CellPosition): Generator<PassVideo> {
  for (const item of items) yield { key: item.key, item, seq: position.yielded() };
}

/**
 * An MP4's timeline from its index, where the demuxer would give the same times; undefined where
 * it must scan instead, and where the file is over the limits (the scan then fails it by name).
 */
function indexedTimeline(bytes: Uint8Array, limits: VideoLoaderSettings['decode']): Mp4Timeline | undefined {
  const t = readMp4Timeline(bytes);
  return t && !overLimits(t, limits) ? t : undefined;
}

function overLimits(t: Mp4Timeline, limits: VideoLoaderSettings['decode']): boolean {
  const maxSeconds = limits.maxDurationSeconds ?? DEMUX_LIMITS.maxDurationSeconds;
  const maxPixels = limits.maxPixels ?? DEMUX_LIMITS.maxPixels;
  return (maxSeconds > 0 && t.durationSeconds > maxSeconds) || t.codedWidth * t.codedHeight > maxPixels;
}

/** The whole of a ranged source, in one read. */
async function readWhole(source: RangedSource): Promise<Uint8Array> {
  const bytes = await source.read(0, source.size);
  if (bytes.length !== source.size) throw new DecodeError('truncated', `read ${bytes.length} of the file's ${source.size} bytes`);
  return bytes;
}

function unsupported(video: DemuxedVideo): Error {
  const what = video.codecString || video.codec;
  return new DecodeError(
    'unknown-format',
    `this browser's VideoDecoder does not take ${what} (backend 'webcodecs'; 'auto' decodes it on the wasm threads)`,
  );
}
