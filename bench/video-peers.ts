// Tandem's video loader against the loader a Python user runs, outside any browser, per core:
//   - Tandem: videoLoader(paths, { to: 'cpu' }) on the wasm road with --threads pool threads
//     (u8 NFHWC clips in wasm memory; an MP4 is read through its index, a clip's packets only);
//   - the peer: a PyTorch DataLoader with --threads worker processes, each clip decoded by
//     torchvision's VideoReader (seek, every 2nd frame, antialiased resize, centre crop, normalise
//     to f32), Debian's python3-torchvision.
// Both decode the same clips: 2 'random' clips of 8 frames 2 apart per video, drawn by Tandem's
// sampler (seed 5) and handed to the peer as start times; Tandem checks its clips' frame times
// against the plan. Each pass runs in a process of its own (bench/video/tandem-pass.ts,
// bench/video/dataloader_clips.py): an untimed epoch, then the timed one; CPU is the process's
// (and the workers') utime + stime over it, bytes read its rchar, memory the sum of peak RSS.
// Repetitions interleave the sides; the report gives medians. Corpora (bench/video/corpus.ts):
// the moving-shapes fixtures, the generated 320×240 H.264, and pans across real photographs.
//
//   npx deno run -A bench/video-peers.ts [--shapes 48] [--large 16] [--pans 18] [--reps 3]
//                                        [--threads 2] [--out docs/bench/video-peers.md] [--smoke]
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import process from 'node:process';
import { DecodePool } from '../src/decode/index.ts';
import { sampleClips } from '../src/video/index.ts';
import { table } from './decode/report.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed, median } from './shared/stats.ts';
import { type BenchVideo, LARGE, largeVideos, PHOTO_PANS, photoPanVideos, shapesVideos } from './video/corpus.ts';
import { jsonLineOf, torchvisionVideo } from './video/torchvision.ts';
import { MEAN, STD } from './video/types.ts';

const args = benchArgs('video-peers', {
  shapes: { type: 'number', default: 48, smoke: 4, help: 'moving-shapes videos (at most 96)' },
  large: { type: 'number', default: 16, smoke: 2, help: 'generated 320×240 10 s videos' },
  pans: { type: 'number', default: 18, smoke: 1, help: 'pans across photographs (H.264 and VP9 in turn)' },
  reps: { type: 'number', default: 3, smoke: 1, help: 'interleaved repetitions (at least 3 except with --smoke)' },
  threads: { type: 'number', default: 2, help: "Tandem's pool threads and the DataLoader's workers" },
  out: { type: 'string', default: 'docs/bench/video-peers.md', smoke: smokeOut('bench-video-peers.md') },
});
const { smoke, argv } = args;
const { threads, out: outPath } = args.values;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const command =
  `npx deno run -A bench/video-peers.ts ${argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out' && !a.startsWith('--out=')).join(' ')}`.trim();
const log = (s: string) => console.error(`[bench:video-peers] ${s}`);
const CLIP = { frames: 8, stride: 2, size: 112, batch: 8, clipsPerVideo: 2, seed: 5 } as const;

log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
log(`machine: ${machine.line}; load ${loadAtStart}`);
const torch = torchvisionVideo();
if (!('version' in torch)) throw new Error(torch.missing);

interface Corpus {
  id: string;
  name: string;
  description: string;
  videos: BenchVideo[];
}
const [w0, h0] = PHOTO_PANS.sizes[0]!;
const [w2, h2] = PHOTO_PANS.sizes[2]!;
const corpora: Corpus[] = [
  { id: 'shapes', name: 'moving shapes', description: 'H.264 64×64, 16 frames at 8 fps, MP4', videos: shapesVideos(args.values.shapes) },
  {
    id: 'large',
    name: 'generated 320×240',
    description: `H.264 ${LARGE.width}×${LARGE.height}, ${LARGE.seconds} s at ${LARGE.fps} fps, a keyframe every ${LARGE.keyframeSeconds} s, B-frames, MP4`,
    videos: await largeVideos(args.values.large, log),
  },
  {
    id: 'pans',
    name: 'photograph pans',
    description: `pans and zooms across Debian's mate-backgrounds photographs, ${w0}×${h0} to ${w2}×${h2}, ${PHOTO_PANS.seconds} s at ${PHOTO_PANS.fps} fps, H.264 High with B-frames in MP4 and VP9 in WebM in turn`,
    videos: await photoPanVideos(args.values.pans, log),
  },
];

/** Each corpus's clips as the loader draws them (key: path#clip), from the demuxer's timelines. */
async function planOf(corpus: Corpus): Promise<{ tandem: string; peer: string; clips: number }> {
  const pool = await DecodePool.create({ threads: 1 });
  const times: Record<string, number[]> = {};
  const clips: { path: string; start: number }[] = [];
  try {
    for (const v of corpus.videos) {
      const video = await pool.demuxVideo(v.bytes, { packets: false });
      const drawn = sampleClips(
        video,
        { framesPerClip: CLIP.frames, stride: CLIP.stride },
        { kind: 'random', clips: CLIP.clipsPerVideo },
        { seed: CLIP.seed, epoch: 0, key: v.path },
      );
      for (const c of drawn) {
        times[drawn.length > 1 ? `${v.path}#${c.clipIndex}` : v.path] = Array.from(c.frameTimes);
        clips.push({ path: v.path, start: c.frameTimes[0] ?? 0 });
      }
    }
  } finally {
    await pool.close();
  }
  const base = `${tmpdir()}/tandem-bench-video-peers-${process.pid}-${corpus.id}`;
  const paths = corpus.videos.map((v) => v.path);
  writeFileSync(`${base}-tandem.json`, JSON.stringify({ threads, ...CLIP, videos: paths, times }));
  writeFileSync(`${base}-peer.json`, JSON.stringify({ ...CLIP, workers: threads, mean: MEAN, std: STD, clips }));
  return { tandem: `${base}-tandem.json`, peer: `${base}-peer.json`, clips: clips.length };
}

interface Sample {
  stages?: Record<string, { msPerClip: number; p50: number }>;
  /** Tandem: CPU seconds per kind of thread over the timed epoch (main, the pool's, the runtime's). */
  threads?: Record<string, number>;
  seconds: number;
  cpu: number;
  readBytes: number;
  loaderBytes?: number;
  /** Tandem: its decode jobs for its clips (clips of one video that share frames share a job). */
  decodes?: { clips: number; jobs: number; shared: number };
  peakRssMb: number;
  clips: number;
  failures: number;
  wrongTimes?: number;
  firstError: string | null;
}

type Side = 'tandem' | 'dataloader';
const LABELS: Record<Side, string> = {
  tandem: `Tandem videoLoader, wasm road, ${threads} threads`,
  dataloader: `PyTorch DataLoader + torchvision VideoReader, ${threads} workers`,
};
const plans = new Map<string, Awaited<ReturnType<typeof planOf>>>();
for (const c of corpora) plans.set(c.id, await planOf(c));
const samples = new Map<string, Sample[]>();
const failures: string[] = [];
for (let rep = 0; rep < reps; rep++) {
  for (const corpus of corpora) {
    const plan = plans.get(corpus.id)!;
    const sides: Side[] = rep % 2 === 0 ? ['tandem', 'dataloader'] : ['dataloader', 'tandem'];
    for (const side of sides) {
      const s =
        side === 'tandem'
          ? await jsonLineOf<Sample>(process.execPath, [
              'run',
              '-A',
              new URL('./video/tandem-pass.ts', import.meta.url).pathname,
              plan.tandem,
            ])
          : await jsonLineOf<Sample>('/usr/bin/python3', [new URL('./video/dataloader_clips.py', import.meta.url).pathname, plan.peer]);
      const key = `${corpus.id}/${side}`;
      samples.set(key, [...(samples.get(key) ?? []), s]);
      if (s.failures || s.wrongTimes || s.clips !== plan.clips)
        failures.push(
          `${corpus.name} / ${LABELS[side]}: ${s.clips} of ${plan.clips} clips, ${s.failures} failed, ${s.wrongTimes ?? 0} wrong; ${s.firstError}`,
        );
      log(
        `rep ${rep + 1} ${corpus.name} / ${side}: ${(s.clips / s.seconds).toFixed(1)} clips/s, ${((1000 * s.cpu) / s.clips).toFixed(1)} CPU ms/clip, ${(s.readBytes / s.clips / 1024).toFixed(0)} KiB read/clip, ${s.peakRssMb.toFixed(0)} MiB peak${
          s.threads
            ? `; CPU ms/clip by thread: ${Object.entries(s.threads)
                .filter(([, v]) => v > 0)
                .map(([k, v]) => `${k} ${((1000 * v) / s.clips).toFixed(1)}`)
                .join(', ')}`
            : ''
        }`,
      );
    }
  }
}
for (const p of plans.values()) rmSync(p.tandem, { force: true }), rmSync(p.peer, { force: true });
const loadAtEnd = machineLoad();

// ---- report -----------------------------------------------------------------------------------
const med = (key: string, f: (s: Sample) => number) => median((samples.get(key) ?? []).map(f));
const rate = (s: Sample) => s.clips / s.seconds;
const cpuMs = (s: Sample) => (1000 * s.cpu) / s.clips;
const lines = [
  '# Video clips per core: Tandem against the PyTorch DataLoader',
  '',
  `Command: \`${command}\``,
  '',
  ...machineLines(loadAtStart, loadAtEnd, machine),
  '',
  `The job: ${CLIP.clipsPerVideo} random clips per video (Tandem's sampler, seed ${CLIP.seed}), ${CLIP.frames} frames ${CLIP.stride} apart, the shorter side to ${CLIP.size} and a centre crop, batches of ${CLIP.batch}.`,
  `Tandem hands out u8 NFHWC clips (its GPU road normalises on the GPU); the DataLoader's workers also normalise to f32.`,
  `Each figure is the median of ${reps} interleaved repetitions of a timed epoch after an untimed one, each side in a process of its own.`,
  'CPU is the processes\' utime + stime over the timed epoch (the DataLoader: its parent and workers); "read" is their rchar',
  "(bytes through read(2) and the like: file data, and the Python or Deno files a process reads meanwhile); Tandem's own count",
  "of the video bytes it read is beside it; memory is the sum of each process's peak RSS (VmHWM).",
  '',
];
const summary: string[] = [];
for (const corpus of corpora) {
  const t = `${corpus.id}/tandem`;
  const d = `${corpus.id}/dataloader`;
  const kb = corpus.videos.reduce((s, v) => s + v.bytes.length, 0) / corpus.videos.length / 1024;
  lines.push(
    `## ${corpus.name}`,
    '',
    `${corpus.videos.length} videos, ${corpus.description}; ${kb.toFixed(0)} KiB a video on average.`,
    '',
  );
  const rows = (['tandem', 'dataloader'] as Side[]).map((side) => {
    const k = `${corpus.id}/${side}`;
    return [
      LABELS[side],
      fixed(med(k, rate), 1),
      fixed(med(k, cpuMs), 1),
      fixed(
        med(k, (s) => s.readBytes / s.clips / 1024),
        0,
      ),
      side === 'tandem'
        ? fixed(
            med(k, (s) => (s.loaderBytes ?? Number.NaN) / s.clips / 1024),
            0,
          )
        : 'n/a',
      fixed(
        med(k, (s) => s.peakRssMb),
        0,
      ),
    ];
  });
  lines.push(...table(['side', 'clips/s', 'CPU ms / clip', 'read KiB / clip', 'video KiB / clip (own count)', 'peak MiB'], rows), '');
  const speed = med(t, rate) / med(d, rate);
  const cpu = med(t, cpuMs) / med(d, cpuMs);
  // Each repetition's own ratio (its two sides ran back to back), for the spread beside the medians.
  const perRep = (f: (s: Sample) => number) => {
    const ts = samples.get(t) ?? [];
    const ds = samples.get(d) ?? [];
    const r = ts.map((s, i) => f(s) / f(ds[i] ?? s));
    return `${fixed(Math.min(...r), 2)}–${fixed(Math.max(...r), 2)}`;
  };
  lines.push(
    `Tandem ÷ DataLoader: **${fixed(speed, 2)}×** the clips per second, **${fixed(cpu, 2)}×** the CPU per clip ` +
      `(each repetition's own ratios: ${perRep(rate)}× and ${perRep(cpuMs)}×).`,
    '',
  );
  // Tandem's stages in the timed epoch: the working time of each per clip, and its median task.
  const names = Object.keys(samples.get(t)?.[0]?.stages ?? {});
  if (names.length) {
    const stage = (name: string, f: (x: { msPerClip: number; p50: number }) => number) =>
      fixed(
        med(t, (s) => f(s.stages?.[name] ?? { msPerClip: Number.NaN, p50: Number.NaN })),
        2,
      );
    const d = samples.get(t)?.[0]?.decodes;
    if (d)
      lines.push(
        `Tandem's decode jobs: ${d.jobs} for ${d.clips} clips (${d.shared} of them in a job shared with another clip of their video).`,
        '',
      );
    const threadMs = (kind: string) =>
      fixed(
        med(t, (s) => (1000 * (s.threads?.[kind] ?? 0)) / s.clips),
        1,
      );
    lines.push(
      `Tandem's CPU ms per clip by thread: the pool's wasm threads ${threadMs('pool')}, the main thread (the pipeline's event loop, reads, the index) ${threadMs('main')}, V8's own threads (concurrent GC, compilation, wasm tier-up) ${threadMs('v8')}, the runtime's others ${threadMs('runtime')}.`,
      '',
    );
    lines.push(
      "Tandem's stages (its pipeline statistics; a stage's working time is its tasks in flight, I/O waits included, summed over its slots):",
      '',
      ...table(
        ['stage', 'working ms / clip', 'median task ms'],
        names.map((n) => [n, stage(n, (x) => x.msPerClip), stage(n, (x) => x.p50)]),
      ),
      '',
    );
  }
  summary.push(`${corpus.id} ${fixed(speed, 2)}x speed, ${fixed(cpu, 2)}x CPU`);
}
lines.push('## Notes', '', `- torchvision ${torch.version}, Debian's python3-torch and python3-torchvision.`);
for (const f of [...new Set(failures)].slice(0, 10)) lines.push(`- Failure: ${f}`);
const text = `${lines.join('\n')}\n`;
console.log(text);
writeFileSync(outPath, text);
log(`wrote ${outPath}`);
if (smoke) {
  if (failures.length) {
    console.error(`[bench:video-peers] smoke run failed:\n${failures.map((m) => `  - ${m}`).join('\n')}`);
    process.exit(1);
  }
  args.done(summary.join('; '));
}
process.exit(0);
