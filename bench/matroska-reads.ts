// A few clips of a long WebM or MKV on the wasm road, read three ways side by side (local files,
// the runtime that runs this):
//   - 'walk', videoLoader's road for a file of at least `matroskaReadWholeBelow` bytes: the MP4
//     reader's look at the head, the Matroska index walked through ranged reads with the adaptive
//     read-ahead (src/video/mkv-index.ts: header by header over frames above 64 KB on average,
//     else 1 MiB windows), then each clip's packets (clip-packets.ts);
//   - 'headers', the same walk with a fixed 64-byte read at each header (the fewest bytes);
//   - 'whole', the road below that size: the file read in one read, walked in memory, the clips'
//     packets cut from it.
// Per file: the wall time from opening the file to the last clip's packets, the process's CPU time
// over it, the bytes and reads, and the most bytes held at once. Every way must give the same
// packets. The files are made here with Debian's ffmpeg CLI and cached, 30 fps, a keyframe every
// 2 s: frames of about 4 KB (VP9 640×360 at 1 Mbit/s in WebM), about 24 KB and about 110 KB (H.264
// 1280×720 over light and heavier noise, in MKV). They are in the page cache when timed (a first,
// untimed pass of each way).
//
//   npx deno run -A bench/matroska-reads.ts [--seconds 60] [--clips 4] [--reps 7] [--out docs/bench/matroska-reads.md] [--smoke]
import { spawnSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { type ByteSource, memoryByteSource } from '../src/decode/index.ts';
import { cacheDir, exists, makeDir, openFileRange, readFile } from '../src/runtime/index.ts';
import { readClipPackets } from '../src/video/clip-packets.ts';
import { readMatroskaIndex } from '../src/video/mkv-index.ts';
import type { Mp4Index } from '../src/video/mp4-index.ts';
import { readMp4Index } from '../src/video/mp4-index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { fixed, median } from './shared/stats.ts';

const args = benchArgs('matroska-reads', {
  seconds: { type: 'number', default: 60, smoke: 2, help: 'length of each file' },
  clips: { type: 'number', default: 4, smoke: 2, help: 'clips of 16 frames 2 apart, spread over the file' },
  reps: { type: 'number', default: 7, smoke: 1, help: 'interleaved repetitions' },
  out: { type: 'string', default: 'docs/bench/matroska-reads.md', smoke: smokeOut('bench-matroska-reads.md') },
});
const { seconds, clips, reps, out: outPath } = args.values;
const loadAtStart = machineLoad();
const FRAMES = 16;
const STRIDE = 2;

interface Recipe {
  name: string;
  file: string;
  ffmpeg: string[];
}
const scale = args.smoke ? 4 : 1;
const x264 = (noise: number, crf: number, secs: number): Recipe => {
  const [w, h] = [1280 / scale, 720 / scale];
  return {
    name: `H.264 ${w}×${h} over noise ${noise}, crf ${crf}, MKV`,
    file: `h264-${w}x${h}-n${noise}-crf${crf}-${secs}s.mkv`,
    ffmpeg: ['-f', 'lavfi', '-i', `testsrc2=size=${w}x${h}:rate=30:duration=${secs},noise=alls=${noise}:allf=t`].concat([
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-crf',
      String(crf),
      '-g',
      '60',
      '-pix_fmt',
      'yuv420p',
    ]),
  };
};
const recipes: Recipe[] = [
  {
    name: `VP9 ${640 / scale}×${360 / scale}, 1 Mbit/s, WebM`,
    file: `vp9-${640 / scale}x${360 / scale}-${seconds}s.webm`,
    ffmpeg: ['-f', 'lavfi', '-i', `testsrc2=size=${640 / scale}x${360 / scale}:rate=30:duration=${seconds}`].concat([
      '-c:v',
      'libvpx-vp9',
      '-b:v',
      '1M',
      '-g',
      '60',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-row-mt',
      '1',
    ]),
  },
  x264(4, 24, seconds),
  // Half as long: 110 KB frames make 200 MB a minute.
  x264(5, 20, Math.max(2, seconds / 2)),
];

const dir = `${cacheDir()}/bench/matroska-reads-v1`;
await makeDir(dir);
for (const r of recipes) {
  const path = `${dir}/${r.file}`;
  if (await exists(path)) continue;
  console.log(`making ${path}`);
  const partial = `${path}.partial.${r.file.split('.').pop()}`;
  const made = spawnSync('ffmpeg', ['-v', 'error', '-y', ...r.ffmpeg, partial], { stdio: 'inherit' });
  if (made.status !== 0) throw new Error(`ffmpeg failed on ${r.file} (exit ${made.status})`);
  renameSync(partial, path);
}

interface Counted extends ByteSource {
  bytes: number;
  requests: number;
  largest: number;
}
function counted(source: ByteSource & { size: number }): Counted {
  const c: Counted = {
    size: source.size,
    bytes: 0,
    requests: 0,
    largest: 0,
    read: async (offset, length) => {
      const got = await source.read(offset, length);
      c.bytes += got.length;
      c.requests++;
      c.largest = Math.max(c.largest, got.length);
      return got;
    },
  };
  return c;
}

/** The clips' own frame times: `clips` clips spread evenly over the video. */
function plan(index: Mp4Index): number[][] {
  const times = index.frameTimes;
  const span = (FRAMES - 1) * STRIDE + 1;
  const last = Math.max(0, times.length - span);
  return Array.from({ length: clips }, (_, k) => {
    const start = Math.floor(((k + 0.5) * last) / clips);
    return Array.from({ length: FRAMES }, (_, j) => times[Math.min(times.length - 1, start + j * STRIDE)] ?? 0);
  });
}

interface Pass {
  ms: number;
  cpuMs: number;
  bytes: number;
  requests: number;
  held: number;
  /** The packets' bytes, summed with their positions, to hold both sides to the same packets. */
  check: number;
}

type Way = 'walk' | 'headers' | 'whole';

async function pass(path: string, way: Way): Promise<Pass> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let source: Counted;
  let index: Mp4Index | undefined;
  let close = async () => {};
  if (way !== 'whole') {
    const file = await openFileRange(path);
    close = () => file.close();
    source = counted(file);
    index = (await readMp4Index(source)) ?? (await readMatroskaIndex(source, { readAhead: way === 'walk' ? 'adaptive' : 64 }));
  } else {
    const bytes = await readFile(path);
    // One read of the file; the clips' packets are then cut from memory, not read.
    source = { ...memoryByteSource(bytes), bytes: bytes.length, requests: 1, largest: bytes.length };
    index = await readMatroskaIndex(source);
  }
  if (!index) throw new Error(`${path}: the Matroska index does not take it`);
  let check = 0;
  for (const times of plan(index)) {
    const { packets } = await readClipPackets(source, index, times);
    for (let i = 0; i < packets.data.length; i += 97) check = (check + (packets.data[i] ?? 0) * (i + 1)) % 1_000_000_007;
  }
  await close();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, bytes: source.bytes, requests: source.requests, held: source.largest, check };
}

const rows: string[][] = [];
let summary = '';
for (const r of recipes) {
  const path = `${dir}/${r.file}`;
  const index = await readMatroskaIndex(memoryByteSource(await readFile(path)));
  if (!index) throw new Error(`${r.file}: not indexed`);
  const size = (await readFile(path)).length;
  const ways: Way[] = ['walk', 'headers', 'whole'];
  const passes = new Map<Way, Pass[]>(ways.map((w) => [w, []]));
  for (const way of ways) await pass(path, way);
  for (let i = 0; i < reps; i++) for (const way of ways) passes.get(way)?.push(await pass(path, way));
  const checks = new Set([...passes.values()].flat().map((p) => p.check));
  if (checks.size !== 1) throw new Error(`${r.file}: the ways gave different packets`);
  const m = (way: Way, k: keyof Pass) => median((passes.get(way) ?? []).map((p) => p[k]));
  const mb = (n: number) => (n / 1e6).toFixed(2);
  for (const way of ways)
    rows.push([
      way === 'walk' ? `${r.name}: ${mb(size)} MB, ${index.samples} frames of ${(size / index.samples / 1000).toFixed(1)} KB` : '',
      way,
      fixed(m(way, 'ms'), 1),
      fixed(m(way, 'cpuMs'), 1),
      mb(m(way, 'bytes')),
      String(m(way, 'requests')),
      mb(m(way, 'held')),
      way === 'whole' ? '1.00' : fixed(m(way, 'ms') / m('whole', 'ms')),
    ]);
  summary += `${r.file}: walk ${fixed(m('walk', 'ms') / m('whole', 'ms'))}× the time of a whole read; `;
}

const runtime =
  'Deno' in globalThis
    ? `Deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`
    : `Node ${process.version}`;
const lines = [
  '# Reading a long WebM or MKV for a few clips: walked in ranges or read whole',
  '',
  `Command: \`npx deno run -A bench/matroska-reads.ts${args.argv.length ? ` ${args.argv.join(' ')}` : ''}\` (${runtime}; local files in the page cache).`,
  `${clips} clips of ${FRAMES} frames ${STRIDE} apart spread over each ${seconds} s file; ${reps} interleaved repetitions, medians; both ways gave the same packets.`,
  '',
  ...machineLines(loadAtStart, machineLoad()),
  '',
  "| file | way | ms to the clips' packets | CPU ms | MB read | reads | most MB held | time ÷ whole |",
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
  '',
  "'walk' is videoLoader's road for a WebM or MKV of at least `matroskaReadWholeBelow` bytes (default 16 MiB), a",
  "local file or Blob; 'whole' is its road below that size; 'headers' reads 64 bytes at each header, the fewest",
  'bytes, for comparison. Over HTTP the loader walks in 8 MiB windows.',
];
console.log(lines.join('\n'));
writeFileSync(outPath, `${lines.join('\n')}\n`);
args.done(summary.trim());
