// Clips decoded into batches that live on the GPU: f32 [batch, frames, H, W, C], normalised, one
// GPU buffer per batch, in the same input-order slots and dense batches as the wasm batchers
// (SlotBatcher over GPU buffers). A clip comes either from WebCodecs (VideoDecoder → frame pass,
// straight into its slot) or from the wasm threads (decoded into a wasm scratch clip, uploaded,
// normalised in WGSL, copied into its slot); no pixel comes back to the CPU on either road.
import { type DecodePool, DecodeError, type DemuxedVideo, type SharedClip, type VideoPackets } from '../decode/index.ts';
import { decodeClipInto, SlotBatcher, type FinishedBuffer, type SlotStorage } from '../decode/internal.ts';
import { NormalizeKernel } from '../gpu/index.ts';
import { SlotPool } from '../sync/index.ts';
import type { SampledClip } from './samplers.ts';
import type { EncodedClip, WebCodecsClipDecoder } from './webcodecs.ts';

/** One clip of one video, sampled and ready to decode. */
export interface ClipJob {
  key: string;
  label: number;
  /** The whole file, the clip's packets cut through the video's index (no container opened), or its part of a shared decode. */
  bytes: Uint8Array | VideoPackets | SharedClip;
  clip: SampledClip;
  /** The clip's frame times (= clip.frameTimes), so a job is also a wasm clip batcher's item. */
  times: Float64Array;
  /** Always true: the sampler's times are the frames' own (EncodedClip's ownFrameTimes). */
  ownFrameTimes: true;
  /** The video's packets (WebCodecs road), or undefined for the wasm road. */
  demuxed: DemuxedVideo | undefined;
  crop?: { x: number; y: number; width: number; height: number };
  flip: boolean;
}

/** A batch of normalised clips on the GPU, in one of the loader's buffers until release(). */
export interface VideoDeviceBatch {
  readonly count: number;
  /** [count, frames, height, width, channels]. */
  readonly shape: readonly [number, number, number, number, number];
  readonly dtype: 'float32';
  readonly layout: 'NFHWC';
  /** f32, sized for a full batch; rows past `count` hold stale values. */
  readonly clips: GPUBuffer;
  readonly labels: Int32Array;
  readonly keys: readonly string[];
  /** Presentation time (s) of the frame in each slot, count × frames. */
  readonly frameTimes: Float64Array;
  /** Call after submitting the commands that read `clips`. */
  release(): void;
  [Symbol.dispose](): void;
}

export interface GpuClipShape {
  batchSize: number;
  frames: number;
  height: number;
  width: number;
  fit: 'cover' | 'stretch';
  mean: readonly number[];
  std: readonly number[];
  /** The loader's limits for the wasm road's decodes, as the CPU road passes them. */
  decode?: { maxPixels?: number; maxDurationSeconds?: number; timeLimitMs?: number };
}

const CHANNELS = 3;

/** GPU buffers as SlotBatcher storage: a handle indexes `buffers`; rows move through one scratch buffer (a copy may not read and write one buffer). */
class GpuSlots implements SlotStorage {
  readonly buffers: (GPUBuffer | undefined)[] = [];
  #scratch: GPUBuffer | undefined;
  constructor(readonly device: GPUDevice) {}
  allocate(bytes: number): number {
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.buffers.push(this.device.createBuffer({ size: bytes, usage, label: `tandem clips ${this.buffers.length}` }));
    return this.buffers.length - 1;
  }
  free(handle: number): void {
    this.buffers[handle]?.destroy();
    this.buffers[handle] = undefined;
    if (this.buffers.every((b) => b === undefined)) this.#scratch?.destroy();
  }
  move(handle: number, fromByte: number, toByte: number, bytes: number): void {
    const buffer = this.buffer(handle);
    if (!this.#scratch || this.#scratch.size < bytes)
      this.#scratch = this.device.createBuffer({
        size: bytes,
        usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        label: 'tandem clip move',
      });
    const encoder = this.device.createCommandEncoder({ label: 'tandem clip move' });
    encoder.copyBufferToBuffer(buffer, fromByte, this.#scratch, 0, bytes);
    encoder.copyBufferToBuffer(this.#scratch, 0, buffer, toByte, bytes);
    this.device.queue.submit([encoder.finish()]);
  }
  buffer(handle: number): GPUBuffer {
    const b = this.buffers[handle];
    if (!b) throw new DecodeError('closed', 'the clip batcher is closed');
    return b;
  }
}

/** What a wasm-road clip passes through: its decode target in wasm memory, its upload and its floats. */
interface WasmLane {
  pointer: number;
  bytes: GPUBuffer;
  floats: GPUBuffer;
}

export class GpuClipBatcher extends SlotBatcher<ClipJob, VideoDeviceBatch> {
  readonly #shape: GpuClipShape;
  readonly #pool: DecodePool;
  readonly #device: GPUDevice;
  readonly #webcodecs: WebCodecsClipDecoder | undefined;
  readonly #kernel: NormalizeKernel;
  readonly #lanes: SlotPool<WasmLane>;
  readonly #clipBytes: number;

  private constructor(
    device: GPUDevice,
    pool: DecodePool,
    shape: GpuClipShape,
    kernel: NormalizeKernel,
    webcodecs: WebCodecsClipDecoder | undefined,
    buffers: number,
  ) {
    const pixels = shape.frames * shape.height * shape.width * CHANNELS;
    super(new GpuSlots(device), pixels * 4, shape.batchSize, buffers, shape.frames);
    this.#device = device;
    this.#pool = pool;
    this.#shape = shape;
    this.#kernel = kernel;
    this.#webcodecs = webcodecs;
    this.#clipBytes = pixels;
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.#lanes = new SlotPool(
      Array.from({ length: pool.maxInFlight }, (_, i) => ({
        pointer: pool.malloc(pixels),
        bytes: device.createBuffer({ size: kernel.inputBytes, usage, label: `tandem clip upload ${i}` }),
        floats: device.createBuffer({ size: kernel.outputBytes, usage, label: `tandem clip floats ${i}` }),
      })),
    );
  }

  static async create(
    device: GPUDevice,
    pool: DecodePool,
    shape: GpuClipShape,
    webcodecs: WebCodecsClipDecoder | undefined,
    buffers = 4,
  ): Promise<GpuClipBatcher> {
    const kernel = await NormalizeKernel.create(
      device,
      { images: shape.frames, height: shape.height, width: shape.width, channels: CHANNELS },
      { layout: 'NHWC', mean: shape.mean, std: shape.std },
    );
    return new GpuClipBatcher(device, pool, shape, kernel, webcodecs, buffers);
  }

  get gpuBuffers(): number {
    return this.stats().buffers;
  }

  protected override async fill(
    job: ClipJob,
    _pointer: number,
    buffer: { pointer: number; extra: Float64Array },
    index: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const frames = this.#shape.frames;
    const times = buffer.extra.subarray(index * frames, (index + 1) * frames);
    times.fill(Number.NaN);
    const target = (this.storage as GpuSlots).buffer(buffer.pointer);
    if (job.demuxed && this.#webcodecs) {
      const wantUs = new Float64Array(frames);
      for (let i = 0; i < frames; i++) wantUs[i] = Math.round((job.clip.frameTimes[i] ?? 0) * 1e6);
      const decoded = await this.#webcodecs.decodeClip(
        clipChunks(job.demuxed, job.clip),
        wantUs,
        {
          buffer: target,
          firstFrame: index * frames,
          width: this.#shape.width,
          height: this.#shape.height,
          channels: CHANNELS,
          fit: this.#shape.fit,
          flip: job.flip,
          mean: this.#shape.mean,
          std: this.#shape.std,
          ...(job.crop ? { crop: job.crop } : {}),
        },
        signal,
      );
      for (let i = 0; i < frames; i++) times[i] = (decoded.timestampsUs[i] ?? Number.NaN) / 1e6;
      return;
    }
    const lane = this.#lanes.tryAcquire() ?? (await this.#lanes.acquire(signal));
    try {
      const info = await decodeClipInto(
        this.#pool,
        job.bytes,
        lane.pointer,
        {
          ...this.#shape.decode,
          // The sampler's times are frames' own: frames no clip frame references are skipped.
          frames: { frameTimes: Array.from(job.clip.frameTimes) },
          width: this.#shape.width,
          height: this.#shape.height,
          channels: CHANNELS,
          fit: this.#shape.fit,
          ...(job.crop ? { crop: job.crop } : {}),
          ...(job.flip ? { flip: true } : {}),
        },
        signal,
      );
      times.set(info.timestamps);
      const device = this.#device;
      device.queue.writeBuffer(lane.bytes, 0, new Uint8Array(this.#pool.memory.buffer, lane.pointer, this.#clipBytes));
      const encoder = device.createCommandEncoder({ label: 'tandem clip normalize' });
      this.#kernel.encode(encoder, lane.bytes, lane.floats);
      encoder.copyBufferToBuffer(lane.floats, 0, target, index * this.slotBytes, this.slotBytes);
      device.queue.submit([encoder.finish()]);
    } finally {
      // The next writeBuffer into this lane is a later queue operation than the submit above.
      this.#lanes.release(lane);
    }
  }

  protected override describe(f: FinishedBuffer): VideoDeviceBatch {
    const { frames, height, width } = this.#shape;
    const { buffer, count, guard } = f;
    const clips = (this.storage as GpuSlots).buffer(buffer.pointer);
    return {
      count,
      shape: [count, frames, height, width, CHANNELS],
      dtype: 'float32',
      layout: 'NFHWC',
      get clips() {
        return guard(clips);
      },
      labels: buffer.labels.slice(0, count),
      keys: buffer.keys.slice(0, count),
      frameTimes: buffer.extra.slice(0, count * frames),
      ...f.ends,
    };
  }

  override close(): void {
    super.close();
    for (const lane of this.#lanes.slots) {
      this.#pool.free(lane.pointer);
      lane.bytes.destroy();
      lane.floats.destroy();
    }
    this.#kernel.destroy();
  }
}

/**
 * The packets a clip needs, as WebCodecs chunks: from the last keyframe at or before its first frame
 * to the last packet decoded no later than its last frame (a frame's packet is never decoded after
 * its own time, so every frame up to the clip's end is there).
 */
export function clipChunks(video: DemuxedVideo, clip: SampledClip): EncodedClip {
  const times = clip.frameTimes;
  let first = Infinity,
    last = -Infinity;
  for (const t of times) {
    if (t < first) first = t;
    if (t > last) last = t;
  }
  const firstUs = Math.round(first * 1e6) + 1,
    lastUs = Math.round(last * 1e6) + 1;
  let start = 0;
  for (let i = 0; i < video.count; i++) if (video.key[i] && (video.ptsUs[i] ?? 0) <= firstUs) start = i;
  let end = start + 1;
  while (end < video.count && !((video.dtsUs[end] ?? 0) > lastUs)) end++;
  return packetsAsClip(video, start, end);
}

/** Packets [start, end) of a demuxed video (decode order, `start` a keyframe) as a WebCodecs clip. */
export function packetsAsClip(video: DemuxedVideo, start = 0, end = video.count): EncodedClip {
  const chunks = [];
  for (let i = start; i < end; i++) {
    const offset = video.offset[i] ?? 0;
    chunks.push({
      key: video.key[i] === 1,
      timestampUs: video.ptsUs[i] ?? 0,
      durationUs: video.durationUs[i] ?? 0,
      data: video.data.subarray(offset, offset + (video.size[i] ?? 0)),
    });
  }
  return { config: configOf(video), chunks };
}

/** The VideoDecoderConfig of a demuxed video. */
export function configOf(video: DemuxedVideo): VideoDecoderConfig {
  const tags = video.colorSpace;
  return {
    codec: video.codecString,
    codedWidth: video.codedWidth,
    codedHeight: video.codedHeight,
    // Frames as stored, square pixels: an anamorphic stream's frames would otherwise come out
    // stretched to its display aspect, and crops drawn in the stored size (as the wasm road draws
    // them) would cover another part of the picture.
    displayAspectWidth: video.codedWidth,
    displayAspectHeight: video.codedHeight,
    // What the wasm road assumes for each tag the stream leaves out: BT.601, limited range. The
    // DOM typings lag the WebCodecs registry (no 'bt2020-ncl' yet), hence the cast.
    colorSpace: {
      matrix: tags?.matrix ?? 'smpte170m',
      primaries: tags?.primaries ?? 'smpte170m',
      transfer: tags?.transfer ?? 'smpte170m',
      fullRange: tags?.fullRange ?? false,
    } as VideoColorSpaceInit,
    ...(video.description ? { description: video.description } : {}),
  };
}
