// videoLoader()'s position and state() (docs/loader.md, "Passes, epochs and resuming"), the same
// checks as the image loader's, in Node and Deno:
//   - a shuffled two-epoch run over the video fixtures, 2 random clips a video with a random crop and
//     flip each, in batches of 3, with a cut-off video (it fails whole, in the sample stage) and one
//     whose later clips fail to decode: stopped after every k batches (state() taken with the k-th
//     batch still in hand), the same loader's next `for await`, and a new loader made with the JSON
//     state as `resumeFrom`, each give exactly the rest of the uninterrupted run: keys, labels,
//     frame times and pixels;
//   - a child process (test/shared/video-resume-child.ts) that checkpoints the loader's state after
//     every batch is SIGKILLed mid-run, again and again, each time resumed from its last checkpoint:
//     the batches the runs hand out, put together, are the uninterrupted run's;
//   - a state of another loader kind, seed, shuffle or rank is refused with an OptionError naming
//     `resumeFrom` and what differs.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecodeError, type DecodePool, type VideoClipBatch, type VideoPackets } from '../../src/decode/index.ts';
import { OptionError } from '../../src/errors/index.ts';
import { loader } from '../../src/loader/index.ts';
import { seededFloats } from '../../src/random/index.ts';
import { type VideoLoader, videoLoader, type VideoLoaderOptions, type VideoLoaderState } from '../../src/video/index.ts';
import { readMp4Timeline } from '../../src/video/mp4-index.ts';
import { check, rejectsWith } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { sampleImages } from './transfer-scenarios.ts';

const GOOD = ['testsrc.h264.mp4', 'rgb.h264.mp4', 'testsrc.vp9.webm', 'testsrc.h264.mkv', 'rgb.vp9.webm'] as const;
/** The video some of whose clips fail to decode (the test's pool fails them): see flakyPool. */
const FLAKY = 'testsrc.bt709.h264.mp4';
const FRAMES = 4;
const SIDE = 32;

export interface ResumeItem {
  bytes: Uint8Array;
  label: number;
  key: string;
}

/** The videos: the good fixtures, one cut off (no moov: it fails whole) and the flaky one. */
export async function resumeSource(load: FixtureLoader): Promise<ResumeItem[]> {
  const good = await Promise.all(GOOD.map(async (name, label) => ({ bytes: await load(name), label, key: name })));
  const cut = { bytes: (await load('testsrc.h264.mp4')).subarray(0, 20000), label: 5, key: 'cut-off.mp4' };
  const flaky = { bytes: await load(FLAKY), label: 6, key: FLAKY };
  return [...good.slice(0, 2), cut, ...good.slice(2), flaky];
}

/**
 * `pool` with one difference: the flaky video's clips whose first frame is at an odd tenth of a
 * second (it has 10 frames a second) fail to decode (a DecodeError in the decode stage), the same
 * clips on every run: with seed 11, its second clip in epoch 0 and both clips in epoch 1.
 */
export function flakyPool(pool: DecodePool, source: readonly ResumeItem[]): DecodePool {
  const flaky = source.find((s) => s.key === FLAKY)?.bytes;
  // The flaky video's clips come as its whole file or, read through its index, as packets with its own avcC.
  const avcC = flaky && readMp4Timeline(flaky)?.extradata;
  const isFlaky = (input: Uint8Array | VideoPackets) =>
    input instanceof Uint8Array ? input.byteLength === flaky?.byteLength : avcC !== undefined && sameBytes(input.extradata, avcC);
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'decodeVideo')
        return (
          bytes: Uint8Array | VideoPackets,
          at: number,
          options: { frames?: { times?: number[]; frameTimes?: number[] } },
          signal?: AbortSignal,
        ) =>
          isFlaky(bytes) && Math.round((options.frames?.frameTimes?.[0] ?? options.frames?.times?.[0] ?? 0) * 10) % 2 === 1
            ? Promise.reject(new DecodeError('corrupt', 'test: a clip of the flaky video that fails to decode'))
            : target.decodeVideo(bytes, at, options as never, signal);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export function resumeOptions(pool: DecodePool, more: Partial<VideoLoaderOptions> = {}): VideoLoaderOptions {
  return {
    clip: { frames: FRAMES, stride: 2 },
    sampler: 'random',
    clipsPerVideo: 2,
    size: SIDE,
    transform: 'random-crop',
    batchSize: 3,
    shuffle: true,
    seed: 11,
    epochs: 2,
    failureBudget: { maxFailures: 100 },
    pool,
    ...more,
  };
}

/** One batch as the consumer saw it. */
export interface SeenBatch {
  keys: string[];
  labels: number[];
  times: number[];
  pixels: Uint8Array;
}

export function seen(batch: {
  keys: readonly string[];
  labels: Int32Array;
  frameTimes: Float64Array;
  data: Uint8Array;
  count: number;
}): SeenBatch {
  return {
    keys: [...batch.keys],
    labels: Array.from(batch.labels),
    times: Array.from(batch.frameTimes),
    pixels: batch.data.slice(0, batch.count * FRAMES * SIDE * SIDE * 3),
  };
}

/** One line for a batch: its keys, then a hash of its labels, frame times and pixels. */
export function fingerprint(b: SeenBatch): string {
  let h = 0x811c9dc5;
  const mix = (byte: number) => {
    h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  };
  for (const v of b.labels) for (const byte of new Uint8Array(Int32Array.of(v).buffer)) mix(byte);
  for (const byte of new Uint8Array(Float64Array.from(b.times).buffer)) mix(byte);
  for (const byte of b.pixels) mix(byte);
  return `${b.keys.join(',')}/${h.toString(16)}`;
}

/** Takes up to `limit` batches (the state is taken with the last one still in hand), then breaks. */
export async function take(
  data: VideoLoader<VideoClipBatch>,
  limit = Infinity,
): Promise<{ batches: SeenBatch[]; state: VideoLoaderState | undefined }> {
  const batches: SeenBatch[] = [];
  let state: VideoLoaderState | undefined;
  for await (const batch of data) {
    batches.push(seen(batch));
    if (batches.length >= limit) state = JSON.parse(JSON.stringify(data.state())) as VideoLoaderState;
    batch.release();
    if (batches.length >= limit) break;
  }
  return { batches, state };
}

function sameBatches(got: SeenBatch[], want: SeenBatch[], what: string): void {
  check(got.length === want.length, `${what}: ${got.length} batches, the uninterrupted run ${want.length}`);
  got.forEach((g, i) => {
    const w = want[i] as SeenBatch;
    const at = `${what}, batch ${i}`;
    check(g.keys.join() === w.keys.join(), `${at}: keys ${g.keys} against ${w.keys}`);
    check(g.labels.join() === w.labels.join(), `${at}: labels ${g.labels} against ${w.labels}`);
    check(g.times.join() === w.times.join(), `${at}: frame times ${g.times} against ${w.times}`);
    check(
      g.pixels.length === w.pixels.length && g.pixels.every((v, j) => v === w.pixels[j]),
      `${at} (${g.keys}): the pixels differ from the uninterrupted run's`,
    );
  });
}

/** The uninterrupted run, with what failed where: the test is only as good as its failures. */
export async function uninterrupted(pool: DecodePool, source: ResumeItem[]): Promise<SeenBatch[]> {
  await using data = videoLoader(source, resumeOptions(flakyPool(pool, source)));
  const { batches } = await take(data);
  const failed = data.failures().map((f) => `${f.key}@${f.stage}`);
  check(failed.filter((f) => f === 'cut-off.mp4@sample').length === 2, `the cut-off video fails whole in both epochs: ${failed}`);
  const flakyFailed = failed.filter((f) => f.startsWith(`${FLAKY}#`) && f.endsWith('@decode')).length;
  const flakyDelivered = batches.flatMap((b) => b.keys).filter((k) => k.startsWith(`${FLAKY}#`)).length;
  check(flakyFailed >= 1 && flakyDelivered >= 1, `the flaky video: ${flakyFailed} clips failed to decode, ${flakyDelivered} delivered`);
  check(failed.length === 2 + flakyFailed, `failures: ${failed}`);
  return batches;
}

/**
 * Stops after every k batches of the run: the same loader's next `for await` and a new loader
 * resumed from the JSON state each give the rest, batch for batch.
 */
export async function stoppedRunsResumeExactly(pool: DecodePool, load: FixtureLoader): Promise<{ batches: number; stops: number[] }> {
  const source = await resumeSource(load);
  const faulty = flakyPool(pool, source);
  const whole = await uninterrupted(pool, source);
  check(whole.length >= 6, `${whole.length} batches in the uninterrupted run`);
  const stops = Array.from({ length: whole.length - 1 }, (_, i) => i + 1);
  let midVideo = 0;
  for (const k of stops) {
    const want = whole.slice(k);
    {
      await using parted = videoLoader(source, resumeOptions(faulty));
      const head = await take(parted, k);
      sameBatches(head.batches, whole.slice(0, k), `the first ${k} batches`);
      const state = head.state;
      check(state !== undefined && state.kind === 'tandem.video', `a state after ${k} batches`);
      if (state.clips > 0) midVideo++;
      const rest = await take(parted);
      sameBatches(rest.batches, want, `after a break at ${k}, the next for await`);
      await using resumed = videoLoader(source, resumeOptions(faulty, { resumeFrom: state }));
      const again = await take(resumed);
      sameBatches(again.batches, want, `resumed from the state after ${k} batches (${JSON.stringify(state)})`);
      check(resumed.epoch === 2, `the resumed pass ends after epoch 1 (epoch ${resumed.epoch})`);
    }
  }
  // Batches of 3 over 2 clips a video: some stops fall between a video's clips.
  check(midVideo >= 2, `only ${midVideo} states were taken between two clips of a video`);
  return { batches: whole.length, stops };
}

/** A state of loader(), of another kind, seed, shuffle or rank: an OptionError naming `resumeFrom` and what differs. */
export async function foreignStatesRefused(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const source = await resumeSource(load);
  const faulty = flakyPool(pool, source);
  const images = sampleImages(6, 48).map((x, i) => ({ bytes: x.bytes, label: i % 3, key: `img${i}` }));
  let imageState: unknown;
  {
    await using data = loader(images, { batchSize: 2, size: 16, shuffle: true, seed: 11, pool });
    for await (const batch of data) {
      imageState = JSON.parse(JSON.stringify(data.state()));
      batch.release();
      break;
    }
  }
  let videoState: VideoLoaderState | undefined;
  {
    await using data = videoLoader(source, resumeOptions(faulty));
    videoState = (await take(data, 2)).state;
  }
  check(videoState !== undefined, 'a video state');
  const refusedNow = (resumeFrom: unknown, names: string) => {
    let threw: unknown;
    try {
      videoLoader(source, resumeOptions(faulty, { resumeFrom: resumeFrom as VideoLoaderState }));
    } catch (error) {
      threw = error;
    }
    check(
      threw instanceof OptionError && threw.field === 'resumeFrom' && threw.message.includes(names),
      `a state of ${names}: ${String(threw)}`,
    );
  };
  refusedNow(imageState, "loader()'s state");
  refusedNow({ kind: 'tandem.text', version: 1 }, "textLoader()'s state");
  refusedNow('a string', "videoLoader's state()");
  const refusedAtStart = async (more: Partial<VideoLoaderOptions>, names: string) => {
    const data = videoLoader(source, resumeOptions(faulty, { ...more, resumeFrom: videoState }));
    try {
      await rejectsWith(
        (async () => {
          for await (const b of data) b.release();
        })(),
        (e) => e instanceof OptionError && e.field === 'resumeFrom' && e.message.includes(names),
        `a state of another ${names}`,
      );
    } finally {
      await data.close();
    }
  };
  await refusedAtStart({ seed: 12 }, 'seed: 11 → 12');
  await refusedAtStart({ shuffle: false }, 'shuffle: true → false');
  await refusedAtStart({ rank: 1, worldSize: 2 }, 'consumer: 0 → 1');
  await refusedAtStart({ rank: 0, worldSize: 2 }, 'consumers: 1 → 2');
  await refusedAtStart({ clipsPerVideo: 3 }, 'draws clips alike');
  await refusedAtStart({ batchSize: 4 }, 'draws clips alike');
  // And loader() refuses the video loader's state.
  let threw: unknown;
  try {
    loader(images, { batchSize: 2, size: 16, pool, resumeFrom: videoState as never });
  } catch (error) {
    threw = error;
  }
  check(threw instanceof OptionError && threw.field === 'resumeFrom', `loader() given a video state: ${String(threw)}`);
}

// ---- the kill test -------------------------------------------------------------------------

/** How to start the child script: the runtime's executable and its arguments before the script. */
export interface ChildRuntime {
  command: string;
  args: string[];
}

const CHILD = new URL('./video-resume-child.ts', import.meta.url).pathname;
/** Node 20 runs the child's TypeScript through these hooks; Deno runs it as it is. */
export const NODE_TS_HOOKS = new URL('./video-ts-hooks.mjs', import.meta.url).href;
/** The child's training step between batches: a kill soon after a batch lands inside the run. */
export const CHILD_STEP_MS = 40;

interface ChildExit {
  signal: string | null;
  code: number | null;
  stderr: string;
}

/** Runs the child; with `kill`, SIGKILLs it `kill.extraMs` after its log shows batch `kill.at`. */
function runChild(runtime: ChildRuntime, dir: string, kill?: { at: number; extraMs: number }): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(runtime.command, [...runtime.args, CHILD, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Uint8Array) => {
      stderr += new TextDecoder().decode(chunk);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const runs = runsOf(dir).length;
    const poll = kill
      ? setInterval(() => {
          const last = runsOf(dir)[runs];
          if (!last || !last.batches.has(kill.at)) return;
          clearInterval(poll);
          timer = setTimeout(() => child.kill('SIGKILL'), kill.extraMs);
        }, 2)
      : undefined;
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

interface ChildRun {
  /** Batches in the checkpoint it resumed from (0: from the start). */
  resumedAt: number;
  batches: Map<number, string>;
  done: boolean;
}

/** The child's log, run by run. */
function runsOf(dir: string): ChildRun[] {
  const path = join(dir, 'batches.log');
  if (!existsSync(path)) return [];
  const runs: ChildRun[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    const [head, rest] = line.split(' ');
    if (head === 'run') runs.push({ resumedAt: 0, batches: new Map(), done: false });
    else if (head === 'resume') runs.push({ resumedAt: Number(rest), batches: new Map(), done: false });
    else if (head === 'done') (runs.at(-1) as ChildRun).done = true;
    else runs.at(-1)?.batches.set(Number(head), rest ?? '');
  }
  return runs;
}

/**
 * SIGKILLs the child `kills` times, each soon after a batch (before or after that batch's
 * checkpoint is written, or while it is), proves each kill landed mid-run (killed by the signal,
 * no "done", fewer batches than the run has), resumes from the last checkpoint until a run
 * finishes, and checks that the batches, the killed runs' up to their checkpoints and then the
 * last run's, are the uninterrupted run's, and that every batch any run handed out was right.
 */
export async function killedVideoRunsResume(
  runtime: ChildRuntime,
  pool: DecodePool,
  load: FixtureLoader,
  kills: number,
): Promise<{ kills: number; resumedAt: number[]; batches: number }> {
  const source = await resumeSource(load);
  const whole = (await uninterrupted(pool, source)).map(fingerprint);
  const dir = mkdtempSync(join(tmpdir(), 'tandem-video-kill-'));
  try {
    const random = seededFloats(0x51de0);
    let landed = 0;
    for (let attempt = 0; attempt < 4 * kills + 4; attempt++) {
      const ckpt = join(dir, 'run.ckpt');
      const from = existsSync(ckpt) ? (JSON.parse(readFileSync(ckpt, 'utf8')) as { batches: number }).batches : 0;
      // Kill after the second batch this run hands out (by then the first one's checkpoint is
      // written, so the next run resumes inside the run), at least three before the run's end, so
      // that even a kill a batch late (a busy machine) lands before the run is done.
      const at = Math.min(from + 2, whole.length - 3);
      const killing = landed < kills && at > from;
      const runsBefore = runsOf(dir).length;
      const exit = await runChild(runtime, dir, killing ? { at, extraMs: random() * 1.5 * CHILD_STEP_MS } : undefined);
      const run = runsOf(dir)[runsBefore];
      check(run !== undefined, `the child logged nothing: ${exit.stderr.slice(-2000)}`);
      check(run.resumedAt === from, `the child resumed at batch ${run.resumedAt}, its checkpoint holds ${from}`);
      if (!killing) {
        check(exit.code === 0 && run.done, `the child failed (${exit.code} ${exit.signal}): ${exit.stderr.slice(-2000)}`);
        break;
      }
      // Killed mid-run: ended by the signal, not done, short of the run's last batch.
      check(exit.signal === 'SIGKILL', `the child ended with ${exit.code} ${exit.signal}, not by the SIGKILL: ${exit.stderr.slice(-2000)}`);
      check(!run.done, 'a killed run has no "done"');
      const last = Math.max(0, ...run.batches.keys());
      check(last >= at && last < whole.length, `killed after batch ${last} of ${whole.length}`);
      landed++;
    }
    const runs = runsOf(dir);
    check(landed >= kills, `only ${landed} kills landed`);
    check(runs.at(-1)?.done === true, 'the last run finished');
    // Every batch each run handed out is the uninterrupted run's at that place...
    for (const [i, run] of runs.entries())
      for (const [n, line] of run.batches)
        check(line === whole[n - 1], `run ${i} (from ${run.resumedAt}), batch ${n}: ${line} against ${whole[n - 1]}`);
    // ...and the runs together, each cut at the checkpoint the next resumed from, are the whole run once.
    const together: string[] = [];
    for (const [i, run] of runs.entries()) {
      const upTo = runs[i + 1]?.resumedAt ?? Infinity;
      for (const [n, line] of [...run.batches].sort((a, b) => a[0] - b[0])) if (n <= upTo) together[n - 1] = line;
      together.length = Math.min(together.length, upTo);
    }
    check(together.join('\n') === whole.join('\n'), `the resumed runs' batches differ from the uninterrupted run's`);
    const resumedAt = runs.slice(1).map((r) => r.resumedAt);
    check(resumedAt.length >= kills && resumedAt.every((n) => n > 0 && n < whole.length), `resumed at ${resumedAt}, not inside the run`);
    return { kills: landed, resumedAt, batches: whole.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((v, i) => v === b[i]);
}
