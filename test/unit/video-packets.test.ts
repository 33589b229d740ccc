// Clips from an MP4's index (readMp4Index + readClipPackets → a packets job that opens no
// container) are byte for byte the clips the container job gives for the same frames picked by
// number (which decodes every frame from the first, no seek), with the same timestamps; the
// container job by frame times (which seeks) must give them too: on H.264 with B-frames, a variable frame rate, the index at the front
// (faststart) and at the end, audio interleaved, 64-bit chunk offsets absent or present, and clips
// that span GOPs and skip whole GOPs between their frames (runs). A clip from the middle of a long
// file reads at most twice the bytes of its GOPs, counted at the ByteSource. Files are written here
// by Debian's ffmpeg CLI.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DecodePool, memoryByteSource, type ByteSource } from '../../src/decode/index.ts';
import { Rng } from '../../src/random/index.ts';
import { clipRuns, readClipPackets } from '../../src/video/clip-packets.ts';
import { readMp4Index } from '../../src/video/mp4-index.ts';

const SIZE = { width: 48, height: 40, channels: 3 as const };
const FRAMES = 6;
const SOURCE = ['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25:duration=6'];
const X264 = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'];
const FILES: Record<string, string[]> = {
  'bframes.mp4': [...SOURCE, ...X264, '-g', '25'],
  'faststart.mp4': [...SOURCE, ...X264, '-g', '12', '-bf', '3', '-movflags', '+faststart'],
  'vfr.mp4': [
    '-f',
    'lavfi',
    '-i',
    "testsrc2=size=160x120:rate=25:duration=4,setpts='if(lt(N,30),N*0.04/TB,(1.2+(N-30)*0.1)/TB)'",
    '-fps_mode',
    'vfr',
    ...X264,
    '-g',
    '20',
  ],
  'audio.mp4': [...SOURCE, '-f', 'lavfi', '-i', 'sine=frequency=440:duration=6', ...X264, '-g', '25', '-c:a', 'aac', '-shortest'],
  'baseline.mp4': [...SOURCE, ...X264, '-profile:v', 'baseline', '-g', '30'],
  'vp9.mp4': [...SOURCE, '-c:v', 'libvpx-vp9', '-b:v', '300k', '-g', '25'],
  'hevc.mp4': [...SOURCE, '-c:v', 'libx265', '-pix_fmt', 'yuv420p', '-x265-params', 'log-level=error:keyint=25'],
  'av1.mp4': [...SOURCE, '-c:v', 'libaom-av1', '-cpu-used', '8', '-pix_fmt', 'yuv420p', '-g', '25', '-b:v', '300k'],
  'colr.mp4': [
    ...SOURCE,
    ...X264,
    '-g',
    '25',
    '-color_primaries',
    'bt709',
    '-color_trc',
    'bt709',
    '-colorspace',
    'bt470bg',
    '-color_range',
    'pc',
  ],
};

let dir: string;
let pool: DecodePool;
const bytesOf = new Map<string, Uint8Array>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-packets-'));
  for (const [name, args] of Object.entries(FILES)) {
    execFileSync('ffmpeg', ['-hide_banner', '-v', 'error', '-y', ...args, join(dir, name)], { stdio: 'pipe' });
    bytesOf.set(name, readFileSync(join(dir, name)));
  }
  pool = await DecodePool.create({ threads: 2 });
}, 120_000);

afterAll(async () => {
  await pool?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A ByteSource that counts what it serves. */
function counted(bytes: Uint8Array): ByteSource & { served: number; reads: number } {
  const inner = memoryByteSource(bytes);
  const s = {
    size: inner.size,
    served: 0,
    reads: 0,
    async read(offset: number, length: number) {
      const got = await inner.read(offset, length);
      s.served += got.length;
      s.reads++;
      return got;
    },
  };
  return s;
}

type Frames = { frameTimes: number[] } | { indices: number[] };

async function clip(input: Parameters<DecodePool['decodeVideo']>[0], wanted: number[] | Frames) {
  const frames = Array.isArray(wanted) ? { frameTimes: wanted } : wanted;
  const n = 'indices' in frames ? frames.indices.length : frames.frameTimes.length;
  const target = pool.allocate(n * SIZE.width * SIZE.height * SIZE.channels);
  try {
    const info = await pool.decodeVideo(input, target, { frames, ...SIZE });
    return { pixels: Buffer.from(target.bytes), times: Array.from(info.timestamps), info };
  } finally {
    target.free();
  }
}

it('packets clips equal container clips byte for byte, with the same times (B-frames, VFR, faststart, audio, baseline, colr, VP9, HEVC, AV1)', async () => {
  const rng = new Rng(7);
  let multiRun = 0;
  for (const [name, bytes] of bytesOf) {
    const index = await readMp4Index(memoryByteSource(bytes));
    expect(index, name).toBeDefined();
    if (!index) continue;
    expect(index.codec, name).toBe(({ 'vp9.mp4': 'vp9', 'hevc.mp4': 'hevc', 'av1.mp4': 'av1' } as Record<string, string>)[name] ?? 'h264');
    const all = Array.from(index.frameTimes);
    for (let c = 0; c < 10; c++) {
      // Strides up to 30 frames: some clips skip whole GOPs between their frames.
      const stride = [1, 2, 3, 7, 13, 30][c % 6]!;
      const span = (FRAMES - 1) * stride;
      const start = Math.floor(rng.float() * Math.max(1, all.length - span));
      const own = Array.from({ length: FRAMES }, (_, i) => all[Math.min(all.length - 1, start + i * stride)]!);
      if (clipRuns(index, own).length > 1) multiRun++;
      const { packets } = await readClipPackets(memoryByteSource(bytes), index, own);
      // The oracle: the container job by frame numbers, which decodes every frame from the first.
      const indices = own.map((t) => all.indexOf(t));
      const fromFile = await clip(bytes, { indices });
      const fromPackets = await clip(packets, own);
      expect(fromPackets.times, `${name} clip ${c}`).toEqual(own.map((t) => Math.round(t * 1000) / 1000));
      expect(fromPackets.times, `${name} clip ${c}`).toEqual(fromFile.times);
      expect(fromPackets.pixels.equals(fromFile.pixels), `${name} clip ${c}: pixels`).toBe(true);
      // The container road by own times seeks: it too must land on these frames.
      const bySeek = await clip(bytes, own);
      expect(bySeek.times, `${name} clip ${c}: the container road`).toEqual(fromFile.times);
      expect(bySeek.pixels.equals(fromFile.pixels), `${name} clip ${c}: the container road's pixels`).toBe(true);
      expect(fromPackets.info.framesWritten).toBe(FRAMES);
      expect([fromPackets.info.sourceWidth, fromPackets.info.sourceHeight, fromPackets.info.codec]).toEqual([160, 120, index.codec]);
    }
  }
  expect(multiRun, 'clips whose frames lie in separate runs of GOPs').toBeGreaterThan(5);
}, 120_000);

it('a clip from the middle of a long file reads at most twice the bytes of its GOPs', async () => {
  // scripts/make-fixtures.sh: 60 s of 320×240 at 10 fps, a keyframe every 5 s.
  const path = new URL('../fixtures/generated/long.h264.mp4', import.meta.url);
  const bytes = readFileSync(path);
  const source = counted(bytes);
  const index = await readMp4Index(source);
  if (!index) throw new Error('no index');
  expect(index.indexBytes).toBe(source.served);
  const all = Array.from(index.frameTimes);
  const own = Array.from({ length: 8 }, (_, i) => all[310 + i * 2]!); // 31 s in, a second past a keyframe
  const before = source.served;
  const { packets } = await readClipPackets(source, index, own);
  const clipBytes = source.served - before;
  // Its GOPs: from the keyframe at or before its first frame to the keyframe after its last.
  const runs = clipRuns(index, own);
  const first = runs[0]![0];
  let end = runs[runs.length - 1]![1] + 1;
  while (end < index.samples && !index.key[end]) end++;
  let gopBytes = 0;
  for (let s = first; s < end; s++) gopBytes += index.sizes[s]!;
  expect(clipBytes).toBeLessThanOrEqual(gopBytes);
  expect(clipBytes + index.indexBytes, `index ${index.indexBytes} + clip ${clipBytes} vs GOPs ${gopBytes}`).toBeLessThanOrEqual(
    2 * gopBytes,
  );
  expect(clipBytes + index.indexBytes).toBeLessThan(bytes.length / 10);
  const fromPackets = await clip(packets, own);
  const fromFile = await clip(bytes, own);
  expect(fromPackets.pixels.equals(fromFile.pixels)).toBe(true);
}, 120_000);

it('a packets job refuses a bad table, a clip by times, and a codec it has no decoder for, as typed errors', async () => {
  const bytes = bytesOf.get('bframes.mp4')!;
  const index = (await readMp4Index(memoryByteSource(bytes)))!;
  const own = Array.from(index.frameTimes.subarray(0, FRAMES));
  const { packets } = await readClipPackets(memoryByteSource(bytes), index, own);
  const target = pool.allocate(FRAMES * SIZE.width * SIZE.height * 3);
  try {
    const bad = { ...packets, offsets: packets.offsets.map((o, i) => (i === 2 ? packets.data.length : o)) };
    await expect(pool.decodeVideo(bad, target, { frames: { frameTimes: own }, ...SIZE })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(pool.decodeVideo(packets, target, { frames: { times: own }, ...SIZE })).rejects.toMatchObject({ code: 'bad-request' });
    const other = { ...packets, codec: 'mpeg4' as never };
    await expect(pool.decodeVideo(other, target, { frames: { frameTimes: own }, ...SIZE })).rejects.toMatchObject({ code: 'bad-request' });
    // Cut packets: the decoder's verdict, typed, and the pool goes on.
    const cut = { ...packets, sizes: packets.sizes.map((s) => Math.max(1, s >> 3)) };
    await expect(pool.decodeVideo(cut, target, { frames: { frameTimes: own }, ...SIZE })).rejects.toMatchObject({ name: 'DecodeError' });
    const ok = await pool.decodeVideo(packets, target, { frames: { frameTimes: own }, ...SIZE });
    expect(ok.framesWritten).toBe(FRAMES);
  } finally {
    target.free();
  }
}, 60_000);

it('AV1 at 10 bits fails by name on both roads (the module decodes 8-bit AV1 only), and the pool goes on', async () => {
  const path = join(dir, 'av1-10bit.mp4');
  execFileSync(
    'ffmpeg',
    ['-hide_banner', '-v', 'error', '-y', ...SOURCE, '-t', '1', '-c:v', 'libaom-av1', '-cpu-used', '8', '-pix_fmt', 'yuv420p10le', path],
    {
      stdio: 'pipe',
    },
  );
  const bytes = readFileSync(path);
  const index = (await readMp4Index(memoryByteSource(bytes)))!;
  expect(index.codec).toBe('av1');
  const own = Array.from(index.frameTimes.subarray(0, FRAMES));
  const { packets } = await readClipPackets(memoryByteSource(bytes), index, own);
  const target = pool.allocate(FRAMES * SIZE.width * SIZE.height * 3);
  try {
    const unknown = { code: 'unknown-format', message: expect.stringContaining('8-bit AV1 only') };
    await expect(pool.decodeVideo(packets, target, { frames: { frameTimes: own }, ...SIZE })).rejects.toMatchObject(unknown);
    await expect(pool.decodeVideo(bytes, target, { frames: { indices: [0, 1] }, ...SIZE })).rejects.toMatchObject(unknown);
    const ok = await pool.decodeVideo(bytesOf.get('av1.mp4')!, target, { frames: { indices: [0, 1, 2] }, ...SIZE });
    expect([ok.framesWritten, ok.codec]).toEqual([3, 'av1']);
  } finally {
    target.free();
  }
}, 60_000);
