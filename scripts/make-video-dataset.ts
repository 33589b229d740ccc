// Writes the moving-shapes videos (src/synthetic/moving.ts) as <outDir>/<class>/<index>.mp4 (.webm for
// VP8/VP9) by piping the videos' raw RGB frames into Debian's ffmpeg CLI, a batch per ffmpeg, two at once. Skips
// files that exist, so an interrupted run resumes; a file appears only once ffmpeg has finished it.
//
//   npx deno run -A scripts/make-video-dataset.ts <outDir> [--count N] [--codec h264|vp9|vp8] [--fps 8]
//     [--seed 1] [--start 0] [--width 64] [--height 64] [--frames 16] [--jobs 2] [--batch 16]
import { MOTION_NAMES, motionLabelFor, renderMovingSample } from '../src/synthetic/index.ts';

const CODECS = {
  h264: { ext: 'mp4', args: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-g', '8', '-bf', '0', '-forced-idr', '1'] },
  vp9: { ext: 'webm', args: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-crf', '24', '-b:v', '0', '-g', '8'] },
  vp8: { ext: 'webm', args: ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-crf', '8', '-b:v', '2M', '-g', '8'] },
} as const;
type Codec = keyof typeof CODECS;

function usage(problem: string): never {
  console.error(`make-video-dataset: ${problem}`);
  console.error(
    'usage: make-video-dataset.ts <outDir> [--count N] [--codec h264|vp9|vp8] [--fps F] [--seed S] [--start I] [--width W] [--height H] [--frames N] [--jobs J] [--batch B]',
  );
  Deno.exit(2);
}

function parse(args: string[]) {
  const numbers: Record<string, number> = { count: 96, fps: 8, seed: 1, start: 0, width: 64, height: 64, frames: 16, jobs: 2, batch: 16 };
  let codec: Codec = 'h264';
  let outDir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) {
      if (outDir !== undefined) usage(`one output folder, not also ${arg}`);
      outDir = arg;
      continue;
    }
    const name = arg.slice(2),
      value = args[++i];
    if (value === undefined) usage(`${arg} needs a value`);
    if (name === 'codec') {
      if (!(value in CODECS)) usage(`--codec must be h264, vp9 or vp8 (got ${value})`);
      codec = value as Codec;
    } else if (name in numbers) {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0 || (name !== 'fps' && !Number.isInteger(n)))
        usage(`${arg} must be a ${name === 'fps' ? 'number' : 'whole number'}`);
      numbers[name] = n;
    } else usage(`unknown option ${arg}`);
  }
  if (outDir === undefined) usage('the output folder is missing');
  if (!(numbers.fps! > 0) || numbers.jobs! < 1 || numbers.batch! < 1) usage('--fps must be > 0, --jobs and --batch ≥ 1');
  return {
    outDir,
    codec,
    ...(numbers as Record<'count' | 'fps' | 'seed' | 'start' | 'width' | 'height' | 'frames' | 'jobs' | 'batch', number>),
  };
}

const exists = async (path: string): Promise<boolean> => {
  try {
    return (await Deno.stat(path)).size > 0;
  } catch {
    return false;
  }
};

const options = parse(Deno.args);
const { ext, args: codecArgs } = CODECS[options.codec];
for (const name of MOTION_NAMES) await Deno.mkdir(`${options.outDir}/${name}`, { recursive: true });

const began = performance.now();
const made = new Map<string, number>(MOTION_NAMES.map((n) => [n, 0]));
let skipped = 0;
const missing: { index: number; path: string; className: string }[] = [];
for (let index = options.start; index < options.start + options.count; index++) {
  const className = MOTION_NAMES[motionLabelFor(options.seed, index)] ?? 'right';
  const path = `${options.outDir}/${className}/${index}.${ext}`;
  if (await exists(path)) skipped++;
  else missing.push({ index, path, className });
}

// One ffmpeg encodes a batch of videos as one stream with a keyframe at each video's first frame,
// and its segment muxer cuts the stream there into one file per video, timestamps from 0: starting
// ffmpeg costs more than encoding 16 small frames, so this is several times faster than a process
// per video.
async function encodeBatch(batch: typeof missing, id: number): Promise<void> {
  const { width, height, frames } = options;
  const scratch = `${options.outDir}/.partial-${id}`;
  await Deno.remove(scratch, { recursive: true }).catch(() => {});
  await Deno.mkdir(scratch);
  const cuts = batch.slice(1).map((_, k) => (k + 1) * frames);
  const ffmpeg = new Deno.Command('ffmpeg', {
    args: [
      ...['-hide_banner', '-loglevel', 'error', '-y'],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', String(options.fps), '-i', '-'],
      ...codecArgs,
      ...['-force_key_frames', `expr:eq(mod(n,${frames}),0)`, '-pix_fmt', 'yuv420p', '-threads', '1', '-an'],
      ...['-f', 'segment', '-segment_format', ext, '-reset_timestamps', '1'],
      ...(ext === 'mp4' ? ['-segment_format_options', 'movflags=+faststart'] : []),
      ...(cuts.length > 0 ? ['-segment_frames', cuts.join(',')] : ['-segment_time', '1e9']),
      `${scratch}/%d.${ext}`,
    ],
    stdin: 'piped',
    stdout: 'null',
    stderr: 'piped',
  }).spawn();
  const writer = ffmpeg.stdin.getWriter();
  for (const { index } of batch) await writer.write(renderMovingSample(options.seed, index, options).rgb);
  await writer.close();
  const { code, stderr } = await ffmpeg.output();
  if (code !== 0) throw new Error(`ffmpeg failed on items ${batch[0]?.index} … (exit ${code}): ${new TextDecoder().decode(stderr).trim()}`);
  for (const [k, { path, className }] of batch.entries()) {
    const segment = `${scratch}/${k}.${ext}`;
    if (!(await exists(segment))) throw new Error(`ffmpeg wrote no segment ${k} for ${path} (a keyframe missing at its first frame?)`);
    await Deno.rename(segment, path);
    made.set(className, (made.get(className) ?? 0) + 1);
  }
  await Deno.remove(scratch, { recursive: true });
}

const batches: (typeof missing)[] = [];
for (let i = 0; i < missing.length; i += options.batch) batches.push(missing.slice(i, i + options.batch));
let nextBatch = 0;
async function worker(): Promise<void> {
  while (nextBatch < batches.length) {
    const id = nextBatch++;
    await encodeBatch(batches[id] ?? [], id);
  }
}

try {
  await Promise.all(Array.from({ length: Math.min(options.jobs, Math.max(1, batches.length)) }, worker));
} catch (error) {
  console.error(`[moving-shapes] ${error instanceof Error ? error.message : String(error)}`);
  Deno.exit(1);
}
const end = options.start + options.count;
const total = [...made.values()].reduce((a, b) => a + b, 0);
const seconds = ((performance.now() - began) / 1000).toFixed(1);
const perClass = [...made].map(([name, n]) => `${name} ${n}`).join(', ');
console.log(
  `[moving-shapes] ${options.outDir}: made ${total} ${options.codec} videos (${perClass}), ${skipped} already there; ` +
    `seed ${options.seed}, items ${options.start} … ${end - 1}, ${options.width}x${options.height}, ${options.frames} frames at ${options.fps} fps, ${seconds} s`,
);
