// The WebCodecs clip decoder in headless Chromium: frames of clips encoded in the page (H.264 as
// MP4 stores it, VP8, VP9) go from VideoDecoder into a GPU buffer with no readback, and match a CPU
// reference of the wasm path's geometry, resize and normalisation to 1.5/255 (0..1 scale, before
// normalisation); frame selection follows "the frame shown at t"; failures are typed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeError, DecodePool } from '../../src/decode/index.ts';
import { acquireGpu, type GpuContext, readBuffer } from '../../src/gpu/index.ts';
import { FramePass } from '../../src/video/frame-pass.ts';
import { type ClipFrameTarget, type EncodedClip, WebCodecsClipDecoder } from '../../src/video/webcodecs.ts';
import { countReadbacks, describeReadbacks } from '../shared/readbacks.ts';
import { decodeToRgba, encodeClip, FRAME_US, type RgbaFrame, watchWebCodecs } from '../shared/webcodecs-clips.ts';
import { clipOfDemuxed, wasmFrames } from '../shared/webcodecs-fixtures.ts';
import { maxSlotDiff, referenceBytes } from '../shared/webcodecs-reference.ts';

const TOLERANCE = 1.5 / 255;
const H264 = 'avc1.42001f';

let gpu: GpuContext;
let decoder: WebCodecsClipDecoder;
let watch: ReturnType<typeof watchWebCodecs>;
const clips = new Map<string, { clip: EncodedClip; frames: RgbaFrame[] }>();

async function clipOf(codec: string, frames = 6, width = 160, height = 96) {
  const key = `${codec} ${frames} ${width}x${height}`;
  let c = clips.get(key);
  if (!c) {
    const clip = await encodeClip(codec, width, height, frames);
    c = { clip, frames: await decodeToRgba(clip) };
    clips.set(key, c);
  }
  return c;
}

function makeTarget(slots: number, t: Omit<ClipFrameTarget, 'buffer'>): ClipFrameTarget {
  const bytes = (t.firstFrame + slots) * t.width * t.height * t.channels * 4;
  const buffer = gpu.device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  return { ...t, buffer };
}

async function read(t: ClipFrameTarget): Promise<Float32Array> {
  return new Float32Array(await readBuffer(gpu.device, t.buffer));
}

/** The definition: the last frame with timestamp ≤ t, else the first. */
function shownAt(frames: readonly RgbaFrame[], t: number): RgbaFrame {
  let pick = frames[0] as RgbaFrame;
  for (const f of frames) if (f.timestampUs <= t) pick = f;
  return pick;
}

const code = async (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof DecodeError ? e.code : `not a DecodeError: ${String(e)}`),
  );

beforeAll(async () => {
  watch = watchWebCodecs();
  gpu = await acquireGpu();
  decoder = await WebCodecsClipDecoder.create(gpu.device, { decoders: 2, decodeQueueSize: 4 });
});

afterAll(async () => {
  await decoder?.close();
  watch?.restore();
  gpu?.close();
});

describe('WebCodecsClipDecoder (Chromium)', () => {
  const geometries: [string, Omit<ClipFrameTarget, 'buffer'>][] = [
    ['cover 64×64, RGB', { firstFrame: 0, width: 64, height: 64, channels: 3, fit: 'cover', flip: false }],
    [
      'crop then stretch to 48×40, flipped, RGBA',
      {
        firstFrame: 2,
        width: 48,
        height: 40,
        channels: 4,
        fit: 'stretch',
        flip: true,
        crop: { x: 10, y: 8, width: 100, height: 70 },
        mean: [0.5, 0.4, 0.3, 0.5],
        std: [0.25, 0.5, 0.2, 2],
      },
    ],
    [
      'upscale to 200×130, crop + cover',
      { firstFrame: 0, width: 200, height: 130, channels: 3, fit: 'cover', flip: false, crop: { x: 3, y: 5, width: 120, height: 80 } },
    ],
  ];
  for (const codec of [H264, 'vp8', 'vp09.00.10.08']) {
    it(`${codec}: every frame matches the CPU reference within 1.5/255 for each geometry, with zero readbacks`, async () => {
      const { clip, frames } = await clipOf(codec);
      expect(await WebCodecsClipDecoder.isSupported(clip.config)).toBe(true);
      if (codec === H264) expect(clip.config.description).toBeDefined();
      expect(frames.length).toBe(6);
      const want = Float64Array.from(frames, (f) => f.timestampUs);
      let worst = 0;
      for (const [name, geometry] of geometries) {
        const target = makeTarget(want.length, geometry);
        const counted = await countReadbacks(() => decoder.decodeClip(clip, want, target));
        expect(counted.readbacks, `${name}: readbacks ${describeReadbacks(counted)}`).toBe(0);
        expect(Array.from(counted.result.timestampsUs)).toEqual(Array.from(want));
        expect(counted.result.framesWritten).toBe(frames.length);
        const gpuValues = await read(target);
        frames.forEach((frame, i) => {
          const diff = maxSlotDiff(gpuValues, i, referenceBytes(frame, geometry), target);
          expect(diff, `${name}, frame ${i}`).toBeLessThanOrEqual(TOLERANCE);
          worst = Math.max(worst, diff);
        });
        if (geometry.flip) {
          // The same comparison against the unflipped reference fails by far: the check sees a flip.
          const unflipped = maxSlotDiff(gpuValues, 0, referenceBytes(frames[0] as RgbaFrame, { ...geometry, flip: false }), target);
          expect(unflipped).toBeGreaterThan(0.2);
        }
        // Frames differ from one another, so a wrong frame in a slot would be seen.
        expect(maxSlotDiff(gpuValues, 1, referenceBytes(frames[0] as RgbaFrame, geometry), target)).toBeGreaterThan(0.1);
        target.buffer.destroy();
      }
      expect(watch.openFrames()).toBe(0);
      console.log(`${codec}: largest difference from the reference ${(worst * 255).toFixed(3)}/255`);
    });
  }

  it('frame selection: times between frames, repeats, out of order, before the first and past the last', async () => {
    const { clip, frames } = await clipOf(H264);
    const last = (frames.length - 1) * FRAME_US;
    const want = Float64Array.from([
      -5000,
      0,
      FRAME_US - 1,
      FRAME_US,
      2.5 * FRAME_US,
      FRAME_US,
      last + 1e9,
      FRAME_US / 2,
      last,
      3 * FRAME_US + 1,
    ]);
    const geometry = { firstFrame: 1, width: 32, height: 24, channels: 3, fit: 'stretch', flip: false } as const;
    const target = makeTarget(want.length, geometry);
    const result = await decoder.decodeClip(clip, want, target);
    const expected = Array.from(want, (t) => shownAt(frames, t).timestampUs);
    expect(Array.from(result.timestampsUs)).toEqual(expected);
    expect(expected).toEqual([0, 0, 0, FRAME_US, 2 * FRAME_US, FRAME_US, last, 0, last, 3 * FRAME_US]);
    expect(result.framesWritten).toBe(new Set(expected).size);
    const values = await read(target);
    want.forEach((t, i) => {
      expect(maxSlotDiff(values, i, referenceBytes(shownAt(frames, t), geometry), target), `slot ${i} (t ${t})`).toBeLessThanOrEqual(
        TOLERANCE,
      );
    });
    target.buffer.destroy();
  });

  it('stops feeding once every wanted time is settled', async () => {
    const { clip, frames } = await clipOf(H264, 24);
    const want = Float64Array.from([FRAME_US, 0]);
    const geometry = { firstFrame: 0, width: 16, height: 16, channels: 3, fit: 'cover', flip: false } as const;
    const target = makeTarget(2, geometry);
    const result = await decoder.decodeClip(clip, want, target);
    expect(Array.from(result.timestampsUs)).toEqual([FRAME_US, 0]);
    expect(result.chunksFed).toBeLessThan(clip.chunks.length);
    const values = await read(target);
    expect(maxSlotDiff(values, 0, referenceBytes(frames[1] as RgbaFrame, geometry), target)).toBeLessThanOrEqual(TOLERANCE);
    expect(watch.openFrames()).toBe(0);
    target.buffer.destroy();
  });

  it('clips wait for one of the two decoders; each gets its own frames; never more than 4 chunks queued', async () => {
    const sources = await Promise.all([clipOf(H264), clipOf('vp8'), clipOf('vp09.00.10.08'), clipOf('vp8', 24)]);
    const geometry = { firstFrame: 0, width: 24, height: 24, channels: 3, fit: 'cover', flip: true } as const;
    const jobs = sources.map(async ({ clip, frames }) => {
      const want = Float64Array.from(frames, (f) => f.timestampUs).reverse();
      const target = makeTarget(want.length, geometry);
      const result = await decoder.decodeClip(clip, want, target);
      return { want, frames, target, result };
    });
    for (const { want, frames, target, result } of await Promise.all(jobs)) {
      expect(Array.from(result.timestampsUs)).toEqual(Array.from(want));
      const values = await read(target);
      want.forEach((t, i) => {
        expect(maxSlotDiff(values, i, referenceBytes(shownAt(frames, t), geometry), target)).toBeLessThanOrEqual(TOLERANCE);
      });
      target.buffer.destroy();
    }
    expect(watch.maxQueued()).toBeGreaterThan(0);
    expect(watch.maxQueued()).toBeLessThanOrEqual(4);
    expect(watch.openFrames()).toBe(0);
  });

  it('a corrupted chunk fails its clip with DecodeError corrupt; the next clip decodes fine', async () => {
    for (const codec of [H264, 'vp8']) {
      const { clip, frames } = await clipOf(codec);
      const chunks = clip.chunks.map((c, i) => (i === 0 ? { ...c, data: c.data.map((b, k) => (k < 2 ? b : (b * 7 + k) & 0xff)) } : c));
      const target = makeTarget(frames.length, { firstFrame: 0, width: 32, height: 32, channels: 3, fit: 'cover', flip: false });
      const want = Float64Array.from(frames, (f) => f.timestampUs);
      expect(await code(decoder.decodeClip({ config: clip.config, chunks }, want, target)), codec).toBe('corrupt');
      expect(watch.openFrames()).toBe(0);
      const good = await decoder.decodeClip(clip, want, target);
      expect(Array.from(good.timestampsUs)).toEqual(Array.from(want));
      target.buffer.destroy();
    }
  });

  it('an unsupported or garbage config: isSupported false, decodeClip rejects unknown-format', async () => {
    const { clip } = await clipOf('vp8');
    const target = makeTarget(1, { firstFrame: 0, width: 8, height: 8, channels: 3, fit: 'cover', flip: false });
    for (const codec of ['hev1.1.6.L93.B0', 'garbage', '']) {
      const config = { codec, codedWidth: 160, codedHeight: 96 };
      expect(await WebCodecsClipDecoder.isSupported(config)).toBe(false);
      expect(await code(decoder.decodeClip({ config, chunks: clip.chunks }, Float64Array.of(0), target))).toBe('unknown-format');
    }
    target.buffer.destroy();
  });

  it('abort mid-clip rejects cancelled, leaves nothing open, and the decoder takes the next clip', async () => {
    const { clip, frames } = await clipOf('vp8', 40);
    const target = makeTarget(frames.length, { firstFrame: 0, width: 32, height: 32, channels: 3, fit: 'stretch', flip: false });
    const want = Float64Array.from(frames, (f) => f.timestampUs);
    const abort = new AbortController();
    const startedAt = watch.framesOut();
    watch.onFrame = (n) => {
      if (n === startedAt + 3) abort.abort();
    };
    const aborted = decoder.decodeClip(clip, want, target, abort.signal);
    expect(await code(aborted)).toBe('cancelled');
    watch.onFrame = undefined;
    expect(watch.framesOut() - startedAt).toBeLessThan(frames.length);
    expect(watch.openFrames()).toBe(0);
    const again = await decoder.decodeClip(clip, want, target);
    expect(again.framesWritten).toBe(frames.length);
    target.buffer.destroy();
  });

  it('both WGSL variants compile (texture_external and rgba8unorm texture); SwiftShader refuses VideoFrame imports, so frames go as bitmaps', async () => {
    const pass = await FramePass.create(gpu.device);
    expect(pass.externalPipeline).toBeDefined();
    expect(pass.texturePipeline).toBeDefined();
    const { frames } = await clipOf('vp8');
    const frame = new VideoFrame(frames[0]?.rgba as Uint8Array, { format: 'RGBA', codedWidth: 160, codedHeight: 96, timestamp: 0 });
    let imported = true;
    try {
      gpu.device.importExternalTexture({ source: frame });
    } catch {
      imported = false;
    }
    frame.close();
    // Where the adapter imports frames, the decoder keeps the zero-copy route; here it falls back.
    if (imported) expect(decoder.route).toBe('external');
    else expect(['copy', 'bitmap']).toContain(decoder.route);
  });

  it('later clips make no GPU buffer or texture: the frame pass reuses its buffers, texture and bind group, submits a clip once on the texture routes, and writes the same values', async () => {
    const { clip, frames } = await clipOf('vp8');
    const want = Float64Array.from(frames, (f) => f.timestampUs);
    const geometry = { firstFrame: 0, width: 40, height: 32, channels: 3, fit: 'cover', flip: false } as const;
    const first = makeTarget(want.length, geometry);
    const second = makeTarget(want.length, geometry);
    await decoder.decodeClip(clip, want, first);
    const device = gpu.device;
    const made = { buffers: 0, textures: 0, bindGroups: 0, submits: 0 };
    const originals = { buffer: device.createBuffer, texture: device.createTexture, bindGroup: device.createBindGroup };
    const submit = device.queue.submit;
    device.createBuffer = (d) => (made.buffers++, originals.buffer.call(device, d));
    device.createTexture = (d) => (made.textures++, originals.texture.call(device, d));
    device.createBindGroup = (d) => (made.bindGroups++, originals.bindGroup.call(device, d));
    device.queue.submit = (buffers) => (made.submits++, submit.call(device.queue, buffers));
    let written: number;
    try {
      written = (await decoder.decodeClip(clip, want, second)).framesWritten;
    } finally {
      Object.assign(device, { createBuffer: originals.buffer, createTexture: originals.texture, createBindGroup: originals.bindGroup });
      device.queue.submit = submit;
    }
    expect(made.buffers).toBe(0);
    expect(made.textures).toBe(0);
    // A texture route binds one texture for the whole clip and submits it once (its frames take a
    // layer each); an external texture is new with each frame, and each frame is submitted alone.
    expect(written).toBeGreaterThan(1);
    expect(made.bindGroups).toBe(decoder.route === 'external' ? written : 1);
    expect(made.submits).toBe(decoder.route === 'external' ? written : 1);
    expect(Array.from(await read(second))).toEqual(Array.from(await read(first)));
    first.buffer.destroy();
    second.buffer.destroy();
  });

  it('frames too large for one array texture (1920×1080: two layers) are submitted as the layers run out; each slot is its frame decoded alone', async () => {
    const { clip, frames } = await clipOf('vp8', 5, 1920, 1080);
    const want = Float64Array.from(frames, (f) => f.timestampUs);
    const geometry = { firstFrame: 0, width: 32, height: 24, channels: 3, fit: 'cover', flip: false } as const;
    const target = makeTarget(want.length, geometry);
    const submit = gpu.device.queue.submit;
    let submits = 0;
    gpu.device.queue.submit = (buffers) => (submits++, submit.call(gpu.device.queue, buffers));
    try {
      expect((await decoder.decodeClip(clip, want, target)).framesWritten).toBe(5);
    } finally {
      gpu.device.queue.submit = submit;
    }
    expect(submits).toBe(decoder.route === 'external' ? 5 : 3);
    const all = await read(target);
    const slot = geometry.width * geometry.height * geometry.channels;
    for (let i = 0; i < want.length; i++) {
      const alone = makeTarget(1, geometry);
      await decoder.decodeClip(clip, want.subarray(i, i + 1), alone);
      expect(Array.from(all.subarray(i * slot, (i + 1) * slot)), `frame ${i}`).toEqual(Array.from(await read(alone)));
      alone.buffer.destroy();
    }
    target.buffer.destroy();
  });

  it('bad arguments are OptionErrors; close() ends with every decoder closed and no frame open', async () => {
    const { clip } = await clipOf('vp8');
    const small = makeTarget(1, { firstFrame: 0, width: 8, height: 8, channels: 3, fit: 'cover', flip: false });
    await expect(decoder.decodeClip(clip, Float64Array.of(0, 1), small)).rejects.toMatchObject({ code: 'invalid-option', field: 'buffer' });
    await expect(decoder.decodeClip(clip, Float64Array.of(Number.NaN), small)).rejects.toMatchObject({
      code: 'invalid-option',
      field: 'wantUs',
    });
    small.buffer.destroy();
    const before = watch.decoders.length;
    const own = await WebCodecsClipDecoder.create(gpu.device, { decoders: 1 });
    expect(['external', 'copy', 'bitmap']).toContain(own.route);
    const target = makeTarget(1, { firstFrame: 0, width: 8, height: 8, channels: 3, fit: 'cover', flip: false });
    await own.decodeClip(clip, Float64Array.of(0), target);
    console.log(`frames reach the GPU by the '${own.route}' route here`);
    await own.close();
    const made = watch.decoders.slice(before);
    expect(made.length).toBe(1);
    expect(made.map((d) => d.state)).toEqual(['closed']);
    expect(watch.openFrames()).toBe(0);
    expect(await code(own.decodeClip(clip, Float64Array.of(0), target))).toBe('closed');
    target.buffer.destroy();
  });

  // The two roads share the resize (resize.c's filter: WGSL here, wasm SIMD there) and the colour
  // matrix (the stream's tags, BT.601 limited where it has none, given to VideoDecoder as its
  // colorSpace); what is left is where each converts YUV to RGB and upsamples chroma. Measured here
  // (mean |diff| over a slot, 0..255): about 1 at the source size and at 64×48, channel means within 1.3.
  for (const name of ['testsrc.h264.mp4', 'testsrc.vp9.webm'])
    for (const [width, height] of [
      [160, 120],
      [64, 48],
    ] as const) {
      it(`${name} at ${width}×${height}, demuxed by the wasm demuxer: the same frames as the wasm path's decode, within the roads' difference`, async () => {
        const bytes = new Uint8Array(await (await fetch(`/test/fixtures/generated/${name}`)).arrayBuffer());
        await using pool = await DecodePool.create({ threads: 2 });
        const clip = clipOfDemuxed(await pool.demuxVideo(bytes));
        const times = [0, 0.35, 1, 1.5, 0.1];
        const shape = { width, height, fit: 'cover', flip: true } as const;
        const wasm = await wasmFrames(pool, bytes, times, shape);
        const target = makeTarget(times.length, { firstFrame: 0, channels: 3, mean: [0, 0, 0], std: [1, 1, 1], ...shape });
        const result = await decoder.decodeClip(
          clip,
          Float64Array.from(times, (t) => Math.round(t * 1e6)),
          target,
        );
        expect(Array.from(result.timestampsUs)).toEqual([0, 300_000, 1_000_000, 1_500_000, 100_000]);
        const values = await read(target);
        const floats = width * height * 3;
        times.forEach((_, slot) => {
          let diff = 0;
          const means = [0, 0, 0];
          for (let i = slot * floats; i < (slot + 1) * floats; i++) {
            const ours = (values[i] as number) * 255;
            const theirs = wasm[i] as number;
            diff += Math.abs(ours - theirs);
            means[i % 3] = (means[i % 3] as number) + (ours - theirs) / (floats / 3);
          }
          expect(diff / floats, `slot ${slot}: mean |diff| /255`).toBeLessThanOrEqual(2);
          for (const m of means) expect(Math.abs(m), `slot ${slot}: channel means ${means}`).toBeLessThanOrEqual(1.5);
        });
        target.buffer.destroy();
      });
    }
});
