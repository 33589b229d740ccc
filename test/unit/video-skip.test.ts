// Decoding only the frames a clip needs: with `frames: { frameTimes }` (the frames' own times) the
// video job lets the decoder skip frames no wanted frame references, and every clip is byte for
// byte the one `frames: { times }` gives, with the same timestamps. Checked on H.264 with B-frames
// (libx264's defaults: non-reference B-frames between referenced ones), a variable frame rate
// H.264 file, and VP9 and VP8 in WebM, all written here by Debian's ffmpeg CLI. The control shows
// the skip happens: the same job given times half a frame after each frame (a promise broken on
// purpose) hands some slots the frame before, where `times` gives the frame itself.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { decoderTimes } from '../../src/decode/internal.ts';
import { Rng } from '../../src/random/index.ts';

const SIZE = { width: 48, height: 40, channels: 3 as const };
const FRAMES = 6;
const SOURCE = ['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25:duration=4'];
const FILES: Record<string, string[]> = {
  'bframes.mp4': [...SOURCE, '-c:v', 'libx264', '-g', '25'],
  'vfr.mp4': [
    '-f',
    'lavfi',
    '-i',
    "testsrc2=size=160x120:rate=25:duration=3,setpts='if(lt(N,30),N*0.04/TB,(1.2+(N-30)*0.1)/TB)'",
    '-fps_mode',
    'vfr',
    '-c:v',
    'libx264',
    '-g',
    '20',
  ],
  'vp9.webm': [...SOURCE, '-c:v', 'libvpx-vp9', '-b:v', '300k', '-g', '25', '-auto-alt-ref', '1', '-lag-in-frames', '16'],
  'vp8.webm': [...SOURCE, '-c:v', 'libvpx', '-b:v', '300k', '-g', '25', '-auto-alt-ref', '1', '-lag-in-frames', '16'],
};

let dir: string;
let pool: DecodePool;
const bytesOf = new Map<string, Uint8Array>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-skip-'));
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

async function clip(bytes: Uint8Array, frames: { times: number[] } | { frameTimes: number[] }) {
  const target = pool.allocate(FRAMES * SIZE.width * SIZE.height * SIZE.channels);
  try {
    const info = await pool.decodeVideo(bytes, target, { frames, ...SIZE });
    return { pixels: target.bytes.slice(), times: Array.from(info.timestamps) };
  } finally {
    target.free();
  }
}

it('frameTimes clips equal times clips byte for byte (B-frames, VFR, VP9, VP8), and the skip is seen happening', async () => {
  const rng = new Rng(4);
  let differed = 0;
  for (const [name, bytes] of bytesOf) {
    const { frameTimes } = await pool.demuxVideo(bytes, { packets: false });
    const all = Array.from(frameTimes);
    for (let c = 0; c < 8; c++) {
      const stride = 1 + (c % 3);
      const start = Math.floor(rng.float() * (all.length - FRAMES * stride));
      const own = Array.from({ length: FRAMES }, (_, i) => all[start + i * stride]!);
      const byTimes = await clip(bytes, { times: decoderTimes(own) });
      const byFrames = await clip(bytes, { frameTimes: own });
      expect(byFrames.times, `${name} clip ${c}`).toEqual(byTimes.times);
      expect(Buffer.from(byFrames.pixels).equals(Buffer.from(byTimes.pixels)), `${name} clip ${c}: pixels`).toBe(true);
    }
    // The control: half a frame late, no time is a frame's own; a skipped frame shows the one before.
    const late = all.slice(0, -1).map((t, i) => (t + all[i + 1]!) / 2);
    for (let from = 0; from + FRAMES <= late.length; from += FRAMES) {
      const times = late.slice(from, from + FRAMES);
      const a = await clip(bytes, { times: decoderTimes(times) });
      const b = await clip(bytes, { frameTimes: times });
      if (a.times.join() !== b.times.join()) differed++;
    }
  }
  expect(differed, 'clips where skipped frames showed').toBeGreaterThan(0);
}, 120_000);
