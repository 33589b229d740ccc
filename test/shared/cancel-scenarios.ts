// Random-point cancellation: the loader (decode on pool threads → batches → GPU ring) is stopped
// at seeded random points in five different ways, many times over one pool and one batcher, and
// once in a while the pool itself is closed mid-run. After every stop nothing may be held: no
// decode job in flight or queued, every batch buffer back in the batcher, every GPU slot back in
// the ring, the pool's wasm heap back to the bytes it held before the run (malloc's own count);
// after a closed pool, no worker thread alive. The next run must start clean (its
// batches hold only its own items). Training sessions are stopped the same way through their
// signal, and must report that they left nothing held.
import { DecodePool, ImageBatcher, type EncodedImage, type ImageBatch } from '../../src/decode/index.ts';
import { BatchUploader, type GpuBatch, type GpuContext } from '../../src/gpu/index.ts';
import { PipelineBuilder, type Pipeline } from '../../src/pipeline/index.ts';
import { seededFloats } from '../../src/random/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { runTraining, type LabelledData, type LabelledSource } from '../../src/train/index.ts';
import { runtimeName } from '../../src/runtime/index.ts';
import { check, within } from './assert.ts';
import { sleep } from './async.ts';
import { sampleImages } from './transfer-scenarios.ts';

/** How a run was stopped. */
export type StopKind = 'break' | 'stop-from-timer' | 'abort-signal' | 'hold-then-stop' | 'close-pool';
const KINDS: readonly StopKind[] = ['break', 'stop-from-timer', 'abort-signal', 'hold-then-stop', 'close-pool'];

export interface CancelOutcome {
  stops: number;
  byKind: Record<StopKind, number>;
  batches: number;
  poolsClosed: number;
}

const BATCH = 4;
const SIZE = 32;

export interface LoaderStopOptions {
  /** The decode pool's mode: wasm pthreads on shared memory, or the fallback's workers (default 'pthreads'). */
  mode?: 'pthreads' | 'workers';
  /**
   * Threads or workers alive, counted from outside the library (exact counts only); after every
   * closed pool the count must be back to what it was before the first pool.
   */
  countWorkers?: () => Promise<number | undefined>;
}

/**
 * `stops` runs, each stopped at a random point. `device` adds the GPU upload stage (the ring of
 * slots the training loop uses); without it the loader ends at the batches.
 */
export async function loaderStopsAtRandomPoints(
  stops: number,
  seed: number,
  device?: GPUDevice,
  options: LoaderStopOptions = {},
): Promise<CancelOutcome> {
  const mode = options.mode ?? 'pthreads';
  const outside = options.countWorkers ?? (() => Promise.resolve(undefined));
  const before = await outside();
  const random = seededFloats(seed);
  const pick = (n: number) => Math.floor(random() * n);
  // The run number is in each key, so a batch that carries another run's item is caught.
  const images = sampleImages(12, 64);
  const byKind = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<StopKind, number>;
  let pool = await DecodePool.create({ threads: 2, mode });
  check(pool.mode === mode, `a pool asked for '${mode}' runs in '${pool.mode}'`);
  let batcher = new ImageBatcher(pool, { batchSize: BATCH, height: SIZE, width: SIZE, buffers: 3 });
  let heap = new HeapWatch(await warmHeap(pool, images), firstUses(pool));
  const uploader = device ? new BatchUploader(device, { maxBatchBytes: batcher.batchBytes, slots: 2 }) : undefined;
  let batches = 0;
  let poolsClosed = 0;
  try {
    for (let run = 0; run < stops; run++) {
      const kind = KINDS[pick(KINDS.length)]!;
      byKind[kind]++;
      const items: EncodedImage[] = images.map((image, i) => ({ ...image, key: `run${run}/img${i}` }));
      const controller = new AbortController();
      const built = new PipelineBuilder()
        .addSource(items, { repeat: 50 })
        .pipe(batcher.decodeStage, { name: 'decode', concurrency: 4 })
        .aggregate(() => batcher.aggregator(), { name: 'batch' });
      const pipeline: Pipeline<ImageBatch | GpuBatch> = uploader
        ? built
            .pipe((batch: ImageBatch, ctx) => uploader.upload(batch, ctx.signal, ctx), { name: 'upload' })
            .addSink(2)
            .build({ signal: controller.signal })
        : built.addSink(2).build({ signal: controller.signal });
      const delay = random() * 25;
      const take = pick(6);
      const checkBatch = (batch: ImageBatch | GpuBatch) => {
        batches++;
        const foreign = batch.keys.filter((key) => !key.startsWith(`run${run}/`));
        check(foreign.length === 0, `run ${run}: a batch holds items of another run: ${foreign.join()}`);
      };
      let closing: Promise<void> | undefined;
      let held: ImageBatch | GpuBatch | undefined;
      const timer = setTimeout(() => {
        if (kind === 'stop-from-timer') void pipeline.stop();
        else if (kind === 'abort-signal') controller.abort(new Error('stopped by the test'));
        else if (kind === 'close-pool') closing = pool.close();
      }, delay);
      try {
        let seen = 0;
        for await (const batch of pipeline) {
          checkBatch(batch);
          if (kind === 'hold-then-stop' && seen === take) {
            held = batch; // kept across the stop, released afterwards
            await within(pipeline.stop(), 10_000, `run ${run} (${kind}): stop() with a batch held`);
            break;
          }
          batch.release();
          if (kind === 'break' && ++seen > take) break;
          if (kind !== 'break') seen++;
          if (kind === 'close-pool' || kind === 'stop-from-timer' || kind === 'abort-signal') await sleep(random() * 3);
        }
      } catch (error) {
        // An abort ends the iteration with the signal's reason; a closed pool fails its items, which
        // may break the failure budget.
        check(kind === 'abort-signal' || kind === 'close-pool', `run ${run} (${kind}): the loader threw ${String(error)}`);
      } finally {
        clearTimeout(timer);
      }
      await within(pipeline.stop(), 10_000, `run ${run} (${kind}): stop()`);
      held?.release();
      check(!pipeline.running, `run ${run} (${kind}): the pipeline still runs after stop()`);
      if (closing) await within(closing, 10_000, `run ${run}: pool.close()`);
      // Batches from a run whose decodes were still settling come back when they settle.
      await within(
        waitFor(() => batcher.stats().free === batcher.stats().buffers),
        10_000,
        `run ${run} (${kind}): batch buffers back`,
      );
      const b = batcher.stats();
      check(b.free === b.buffers && b.filling === 0 && b.handed === 0, `run ${run} (${kind}): batch buffers ${JSON.stringify(b)}`);
      if (uploader)
        check(
          uploader.freeSlots === uploader.slotCount,
          `run ${run} (${kind}): ${uploader.freeSlots} of ${uploader.slotCount} GPU slots free`,
        );
      const p = pool.stats();
      if (closing) {
        check(p.liveWorkers === 0, `run ${run}: ${p.liveWorkers} worker threads alive after pool.close()`);
        if (before !== undefined) {
          const alive = await settledCount(outside, before);
          check(
            alive <= before,
            `run ${run}: ${alive} threads or workers alive after pool.close() (${before} before the first pool), counted from outside`,
          );
        }
        poolsClosed++;
        batcher.close();
        pool = await DecodePool.create({ threads: 2, mode });
        batcher = new ImageBatcher(pool, { batchSize: BATCH, height: SIZE, width: SIZE, buffers: 3 });
        heap = new HeapWatch(await warmHeap(pool, images), firstUses(pool));
      } else {
        check(p.inFlight === 0 && p.queued === 0 && p.liveWorkers === 2, `run ${run} (${kind}): pool ${JSON.stringify(p)}`);
        // Counted by the allocator, not by Tandem: a cancelled job's input copy, a decoder's buffers
        // or a batch buffer left behind shows here as bytes the run did not give back.
        heap.check(p.heapBytes, `run ${run} (${kind})`);
      }
    }
  } finally {
    await uploader?.close();
    batcher.close();
    await pool.close();
  }
  check(pool.stats().liveWorkers === 0, `${pool.stats().liveWorkers} worker threads alive after the last pool.close()`);
  if (before !== undefined) {
    const alive = await settledCount(outside, before);
    check(alive <= before, `${alive} threads or workers alive after the last pool.close() (${before} before the first pool)`);
  }
  return { stops, byKind, batches, poolsClosed };
}

/**
 * In 'pthreads' mode each thread's first job allocates its decoder in the shared heap; in
 * 'workers' mode decoders live in the workers' own memories, so the heap watched here (records,
 * input copies, batch buffers) has no first use to allow.
 */
const firstUses = (pool: DecodePool) => (pool.mode === 'pthreads' ? pool.threads : 0);

/**
 * The pool's heap once every job record has its input buffer and every thread its decoder and
 * buffers (made on first use, then only grown): decodes as many large images at once as the pool
 * takes, so that every thread is likely to need one of its own and its buffers reach sizes the
 * run's small images never pass.
 */
async function warmHeap(pool: DecodePool, images: EncodedImage[]): Promise<number> {
  const large = renderSample(3, 0, { width: 768, height: 576 });
  const bytes = encodeJpeg(large.rgb, large.width, large.height, { quality: 90 });
  for (const input of [bytes, ...images.map((image) => image.bytes)])
    await Promise.all(Array.from({ length: pool.maxInFlight }, () => pool.decode(input, { width: SIZE, height: SIZE })));
  return pool.stats().heapBytes;
}

/**
 * What a pool thread's first job allocates for the scenario's small images: its decoder, tables and
 * grow-only buffers (14.5 KB measured). Smaller growth is never a first use.
 */
const FIRST_USE_BYTES = { min: 4 * 1024, max: 64 * 1024 };

/**
 * The heap must come back to the baseline after every run. The one exception is a thread's first
 * job: it makes the thread's decoder and buffers, and under load one thread can take every job of
 * the warm-up while the other is not scheduled at all (CI saw that first job at run 14 and at run
 * 82, 14.5 KB each time). So each thread may raise the baseline once, by a first job's worth
 * (FIRST_USE_BYTES); any other growth, or a third, is memory a run did not give back.
 */
class HeapWatch {
  #baseline: number;
  #firstUses: number;
  constructor(baseline: number, threads: number) {
    this.#baseline = baseline;
    this.#firstUses = threads;
  }
  check(bytes: number, what: string): void {
    const grew = bytes - this.#baseline;
    if (grew === 0) return;
    if (grew >= FIRST_USE_BYTES.min && grew <= FIRST_USE_BYTES.max && this.#firstUses > 0) {
      this.#firstUses--;
      this.#baseline = bytes;
      return;
    }
    check(false, `${what}: ${grew} bytes of wasm heap not given back`);
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(1);
}

/**
 * Where a session was when its stop came: before its first training step, in an epoch's training
 * steps, at an epoch's held-out pass (from the epoch's last step to its epoch record: the session
 * goes straight into the pass), or after the last epoch's record.
 */
export type StopPhase = 'before-first-step' | 'mid-epoch' | 'held-out' | 'after-last-epoch';
const PHASES: readonly StopPhase[] = ['before-first-step', 'mid-epoch', 'held-out', 'after-last-epoch'];

export interface TrainingStopResult {
  stops: number;
  /** Stops that came, by the phase they landed in. */
  byPhase: Record<StopPhase, number>;
  /** The thread or worker count after each run returned (undefined where uncounted). */
  counts: Array<number | undefined>;
  /** Runs given a stop time that ended cancelled, and runs that finished before their stop came. */
  cancelled: number;
  finishedFirst: number;
  /** Runs never stopped: each must have completed. */
  unstopped: number;
  /** Threads (or workers) after the first two runs: the baseline later runs return to; undefined where uncounted. */
  osThreads: number | undefined;
  /** Abort → runTraining settled, over the cancelled runs (ms). */
  stopLatencyP95Ms: number;
  stopLatencyMaxMs: number;
}

/** Counts the GPU buffers made on `device` while `fn` runs and not destroyed by its end. */
async function liveBuffersAfter<T>(device: GPUDevice, fn: () => Promise<T>): Promise<{ result: T; live: number; made: number }> {
  const live = new Set<GPUBuffer>();
  let made = 0;
  const create = device.createBuffer;
  device.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor) {
    const buffer = create.call(this, descriptor);
    made++;
    live.add(buffer);
    const destroy = buffer.destroy;
    buffer.destroy = function (this: GPUBuffer) {
      live.delete(buffer);
      return destroy.call(this);
    };
    return buffer;
  };
  try {
    return { result: await fn(), live: live.size, made };
  } finally {
    device.createBuffer = create;
  }
}

/**
 * Stop latency, abort to runTraining settled, p95 as measured on this project's 2-core machines
 * (docs/reliability.md); each tier requires its p95 within STOP_LATENCY_MARGIN times its figure,
 * so a session deaf to its signal (a held-out pass or a read that ignores it) fails.
 */
export const STOP_LATENCY_P95_MS = { node: 271, deno: 231, chromium: 2098 } as const;
export const STOP_LATENCY_MARGIN = 5;

export function checkStopLatency(p95Ms: number, runtime: keyof typeof STOP_LATENCY_P95_MS): void {
  const bound = STOP_LATENCY_MARGIN * STOP_LATENCY_P95_MS[runtime];
  check(
    Number.isFinite(p95Ms) && p95Ms <= bound,
    `stop latency p95 ${p95Ms.toFixed(0)} ms, over ${bound} ms (${STOP_LATENCY_MARGIN}× the measured ${STOP_LATENCY_P95_MS[runtime]} ms)`,
  );
}

/**
 * `stops` training sessions, each given a stop time drawn from a fixed distribution (10% at once,
 * 15% never, the rest uniform over `spanMs`, which covers a whole run in this runtime), so some
 * stop before the first step, mid-epoch, in the held-out pass, and some finish first. Every fifth
 * run is instead stopped from inside the session at a drawn point of one phase in turn (the first
 * training read, a training step, a read of the held-out pass), so that each phase is hit
 * whatever the machine's speed; each stop's phase is recorded, and a stop before the last step
 * must end the run cancelled, one in a held-out pass must leave that epoch without an accuracy. Checked from
 * outside the library: every GPU buffer the session made is destroyed when it returns (a counting
 * wrapper on the device); from its report: no batch buffer, GPU slot or decode worker left held.
 * Never-stopped runs must complete; stop latency (abort → settled) is measured.
 */
export async function trainingStopsAtRandomPoints(
  stops: number,
  seed: number,
  gpu: GpuContext,
  spanMs: number,
  /** Threads or workers alive, as the runtime counts them (default: the OS's threads, from /proc). */
  countThreads: () => Promise<number | undefined> = osThreads,
  /** How far above the baseline a count may be, once settled (0: below one pool's threads). */
  slack = 0,
): Promise<TrainingStopResult> {
  const random = seededFloats(seed);
  const EPOCHS = 2;
  const BATCH_SIZE = 8;
  // What the session is doing, from what it shows outside: the reads it asks for, the steps it
  // reports (onStepKeys) and its epoch events.
  let steps = 0;
  let epochsDone = 0;
  let inHeldPass = false;
  let onRead: ((held: boolean) => void) | undefined;
  let onStep: (() => void) | undefined;
  const phaseNow = (): StopPhase =>
    epochsDone === EPOCHS ? 'after-last-epoch' : inHeldPass ? 'held-out' : steps === 0 ? 'before-first-step' : 'mid-epoch';
  const sources = (images: EncodedImage[], from: number, held: boolean): LabelledSource[] =>
    images.map((image, i) => ({
      key: `img${from + i}`,
      label: image.label ?? 0,
      read: async () => {
        check(!held || inHeldPass, `a held-out read outside a held-out pass (after step ${steps}, ${epochsDone} epochs)`);
        onRead?.(held);
        return image.bytes;
      },
    }));
  const images = sampleImages(40, 64);
  const data: LabelledData = {
    train: sources(images.slice(0, 32), 0, false),
    held: sources(images.slice(32), 32, true),
    classes: ['a', 'b', 'c', 'd'],
  };
  const stepsPerRun = Math.ceil((data.train.length * EPOCHS) / BATCH_SIZE);
  const stepsPerEpoch = data.train.length / BATCH_SIZE; // whole: batches never straddle an epoch here
  const r = { stops, cancelled: 0, finishedFirst: 0, unstopped: 0 };
  const byPhase = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<StopPhase, number>;
  const counts: Array<number | undefined> = [];
  const latencies: number[] = [];
  let baseline: number | undefined;
  for (let run = 0; run < stops; run++) {
    const controller = new AbortController();
    steps = 0;
    epochsDone = 0;
    inHeldPass = false;
    let abortedAt = 0;
    let phase: StopPhase | undefined;
    let heldEpoch = 0;
    const stop = () => {
      if (abortedAt > 0) return;
      abortedAt = performance.now();
      phase = phaseNow();
      heldEpoch = epochsDone + 1;
      controller.abort(new Error('stopped by the test'));
    };
    // Aimed runs stop from inside the session, at a drawn point of their phase; the others from a timer.
    const aim = run % 5 === 4 ? PHASES[Math.floor(run / 5) % 3]! : undefined;
    const draw = random();
    const delay = aim ? Number.NaN : draw < 0.1 ? 0 : draw < 0.25 ? Number.POSITIVE_INFINITY : random() * spanMs;
    const drawn = 1 + Math.floor(random() * (aim === 'held-out' ? data.held.length * EPOCHS : stepsPerRun - 1));
    // A mid-epoch stop comes after a step that does not end its epoch.
    const at = aim === 'mid-epoch' && drawn % stepsPerEpoch === 0 ? drawn - 1 : drawn;
    let seen = 0;
    onRead = aim === 'before-first-step' ? () => stop() : aim === 'held-out' ? (held) => held && ++seen === at && stop() : undefined;
    onStep = aim === 'mid-epoch' ? () => ++seen === at && stop() : undefined;
    const timer = Number.isFinite(delay) ? setTimeout(stop, delay) : undefined;
    try {
      const {
        result: report,
        live,
        made,
      } = await liveBuffersAfter(gpu.device, () =>
        within(
          runTraining(
            data,
            {
              epochs: EPOCHS,
              batchSize: BATCH_SIZE,
              threads: 2,
              seed: run,
              lr: 2e-3,
              augment: run % 2 === 0,
              reportEvery: 1,
              gpu,
              signal: controller.signal,
              onStepKeys: () => {
                steps++;
                if (steps % stepsPerEpoch === 0) inHeldPass = true;
                onStep?.();
              },
            },
            (event) => {
              if (event.type !== 'epoch') return;
              epochsDone++;
              inHeldPass = false;
            },
          ),
          30_000,
          `training run ${run}`,
        ),
      );
      const settled = performance.now();
      check(live === 0, `run ${run}: ${live} of the ${made} GPU buffers it made were not destroyed`);
      const s = report.shutdown;
      check(s.batchBuffersHeld === 0 && s.gpuSlotsHeld === 0 && s.workersAlive === 0, `run ${run}: left held ${JSON.stringify(s)}`);
      check(report.failures === 0, `run ${run}: ${report.failures} failed items`);
      // From outside the library, where the OS shows it: the decode pool's threads are gone. The
      // first two runs (one augmented, one not), once their counts have settled, set the baseline:
      // a first session starts threads the runtime or driver keeps (Node: 17 → 19, for good).
      // Every later run must come back to within `slack` of it (waiting for closing threads to
      // exit); with slack 0 one pool's threads left behind fail the run that left them.
      if (run <= 1) {
        const threads = await steadyCount(countThreads);
        counts.push(threads);
        baseline = threads === undefined ? undefined : Math.max(baseline ?? 0, threads);
      } else if (baseline !== undefined) {
        const threads = await settledCount(countThreads, baseline + slack);
        counts.push(threads);
        check(
          threads <= baseline + slack,
          `run ${run}: ${threads} threads or workers after it returned, ${baseline} after the first two runs (slack ${slack})`,
        );
      } else counts.push(undefined);
      if (phase) {
        byPhase[phase]++;
        if (phase === 'before-first-step' || phase === 'mid-epoch')
          check(report.cancelled, `run ${run}: stopped ${phase} (step ${report.steps}), yet it reports not cancelled`);
        if (phase === 'held-out') {
          const record = report.epochs.find((e) => e.epoch === heldEpoch);
          check(
            record === undefined || Number.isNaN(record.valAccuracy),
            `run ${run}: stopped in epoch ${heldEpoch}'s held-out pass, yet it reports an accuracy of ${record?.valAccuracy}`,
          );
        }
      }
      if (aim) check(phase === aim, `run ${run}: a stop aimed at ${aim} landed ${phase ?? 'never'}`);
      if (delay === Number.POSITIVE_INFINITY) {
        check(!report.cancelled, `run ${run} was never stopped but reports cancelled`);
        r.unstopped++;
      } else if (report.cancelled) {
        check(abortedAt > 0, `run ${run} reports cancelled before its stop came`);
        latencies.push(settled - abortedAt);
        r.cancelled++;
      } else r.finishedFirst++;
    } finally {
      clearTimeout(timer);
      onRead = undefined;
      onStep = undefined;
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    ...r,
    byPhase,
    counts,
    osThreads: baseline,
    stopLatencyP95Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.95))] ?? NaN,
    stopLatencyMaxMs: latencies.at(-1) ?? NaN,
  };
}

/** The process's OS thread count from /proc/self/status (Node and Deno on Linux); undefined elsewhere. */
async function osThreads(): Promise<number | undefined> {
  if (runtimeName === 'browser') return undefined;
  try {
    // A computed specifier: the Chromium tier's bundler must not try to resolve node:fs.
    const fs = (await import(/* @vite-ignore */ ['node', 'fs'].join(':'))) as { readFileSync(path: string, encoding: 'utf8'): string };
    const match = /^Threads:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Deno's Web Workers (emscripten's pthreads and the fallback's decode workers among them), counted
 * from the OS: Deno names each worker's thread `worker-N`, and nothing else it runs, so unlike the
 * whole process's count (its tokio blocking pool grows and shrinks by itself: 17 → 21 threads
 * between two sessions once) this count is exact. Undefined where /proc cannot be read.
 */
export async function denoWorkerThreads(): Promise<number | undefined> {
  try {
    const fs = (await import(/* @vite-ignore */ ['node', 'fs'].join(':'))) as {
      readdirSync(path: string): string[];
      readFileSync(path: string, encoding: 'utf8'): string;
    };
    let n = 0;
    for (const task of fs.readdirSync('/proc/self/task')) {
      try {
        if (/^worker-\d+$/.test(fs.readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim())) n++;
      } catch {
        // The thread exited between the listing and the read: it is not alive.
      }
    }
    return n;
  } catch {
    return undefined;
  }
}

/**
 * A count once it has held still for half a second (at most 5 s): right after a session returns,
 * its pool's threads may still be exiting. Measured in Node (lavapipe, 2 cores): 19 to 21 threads
 * at the moment a session returned, 19 after every one of 30 sessions a second later, so a
 * baseline taken at once could include a closing pool's 2 threads and hide a leaked one.
 */
async function steadyCount(count: () => Promise<number | undefined>): Promise<number | undefined> {
  const deadline = performance.now() + 5000;
  let last = await count();
  let since = performance.now();
  while (performance.now() - since < 500 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = await count();
    if (now !== last) {
      last = now;
      since = performance.now();
    }
  }
  return last;
}

/** Threads exit shortly after they are told to: waits up to 3 s for the count to reach `target`. */
async function settledCount(count: () => Promise<number | undefined>, target: number): Promise<number> {
  const deadline = performance.now() + 3000;
  for (;;) {
    const threads = (await count()) ?? 0;
    if (threads <= target || performance.now() > deadline) return threads;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
