// The Matroska/WebM index reader (src/video/mkv-index.ts) against libavformat's matroska demuxer
// (the wasm module's demuxVideo): on files written here by Debian's ffmpeg CLI (VP9 with alt-ref
// frames, VP8, H.264 with B-frames in MKV, an Opus track beside VP9, a variable frame rate, a
// 90 kHz-free time scale) and the WebM and MKV fixtures (AV1 among them), each timeline it takes is the demuxer's
// to the microsecond, with its duration, size and keyframes; a file piped out (unknown sizes) is
// left to the demuxer. Clips from its packets (a packets job, no container opened) are the
// container job's by frame number, byte for byte. Cut or corrupted files never throw.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DecodePool, memoryByteSource } from '../../src/decode/index.ts';
import { Rng } from '../../src/random/index.ts';
import { readClipPackets } from '../../src/video/clip-packets.ts';
import { videoLoader } from '../../src/video/index.ts';
import { rewrapWebm, sameSizeElements } from '../shared/metadata-flood-scenarios.ts';
import { clipGopBytes, clipStartFrames } from '../shared/video-loader-scenarios.ts';
import { readMatroskaIndex as readFrom } from '../../src/video/mkv-index.ts';

/** The index of a file in memory, as the loader reads a file it read whole. */
const readMatroskaIndex = (bytes: Uint8Array) => readFrom(memoryByteSource(bytes));

const SOURCE = ['-f', 'lavfi', '-i', 'testsrc2=size=176x144:rate=25:duration=4'];
const VP9 = ['-c:v', 'libvpx-vp9', '-b:v', '300k', '-g', '25', '-auto-alt-ref', '1', '-lag-in-frames', '16'];
const VARIANTS: Record<string, string[]> = {
  'vp9.webm': [...SOURCE, ...VP9],
  'vp8.webm': [...SOURCE, '-c:v', 'libvpx', '-b:v', '300k', '-g', '25', '-auto-alt-ref', '1', '-lag-in-frames', '16'],
  'h264.mkv': [...SOURCE, '-c:v', 'libx264', '-g', '25', '-pix_fmt', 'yuv420p'],
  'opus.webm': [...SOURCE, '-f', 'lavfi', '-i', 'sine=duration=4', ...VP9, '-c:a', 'libopus', '-shortest'],
  'vfr.mkv': [
    '-f',
    'lavfi',
    '-i',
    "testsrc2=size=176x144:rate=25:duration=3,setpts='if(lt(N,20),N*0.04/TB,(0.8+(N-20)*0.1)/TB)'",
    '-fps_mode',
    'vfr',
    '-c:v',
    'libx264',
    '-g',
    '20',
  ],
};
const SIZE = { width: 40, height: 32, channels: 3 as const };

let dir: string;
let pool: DecodePool;
const files = new Map<string, Uint8Array>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-mkv-index-'));
  for (const [name, args] of Object.entries(VARIANTS))
    execFileSync('ffmpeg', ['-hide_banner', '-v', 'error', '-y', ...args, join(dir, name)], { stdio: 'pipe' });
  // Piped out, the muxer cannot go back to write sizes: the segment and clusters are of unknown size.
  const piped = spawnSync('ffmpeg', ['-hide_banner', '-v', 'error', ...SOURCE, ...VP9, '-f', 'webm', 'pipe:1'], { maxBuffer: 1 << 26 });
  writeFileSync(join(dir, 'piped.webm'), piped.stdout);
  for (const name of [...Object.keys(VARIANTS), 'piped.webm']) files.set(name, readFileSync(join(dir, name)));
  for (const name of ['testsrc.vp9.webm', 'rgb.vp9.webm', 'long.vp9.webm', 'testsrc.h264.mkv', 'testsrc.av1.webm', 'odd422.vp9.webm'])
    files.set(`fixture ${name}`, readFileSync(new URL(`../fixtures/generated/${name}`, import.meta.url)));
  pool = await DecodePool.create({ threads: 2 });
}, 120_000);

afterAll(async () => {
  await pool?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("takes the plain layouts, and its times, duration, size and keyframes are libavformat's", async () => {
  for (const [name, bytes] of files) {
    const index = await readMatroskaIndex(bytes);
    if (name === 'piped.webm') {
      expect(index, name).toBeUndefined();
      continue;
    }
    expect(index, name).toBeDefined();
    if (!index) continue;
    const demuxed = await pool.demuxVideo(bytes, { packets: false });
    expect(Array.from(index.frameTimes), name).toEqual(Array.from(demuxed.frameTimes));
    expect([index.durationSeconds, index.codedWidth, index.codedHeight], name).toEqual([
      demuxed.durationSeconds,
      demuxed.codedWidth,
      demuxed.codedHeight,
    ]);
    expect(index.keyframes, name).toBe(Array.from(demuxed.key).filter((k) => k).length);
    expect(index.codec, name).toBe(demuxed.codec);
  }
}, 120_000);

it("clips from its packets are the container job's, byte for byte", async () => {
  const rng = new Rng(11);
  for (const [name, bytes] of files) {
    const index = await readMatroskaIndex(bytes);
    if (!index) continue;
    const all = Array.from(index.frameTimes);
    for (let c = 0; c < 6; c++) {
      const stride = [1, 2, 9, 20][c % 4]!;
      const n = 4;
      const start = Math.floor(rng.float() * Math.max(1, all.length - (n - 1) * stride));
      const own = Array.from({ length: n }, (_, i) => all[Math.min(all.length - 1, start + i * stride)]!);
      const { packets } = await readClipPackets(memoryByteSource(bytes), index, own);
      const target = pool.allocate(n * SIZE.width * SIZE.height * 3);
      const oracle = pool.allocate(n * SIZE.width * SIZE.height * 3);
      try {
        const got = await pool.decodeVideo(packets, target, { frames: { frameTimes: own }, ...SIZE });
        const want = await pool.decodeVideo(bytes, oracle, { frames: { indices: own.map((t) => all.indexOf(t)) }, ...SIZE });
        expect(Array.from(got.timestamps), `${name} clip ${c}`).toEqual(Array.from(want.timestamps));
        expect(Buffer.from(target.bytes).equals(Buffer.from(oracle.bytes)), `${name} clip ${c}: pixels`).toBe(true);
      } finally {
        target.free();
        oracle.free();
      }
    }
  }
}, 120_000);

it('cut and corrupted files return an index or undefined, never throw', async () => {
  const rng = new Rng(3);
  // A Uint8Array copy: a Buffer's slice() is a view, and the mutations below must not reach the file.
  const bytes = new Uint8Array(files.get('vp9.webm')!);
  for (let i = 0; i < 300; i++) {
    const copy = bytes.slice(0, i % 3 === 0 ? Math.floor(rng.float() * bytes.length) : bytes.length);
    for (let k = 0; k < 8; k++) copy[Math.floor(rng.float() * copy.length)] = Math.floor(rng.float() * 256);
    for (const index of [await readMatroskaIndex(copy), await readFrom(memoryByteSource(copy), { readAhead: 64 })])
      expect(index === undefined || index.samples > 0).toBe(true);
  }
});

it('read in ranges, header by header or in large windows, it gives the same index; header by header it reads a small part of the file', async () => {
  for (const [name, bytes] of files) {
    const whole = await readMatroskaIndex(bytes);
    let read = 0;
    let requests = 0;
    const counted = {
      size: bytes.length,
      read: async (offset: number, length: number) => {
        requests++;
        const got = bytes.slice(offset, offset + length);
        read += got.length;
        return got;
      },
    };
    const ranged = await readFrom(counted, { readAhead: 64 });
    if (!whole) {
      expect(ranged, name).toBeUndefined();
      continue;
    }
    expect(ranged, name).toBeDefined();
    expect({ ...ranged, indexBytes: 0 }, name).toEqual({ ...whole, indexBytes: 0 });
    expect(ranged!.indexBytes, name).toBe(read);
    expect(requests, name).toBeGreaterThanOrEqual(whole.samples / 4);
    if (bytes.length >= 100_000) expect(read, `${name}: ${read} of ${bytes.length} bytes`).toBeLessThan(bytes.length / 4);
    // Adaptive, over these frames of a few KB: the file read through in 1 MiB windows after a first 64 KiB.
    read = requests = 0;
    const adaptive = await readFrom(counted, { readAhead: 'adaptive' });
    expect({ ...adaptive, indexBytes: 0 }, name).toEqual({ ...whole, indexBytes: 0 });
    expect(requests, name).toBeLessThanOrEqual(2 + Math.ceil(bytes.length / (1 << 20)));
  }
});

it('a long MKV of large frames is walked header by header: three clips read under twice their GOPs, a small part of the file', async () => {
  // 60 frames of about 127 KB, one a second (noise at crf 4: x264 codes each one a keyframe).
  const path = join(dir, 'large-frames.mkv');
  const encode = '-f lavfi -i testsrc2=size=320x240:rate=1,noise=alls=60:allf=t -t 60 -c:v libx264 -pix_fmt yuv420p -g 5 -bf 0 -crf 4';
  execFileSync('ffmpeg', ['-hide_banner', '-v', 'error', '-y', ...encode.split(' '), path], { stdio: 'pipe' });
  const fileBytes = readFileSync(path).length;
  const probe = ['-v', 'error', '-select_streams', 'v', '-show_entries', 'packet=pts_time,size,flags', '-of', 'json', path];
  const packets = (JSON.parse(execFileSync('ffprobe', probe).toString()) as { packets: { size: string; flags: string }[] }).packets;
  expect(fileBytes / packets.length).toBeGreaterThan(64 << 10);
  await using data = videoLoader([path], {
    matroskaReadWholeBelow: 0,
    clip: { frames: 2, stride: 1 },
    sampler: 'uniform',
    clipsPerVideo: 3,
    size: 32,
    batchSize: 3,
    pool,
  });
  const starts = await clipStartFrames(data, 2, 1); // 1 fps
  expect(data.failures()).toEqual([]);
  expect(starts).toEqual([0, 29, 58]);
  const gopBytes = clipGopBytes(packets, starts, 2);
  const reads = data.reads();
  expect([reads.ranged, reads.whole]).toEqual([1, 0]);
  expect(reads.requests).toBeGreaterThanOrEqual(packets.length);
  expect(reads.bytes).toBeLessThanOrEqual(2 * gopBytes);
  expect(reads.bytes).toBeLessThan(fileBytes / 3);
}, 60_000);

/** An EBML element: its ID bytes, an 8-byte size, its payload. */
function el(id: number[], ...payload: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(payload);
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, body]);
}
const uint = (id: number[], v: number, bytes = 2) => {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(v, 0, bytes);
  return el(id, b);
};

it('a walk counts every element: four million empty ones go to the demuxer, the event loop keeps its turns, and a signal stops it', async () => {
  const vp9 = files.get('vp9.webm')!;
  expect(await readMatroskaIndex(rewrapWebm(vp9, new Uint8Array(0)))).toBeDefined();
  // 2-byte Void elements before the first cluster: no block among them, so only an element count bounds the walk.
  const flooded = rewrapWebm(
    vp9,
    sameSizeElements(4_000_001, () => Uint8Array.of(0xec, 0x80)),
  );
  let turns = 0;
  const timer = setInterval(() => turns++, 1);
  try {
    expect(await readMatroskaIndex(flooded)).toBeUndefined();
  } finally {
    clearInterval(timer);
  }
  expect(turns).toBeGreaterThan(0);
  const stop = new AbortController();
  stop.abort(new Error('stopped'));
  await expect(readFrom(memoryByteSource(vp9), { signal: stop.signal })).rejects.toThrow('stopped');
});

it('a block time before its cluster time (a negative relative timecode) is read as the demuxer reads it', async () => {
  // One cluster at 1000 ms whose blocks are at +0, -40 and +40 ms: signed 16-bit relative times.
  // Their frames are the first three of vp9.webm (the demuxer's VP9 parser reads them).
  const vp9 = files.get('vp9.webm')!;
  const frames = (await readMatroskaIndex(vp9))!;
  let next = 0;
  const block = (relative: number, key: boolean) => {
    const frame = vp9.subarray(frames.offsets[next]!, frames.offsets[next]! + frames.sizes[next]!);
    next++;
    const b = Buffer.alloc(4);
    b[0] = 0x81; // track 1
    b.writeInt16BE(relative, 1);
    b[3] = key ? 0x80 : 0;
    return el([0xa3], b, frame);
  };
  const file = Buffer.concat([
    el([0x1a, 0x45, 0xdf, 0xa3], el([0x42, 0x82], Buffer.from('webm'))),
    el(
      [0x18, 0x53, 0x80, 0x67],
      el([0x15, 0x49, 0xa9, 0x66], uint([0x2a, 0xd7, 0xb1], 1_000_000, 3), el([0x44, 0x89], Buffer.from([0x40, 0x5e, 0, 0, 0, 0, 0, 0]))),
      el(
        [0x16, 0x54, 0xae, 0x6b],
        el(
          [0xae],
          uint([0xd7], 1, 1),
          uint([0x83], 1, 1),
          el([0x86], Buffer.from('V_VP9')),
          el([0xe0], uint([0xb0], 176), uint([0xba], 144)),
        ),
      ),
      el([0x1f, 0x43, 0xb6, 0x75], uint([0xe7], 1000), block(0, true), block(-40, false), block(40, false)),
    ),
  ]);
  const index = await readMatroskaIndex(file);
  expect(index).toBeDefined();
  // From the stream's start, which libavformat takes from the first block (1000 ms), not the
  // earliest: -40, 0 and 40 ms.
  expect(Array.from(index!.frameTimes)).toEqual([-0.04, 0, 0.04]);
  expect(Array.from(index!.pts)).toEqual([0, -40, 40]);
  const demuxed = await pool.demuxVideo(file, { packets: false });
  expect(Array.from(index!.frameTimes)).toEqual(Array.from(demuxed.frameTimes));
  expect(index!.durationSeconds).toBe(demuxed.durationSeconds);
});
