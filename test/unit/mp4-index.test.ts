// The MP4 index reader (src/video/mp4-index.ts) against libavformat's mov demuxer (the wasm
// module's demuxVideo, an implementation that shares no code with it): on MP4s written here by
// Debian's ffmpeg CLI in the layouts users meet (B-frames and their edit list, no B-frames, moov
// first, an audio track, 90 kHz and 1001-based time scales, variable frame rate, no edit list,
// negative composition offsets, VP9, HEVC and MPEG-4 part 2) and on every MP4 fixture, each
// timeline it takes is the demuxer's to the microsecond, and the layouts it leaves to the demuxer
// (fragmented, cut by an edit at either end, no sync sample marked) are the ones it must. Cut or corrupted indexes never throw.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { Rng } from '../../src/random/index.ts';
import { readMp4Timeline } from '../../src/video/mp4-index.ts';

const SOURCE = ['-f', 'lavfi', '-i', 'testsrc2=size=176x144:rate=25:duration=3'];
const X264 = ['-c:v', 'libx264', '-g', '12'];
/** name → ffmpeg arguments after the input, and whether the index must take it. */
const VARIANTS: Record<string, { args: string[]; taken: boolean; input?: string[] }> = {
  'bframes.mp4': { args: X264, taken: true },
  'no-bframes.mp4': { args: [...X264, '-bf', '0'], taken: true },
  'faststart.mp4': { args: [...X264, '-movflags', '+faststart'], taken: true },
  'audio.mp4': { args: [...X264, '-c:a', 'aac', '-shortest'], input: ['-f', 'lavfi', '-i', 'sine=duration=4'], taken: true },
  'longer-audio.mp4': { args: [...X264, '-c:a', 'aac'], input: ['-f', 'lavfi', '-i', 'sine=duration=5'], taken: true },
  'timescale-90k.mp4': { args: [...X264, '-video_track_timescale', '90000'], taken: true },
  'ntsc.mp4': { args: [...X264, '-r', '30000/1001'], taken: true },
  'no-edit-list.mp4': { args: [...X264, '-use_editlist', '0'], taken: true },
  'negative-cts.mp4': { args: [...X264, '-use_editlist', '0', '-movflags', 'negative_cts_offsets'], taken: true },
  'vp9.mp4': { args: ['-c:v', 'libvpx-vp9', '-b:v', '200k'], taken: true },
  'hevc.mp4': { args: ['-c:v', 'libx265', '-x265-params', 'log-level=error'], taken: true },
  'mpeg4.mp4': { args: ['-c:v', 'mpeg4'], taken: true },
  'fragmented.mp4': { args: [...X264, '-movflags', 'frag_keyframe+empty_moov'], taken: false },
};

/** A copy of `bytes` with the u32 `at` bytes past the first `type` box's type set to `value` (the movie is 1000 units a second). */
function patchBox(bytes: Uint8Array, type: string, at: number, value: number): Uint8Array {
  const out = new Uint8Array(bytes); // a copy (a Buffer's slice() would share its bytes)
  const i = Buffer.from(out.buffer).indexOf(type);
  expect(i, type).toBeGreaterThan(0);
  new DataView(out.buffer).setUint32(i + at, value);
  return out;
}

let dir: string;
let pool: DecodePool;
const files = new Map<string, Uint8Array>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-mp4-index-'));
  const ffmpeg = (args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-v', 'error', '-y', ...args], { stdio: 'pipe' });
  for (const [name, v] of Object.entries(VARIANTS)) ffmpeg([...SOURCE, ...(v.input ?? []), ...v.args, join(dir, name)]);
  // Variable frame rate: 20 frames 40 ms apart, then 100 ms apart.
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    "testsrc2=size=176x144:rate=25:duration=3,setpts='if(lt(N,20),N*0.04/TB,(0.8+(N-20)*0.1)/TB)'",
    '-fps_mode',
    'vfr',
    ...X264,
    join(dir, 'vfr.mp4'),
  ]);
  // Cut at 1.3 s without re-encoding: the edit list starts mid-GOP, frames before it are discarded.
  ffmpeg(['-ss', '1.3', '-i', join(dir, 'bframes.mp4'), '-c', 'copy', join(dir, 'cut.mp4')]);
  for (const name of readdirSync(dir)) files.set(name, readFileSync(join(dir, name)));
  // An edit that ends at 0.5 s of 3 s (the frames from the second keyframe after it are dropped),
  // and an stss of no entries (no frame marked a sync sample: the demuxer finds them).
  files.set('trimmed-end.mp4', patchBox(files.get('bframes.mp4')!, 'elst', 12, 500));
  files.set('no-sync-samples.mp4', patchBox(files.get('bframes.mp4')!, 'stss', 8, 0));
  const fixtures = new URL('../fixtures/generated/', import.meta.url).pathname;
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith('.mp4') ? [join(d, n)] : []));
  for (const path of walk(fixtures)) files.set(`fixtures/${path.slice(fixtures.length)}`, readFileSync(path));
  pool = await DecodePool.create({ threads: 2 });
}, 120_000);

afterAll(async () => {
  await pool?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('readMp4Timeline', () => {
  it("takes the plain layouts, and its times, duration and size are libavformat's to the microsecond", async () => {
    const taken: string[] = [];
    const scanned: string[] = [];
    for (const [name, bytes] of files) {
      const index = readMp4Timeline(bytes);
      if (!index) {
        scanned.push(name);
        continue;
      }
      taken.push(name);
      const demuxed = await pool.demuxVideo(bytes, { packets: false });
      expect([index.codedWidth, index.codedHeight], name).toEqual([demuxed.codedWidth, demuxed.codedHeight]);
      expect(index.durationSeconds, name).toBe(demuxed.durationSeconds);
      expect(index.samples, name).toBe(demuxed.count);
      expect(Array.from(index.frameTimes), name).toEqual(Array.from(demuxed.frameTimes));
      expect(index.keyframes, name).toBe(demuxed.key.reduce((a, k) => a + k, 0));
    }
    expect(scanned.sort()).toEqual(['cut.mp4', 'fragmented.mp4', 'no-sync-samples.mp4', 'trimmed-end.mp4']);
    for (const [name, v] of Object.entries(VARIANTS)) expect(taken.includes(name), name).toBe(v.taken);
    expect(taken).toContain('vfr.mp4');
    expect(taken.filter((n) => n.startsWith('fixtures/')).length).toBeGreaterThan(100);
  });

  it('returns undefined or a timeline, never throws, for cut and corrupted indexes', () => {
    const rng = new Rng(9);
    const originals = ['bframes.mp4', 'faststart.mp4', 'vfr.mp4'].map((n) => files.get(n)!);
    let undefinedCount = 0;
    for (let i = 0; i < 3000; i++) {
      const original = originals[i % originals.length]!;
      const bytes = original.slice(0, i % 2 === 0 ? original.length : 1 + Math.floor(rng.float() * original.length));
      // Flip bytes in the first 4 KiB (the boxes' headers and faststart's tables) or anywhere.
      for (let k = 0; k < 1 + (i % 5); k++) {
        const span = i % 3 === 0 ? Math.min(4096, bytes.length) : bytes.length;
        bytes[Math.floor(rng.float() * span)] = Math.floor(rng.float() * 256);
      }
      const t = readMp4Timeline(bytes);
      if (t === undefined) undefinedCount++;
      else expect(t.frameTimes.length).toBe(t.samples);
    }
    expect(undefinedCount).toBeGreaterThan(100);
  });
});
