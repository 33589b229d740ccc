/**
 * Planted bottlenecks: one slow element at each position of a pipeline in turn (source, middle
 * stage, the stage holding a pooled resource, upload, consumer), and the name `bottleneck()`
 * gives it. Delays are tens of milliseconds per item over few items, so a loaded 2-core machine
 * still separates them; only names are asserted, never percentages. Run by test/unit, test/deno
 * and test/browser bottleneck.test.ts.
 */
import {
  bottleneck,
  formatStats,
  type Pipeline,
  PipelineBuilder,
  type PipelineStats,
  type StageContext,
} from '../../src/pipeline/index.ts';
import { check } from './assert.ts';
import { sleep } from './async.ts';

const ITEMS = 10;
const SLOW_MS = 30;
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** A fixed set of tokens handed out in request order; `release` returns one. Like ImageBatcher's
 * batch buffers or BatchUploader's GPU slots. */
class TokenPool {
  #free: number[];
  #waiters: ((token: number) => void)[] = [];

  constructor(size: number) {
    this.#free = range(size);
  }

  acquire(): Promise<number> {
    const t = this.#free.pop();
    if (t !== undefined) return Promise.resolve(t);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(token: number): void {
    const w = this.#waiters.shift();
    if (w !== undefined) w(token);
    else this.#free.push(token);
  }
}

function expectBottleneck(stats: PipelineStats, name: string): void {
  const b = bottleneck(stats);
  check(b?.name === name, `bottleneck should be '${name}', got '${b?.name}': ${formatStats(stats)}`);
  check(formatStats(stats).includes(`bottleneck: ${name} (`), `formatStats names it: ${formatStats(stats)}`);
}

async function drain<T>(p: Pipeline<T>, body?: (x: T) => Promise<void> | void): Promise<PipelineStats> {
  for await (const x of p) await body?.(x);
  return p.stats();
}

/** The source is an async iterable that takes SLOW_MS per item; everything after it is quick. */
export async function slowSource(): Promise<void> {
  async function* slowItems(): AsyncGenerator<number> {
    for (let i = 0; i < ITEMS; i++) {
      await sleep(SLOW_MS);
      yield i;
    }
  }
  const p = new PipelineBuilder()
    .addSource(slowItems)
    .pipe(async (x: number) => x + 1, { name: 'parse', concurrency: 2 })
    .pipe((x: number) => x * 2, { name: 'scale' })
    .build();
  expectBottleneck(await drain(p), 'source');
}

/** A map in the middle takes SLOW_MS per item, with quick stages before and after it. */
export async function slowMiddleStage(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(ITEMS))
    .pipe((x: number) => x + 1, { name: 'parse' })
    .pipe(async (x: number, { signal }) => (await sleep(SLOW_MS, signal), x), { name: 'slow' })
    .pipe((x: number) => x * 2, { name: 'scale', concurrency: 2 })
    .build();
  expectBottleneck(await drain(p), 'slow');
}

/**
 * A decode-like stage takes a token from a pool of 2 for each item (as ImageBatcher's decode
 * stage waits for a batch buffer); the stage after it holds each token SLOW_MS before returning
 * it. The decode stage spends its time waiting for tokens, which must not make it the bottleneck:
 * the stage holding them is.
 */
export async function slowResourcePool(): Promise<void> {
  const tokens = new TokenPool(2);
  const p = new PipelineBuilder()
    .addSource(range(ITEMS))
    .pipe(async (x: number, ctx: StageContext) => ({ x, token: await ctx.waitFor(tokens.acquire()) }), { name: 'decode', concurrency: 4 })
    .pipe(
      async (t: { x: number; token: number }, { signal }) => {
        await sleep(SLOW_MS, signal);
        tokens.release(t.token);
        return t.x;
      },
      { name: 'hold' },
    )
    .build();
  const stats = await drain(p);
  expectBottleneck(stats, 'hold');
  const decode = stats.stages.find((s) => s.name === 'decode')!;
  check(decode.timeMs.resource > 0, `decode's token waits are counted as resource waits: ${formatStats(stats)}`);
}

/**
 * An upload-like stage: waits for one of 2 GPU-like slots (released by the consumer as soon as it
 * gets the batch), then copies for SLOW_MS (a generator, as uploads yield their handle).
 */
export async function slowUpload(): Promise<void> {
  const slots = new TokenPool(2);
  const p = new PipelineBuilder()
    .addSource(range(ITEMS))
    .pipe((x: number) => ({ x }), { name: 'decode', concurrency: 2 })
    .aggregate(1, { name: 'batch' })
    .pipe(
      async function* (batch: { x: number }[], ctx: StageContext) {
        const slot = await ctx.waitFor(slots.acquire());
        await sleep(SLOW_MS, ctx.signal);
        yield { slot, batch };
      },
      { name: 'upload' },
    )
    .addSink(2)
    .build();
  expectBottleneck(await drain(p, (b) => slots.release(b.slot)), 'upload');
}

function uploadPipeline(slots: TokenPool, consumer: string): Pipeline<{ slot: number }> {
  return new PipelineBuilder()
    .addSource(range(ITEMS))
    .pipe((x: number) => ({ x }), { name: 'decode', concurrency: 2 })
    .pipe(async (item: { x: number }, ctx: StageContext) => ({ slot: await ctx.waitFor(slots.acquire()), item }), { name: 'upload' })
    .addSink(2)
    .build({ consumer });
}

/**
 * The consumer's `for await` body takes SLOW_MS and holds the GPU-like slot meanwhile, so the
 * upload stage waits for slots and everything before it is blocked on output: the consumer is
 * named, by the name given to `build({ consumer })`.
 */
export async function slowConsumer(): Promise<void> {
  const slots = new TokenPool(2);
  const p = uploadPipeline(slots, 'training loop');
  const stats = await drain(p, async (b) => {
    await sleep(SLOW_MS);
    slots.release(b.slot);
  });
  expectBottleneck(stats, 'training loop');
}

/** The same, but the consumer says it waits for the GPU (a fence): the GPU is named. */
export async function gpuBoundConsumer(): Promise<void> {
  const slots = new TokenPool(2);
  const p = uploadPipeline(slots, 'training loop');
  const stats = await drain(p, async (b) => {
    slots.release(b.slot);
    await p.consumer.waitFor(sleep(SLOW_MS), 'GPU');
  });
  expectBottleneck(stats, 'GPU');
}

/** Bookkeeping: each stage's four parts add up to elapsed × concurrency, and to 1 as shares. */
export async function splitAddsUp(): Promise<void> {
  const tokens = new TokenPool(1);
  const p = new PipelineBuilder()
    .addSource(range(ITEMS))
    .pipe(
      async (x: number, ctx: StageContext) => {
        ctx.beginWait();
        const t = await tokens.acquire();
        ctx.endWait();
        await sleep(2, ctx.signal);
        tokens.release(t);
        return x;
      },
      { name: 'work', concurrency: 3 },
    )
    .aggregate(2, { name: 'pairs' })
    .build();
  const stats = await drain(p, () => sleep(3));
  for (const s of [...stats.stages, stats.consumer]) {
    const t = s.time,
      ms = s.timeMs;
    const conc = 'concurrency' in s ? s.concurrency : 1;
    const shares = t.working + t.starved + t.blocked + t.resource;
    const total = ms.working + ms.starved + ms.blocked + ms.resource;
    const name = 'kind' in s ? s.name : 'consumer';
    check(Math.abs(shares - 1) < 1e-9, `${name}: shares add up to 1 (${shares})`);
    check(Math.abs(total - stats.elapsedMs * conc) < 1e-6 * Math.max(1, total), `${name}: parts add up to elapsed × concurrency`);
    for (const v of Object.values(t)) check(v >= 0 && v <= 1, `${name}: shares within [0, 1]`);
  }
  const work = stats.stages.find((s) => s.name === 'work')!;
  check(work.timeMs.resource > 0 && work.utilization === work.time.working, `resource waits recorded; utilization is the working share`);
}

export const scenarios: Record<string, () => Promise<void>> = {
  slowSource,
  slowMiddleStage,
  slowResourcePool,
  slowUpload,
  slowConsumer,
  gpuBoundConsumer,
  splitAddsUp,
};
