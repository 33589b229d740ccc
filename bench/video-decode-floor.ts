// What a video decode costs in Tandem's wasm module against native ffmpeg on the same frames: the
// floor under bench/video-peers.ts's CPU per clip (the DataLoader's decoders are native ffmpeg
// with its x86 or Arm assembly). Each side decodes the first `frames` frames of every file of a
// corpus on one thread and brings each to 16×16 RGB (the cost of a decode, not of a large resize):
//   - Tandem: a DecodePool with one pool thread, decodeVideo with every frame's index, in this
//     process; its CPU time over the pass (utime + stime of the process);
//   - ffmpeg: Debian's ffmpeg CLI, one process per pass with every file as an input, `-threads 1`
//     per decoder, `-filter_threads 1`, each input to a null output through scale=16:16 and rgb24;
//     its CPU from `-benchmark` (the process's utime + stime, start-up included);
//   - ffmpeg `-cpuflags 0`: the same with its SIMD functions off, libswscale's included (its C; the
//     inline assembly of its arithmetic decoders on x86 stays, being compiled in).
// Passes are interleaved, medians of `reps` after a warm-up pass of each side. The corpora are
// bench/video-peers.ts's: the generated 320×240 H.264 and the photograph pans (H.264 and VP9).
//
//   npx deno run -A bench/video-decode-floor.ts [--large 16] [--pans 18] [--frames 240] [--reps 5] [--out docs/bench/video-decode-floor.md] [--smoke]
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { DecodePool } from '../src/decode/index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { processCpuSeconds } from './shared/cpu.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { fixed, median, spread, times } from './shared/stats.ts';
import { type BenchVideo, largeVideos, photoPanVideos } from './video/corpus.ts';

const args = benchArgs('video-decode-floor', {
  large: { type: 'number', default: 16, smoke: 1, help: 'generated 320×240 H.264 files' },
  pans: { type: 'number', default: 18, smoke: 2, help: 'photograph pans (H.264 and VP9 in turn)' },
  frames: { type: 'number', default: 240, smoke: 12, help: 'frames decoded from the start of each file' },
  reps: { type: 'number', default: 5, smoke: 1, help: 'interleaved passes of each side' },
  out: { type: 'string', default: 'docs/bench/video-decode-floor.md', smoke: smokeOut('bench-video-decode-floor.md') },
});
const { frames, reps, out: outPath } = args.values;
const loadAtStart = machineLoad();
const SIDE = 16;

interface Pass {
  cpuSeconds: number;
  frames: number;
}

const pool = await DecodePool.create({ threads: 1 });
const target = pool.allocate(frames * SIDE * SIDE * 3);
const indices = Array.from({ length: frames }, (_, i) => i);

async function tandemPass(videos: readonly BenchVideo[]): Promise<Pass> {
  const cpu0 = processCpuSeconds();
  let n = 0;
  for (const v of videos) n += (await pool.decodeVideo(v.bytes, target, { frames: { indices }, width: SIDE, height: SIDE })).framesWritten;
  return { cpuSeconds: processCpuSeconds() - cpu0, frames: n };
}

/** ffmpeg's CPU seconds over one pass (its frames are the ones Tandem's pass counts: the same files, the same `frames`). */
function ffmpegCpuSeconds(videos: readonly BenchVideo[], simd: boolean): number {
  // -benchmark prints its line at the info level.
  const argv = ['-hide_banner', '-nostdin', '-nostats', '-v', 'info', '-benchmark', '-filter_threads', '1'];
  if (!simd) argv.push('-cpuflags', '0');
  for (const v of videos) argv.push('-threads', '1', '-i', v.path);
  videos.forEach((_, i) => {
    argv.push('-map', `${i}:v:0`, '-frames:v', String(frames), '-vf', `scale=${SIDE}:${SIDE},format=rgb24`, '-f', 'null', '-');
  });
  const r = spawnSync('ffmpeg', argv, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const m = /utime=([\d.]+)s stime=([\d.]+)s/.exec(r.stdout + r.stderr);
  if (r.status !== 0 || !m) throw new Error(`ffmpeg failed: ${r.error?.message ?? r.stderr.slice(-500)}`);
  return Number(m[1]) + Number(m[2]);
}

const log = (s: string): void => console.log(s);
const corpora = [
  { name: `generated 320×240 H.264, ${args.values.large} files`, videos: await largeVideos(args.values.large, log) },
  {
    name: `photograph pans (320×240 to 640×480, H.264 and VP9 in turn), ${args.values.pans} files`,
    videos: await photoPanVideos(args.values.pans, log),
  },
];

const rows: string[] = [];
const summary: string[] = [];
for (const corpus of corpora) {
  const sides = { tandem: [] as number[], native: [] as number[], nativeC: [] as number[] };
  let decoded = 0;
  await tandemPass(corpus.videos); // warm-up: the module tiers up
  ffmpegCpuSeconds(corpus.videos, true);
  for (let r = 0; r < reps; r++) {
    const order = r % 2 ? (['nativeC', 'native', 'tandem'] as const) : (['tandem', 'native', 'nativeC'] as const);
    for (const side of order) {
      if (side === 'tandem') {
        const p = await tandemPass(corpus.videos);
        decoded = p.frames;
        sides.tandem.push(p.cpuSeconds);
      } else sides[side].push(ffmpegCpuSeconds(corpus.videos, side === 'native'));
    }
  }
  const perFrame = (xs: number[]) => (median(xs) * 1000) / decoded;
  const ratios = (xs: number[]) => spread(sides.tandem.map((t, i) => t / (xs[i] ?? Number.NaN)));
  const vsNative = ratios(sides.native);
  const vsC = ratios(sides.nativeC);
  rows.push(
    `| ${corpus.name}, ${decoded} frames | ${fixed(perFrame(sides.tandem), 3)} | ${fixed(perFrame(sides.native), 3)} | ${fixed(perFrame(sides.nativeC), 3)} | ` +
      `${times(vsNative.median)} (${times(vsNative.min)}–${times(vsNative.max)}) | ${times(vsC.median)} (${times(vsC.min)}–${times(vsC.max)}) |`,
  );
  summary.push(`${corpus.name}: Tandem ${times(vsNative.median)} native ffmpeg's CPU, ${times(vsC.median)} its C`);
}
target.free();
await pool.close();

const lines = [
  "# A video decode: Tandem's wasm module against native ffmpeg",
  '',
  `Command: \`npx deno run -A bench/video-decode-floor.ts${args.argv.length ? ` ${args.argv.join(' ')}` : ''}\``,
  `The first ${frames} frames of every file, each brought to ${SIDE}×${SIDE} RGB, on one thread; CPU time (utime + stime) per frame,`,
  `medians of ${reps} interleaved passes after a warm-up; the ratios are each pass's own, their median and range.`,
  '',
  ...machineLines(loadAtStart, machineLoad()),
  '',
  '| corpus | Tandem wasm, CPU ms a frame | native ffmpeg | native ffmpeg `-cpuflags 0` | Tandem ÷ native | Tandem ÷ native C |',
  '|---|---|---|---|---|---|',
  ...rows,
  '',
  "Tandem: a DecodePool with one pool thread (the wasm module's SIMD128 kernels and its C), `decodeVideo` with every",
  "frame's index, in this Deno process (its CPU time, start to end of the pass). Native: Debian's ffmpeg CLI, one",
  'process for all the files of a pass (`-threads 1` per decoder, `-filter_threads 1`, `scale` and `rgb24` to a null',
  "output), its CPU from `-benchmark`, start-up included. `-cpuflags 0` turns off ffmpeg's SIMD functions (libswscale's too); the",
  'inline assembly of its arithmetic decoders on x86 stays. Tandem converts the pixels its resize reads at their',
  "own size, then resizes RGB; ffmpeg's `scale` shrinks the YUV planes first, the cheaper of the two. This is the",
  "floor under bench/video-peers.ts's CPU per clip: the DataLoader's workers decode with native ffmpeg and its",
  'assembly.',
];
console.log(lines.join('\n'));
writeFileSync(outPath, `${lines.join('\n')}\n`);
args.done(summary.join('; '));
