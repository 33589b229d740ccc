/**
 * Pipeline scenarios as plain async functions that throw on failure, so the same bodies run in
 * vitest (Node), Deno.test and the Chromium tier.
 */
import {
  customTask,
  FILTERED,
  formatStats,
  isEpochEnd,
  Pipeline,
  PipelineBuilder,
  PipelineFailureBudgetError,
  PipelineStallError,
  profilePipeline,
  WorkerPoolExecutor,
  workerTask,
} from '../../src/pipeline/index.ts';
import { TandemError } from '../../src/errors/index.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';
import { collect, sleep } from './async.ts';
import { Probe } from './pipeline-helpers.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const workerModule = new URL('../fixtures/worker-module.mjs', import.meta.url);
const workerInitModule = new URL('../fixtures/worker-init-module.mjs', import.meta.url);

export async function orderedWithConcurrency(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(200))
    .pipe(async (x: number, { signal }) => (await sleep((x * 7) % 5, signal), x * 2), { concurrency: 8 })
    .build();
  assertEqual(
    await collect(p),
    range(200).map((x) => x * 2),
    'input order kept at concurrency 8',
  );
  check(!p.running, 'not running after the end');
}

export async function completionOrderDeliversAll(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(100))
    .pipe(async (x: number, { signal }) => (await sleep(x % 3, signal), x), { concurrency: 8, ordered: 'completion' })
    .build();
  const out = await collect(p);
  assertEqual(
    [...out].sort((a, b) => a - b),
    range(100),
    'every item once',
  );
}

export async function generatorsFilterAndReshape(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(10))
    .pipe((x: number) => (x % 5 === 0 ? FILTERED : x), { name: 'drop5' })
    .pipe(
      function* (x: number) {
        for (let i = 0; i < x % 3; i++) yield x * 10 + i;
      },
      { name: 'fanout', concurrency: 3 },
    )
    .pipe(
      async function* (x: number) {
        yield x;
      },
      { name: 'agen', concurrency: 2, ordered: 'completion' },
    )
    .aggregate(4, { dropLast: true })
    .disaggregate()
    .build();
  const out = await collect(p);
  // fanout: 1→1, 2→2, 4→1, 7→1, 8→2 outputs; 3, 6, 9 yield nothing (filtered).
  const expected = [10, 20, 21, 40, 70, 80, 81];
  assertEqual(out, expected.slice(0, 4), 'dropLast drops the partial batch');
  const st = p.stats().stages;
  const byName = Object.fromEntries(st.map((s) => [s.name, s]));
  assertEqual([byName.drop5?.in, byName.drop5?.out, byName.drop5?.filtered], [10, 8, 2], 'drop5 counters');
  assertEqual([byName.fanout?.in, byName.fanout?.out, byName.fanout?.filtered], [8, 7, 3], 'fanout counters');
  assertEqual(byName.aggregate?.filtered, 3, 'dropLast counted as filtered');
  const json = JSON.stringify(p.describe());
  check(json.includes('"fanout"') && json.includes('aggregate'), 'config describes stages');
}

export async function epochsAndCustomAggregator(): Promise<void> {
  const sums = () => {
    let acc = 0;
    let n = 0;
    return {
      push: (x: number) => ((acc += x), n++, undefined),
      flush: () => {
        const v = n > 0 ? acc : undefined;
        acc = 0;
        n = 0;
        return v;
      },
    };
  };
  const p = new PipelineBuilder()
    .addSource([1, 2, 3], { repeat: 3, epochMarker: true })
    .pipe((x: number) => x * 10, { concurrency: 2 })
    .aggregate(sums)
    .build();
  const out = (await collect(p)).map((x) => (isEpochEnd(x) ? `end${x.epoch}` : x));
  assertEqual(out, [60, 'end0', 60, 'end1', 60, 'end2'], 'one sum per epoch, then its marker');
}

export async function failureBudgetStops(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(1000))
    .pipe(
      (x: number) => {
        if (x % 10 === 3) throw new Error(`bad ${x}`);
        return x;
      },
      { name: 'parse', failures: { maxFailures: 4 } },
    )
    .build();
  const got: number[] = [];
  const err = await rejectsWith(
    (async () => {
      for await (const x of p) got.push(x);
    })(),
    (e) => e instanceof PipelineFailureBudgetError,
    'budget error',
  );
  const e = err as PipelineFailureBudgetError;
  assertEqual(e.stages[0]?.stage, 'parse', 'names the stage');
  check(String((e.stages[0]?.firstError as Error | undefined)?.message) === 'bad 3', 'first cause');
  assertEqual(p.failures().length, 5, 'five failures recorded');
  assertEqual(p.failures()[0]?.input, '3', 'input described');
  check(!p.running, 'stopped');
}

export async function rateBudgetOverall(): Promise<void> {
  const ok = new PipelineBuilder()
    .addSource(range(100))
    .pipe((x: number) => {
      if (x % 20 === 0) throw new Error('x');
      return x;
    })
    .build({ failureBudget: { maxFailureRate: 0.1, minItems: 50 } });
  assertEqual((await collect(ok)).length, 95, '5% failures within a 10% budget');
  const bad = new PipelineBuilder()
    .addSource(range(100))
    .pipe((x: number) => {
      if (x < 10) throw new Error('early');
      return x;
    })
    .build({ failureBudget: { maxFailureRate: 0.1, minItems: 50 } });
  // 10 failures of the first 50 items = 20%: must stop once 50 items are reached.
  await rejectsWith(collect(bad), (e) => e instanceof PipelineFailureBudgetError, 'rate budget');
}

export async function stallTimeoutNamesStage(): Promise<void> {
  const probe = new Probe();
  const p = new PipelineBuilder()
    .addSource(range(10))
    .pipe((x: number, { signal }) => probe.task(x === 2 ? 60_000 : 0, signal, x), { name: 'slowpoke', concurrency: 2 })
    .build({ stallTimeoutMs: 1000 }); // far from a normal item's time on a loaded machine, far below the 60 s stall
  const got: number[] = [];
  const err = await rejectsWith(
    (async () => {
      for await (const x of p) got.push(x);
    })(),
    (e) => e instanceof PipelineStallError,
    'stall error',
  );
  check(String((err as Error).message).includes('slowpoke'), 'names the stage');
  assertEqual(got, [0, 1], 'items before the stall delivered');
  assertEqual([probe.live, probe.timers, p.running], [0, 0, false], 'nothing left running');
}

export async function abortSignalAndDispose(): Promise<void> {
  const probe = new Probe();
  const ac = new AbortController();
  const p = new PipelineBuilder()
    .addSource(range(1_000_000))
    .pipe((x: number, { signal }) => probe.task(1, signal, x), { concurrency: 4 })
    .build({ signal: ac.signal });
  let n = 0;
  const err = await rejectsWith(
    (async () => {
      for await (const _ of p) if (++n === 20) ac.abort(new Error('user abort'));
    })(),
    (e) => (e as Error).message === 'user abort',
    'abort reason surfaces',
  );
  check(err !== undefined, 'rejected');
  assertEqual([probe.live, probe.timers, p.running], [0, 0, false], 'abort leaves nothing running');

  const probe2 = new Probe();
  const q = new PipelineBuilder()
    .addSource(range(1000))
    .pipe((x: number, { signal }) => probe2.task(1, signal, x), { concurrency: 4 })
    .build();
  const stop = q.onStats(() => {}, 5);
  await q.next();
  await q[Symbol.asyncDispose](); // what `await using` calls
  assertEqual([probe2.live, q.running, q.state], [0, false, 'stopped'], 'dispose stops');
  stop();
  assertEqual((await q.next()).done, true, 'done after stop');
}

export async function breakStopsPipeline(): Promise<void> {
  const probe = new Probe();
  const p = new PipelineBuilder()
    .addSource(range(1000))
    .pipe((x: number, { signal }) => probe.task(2, signal, x), { concurrency: 8, ordered: 'completion' })
    .build();
  for await (const x of p) if (x >= 0) break;
  assertEqual([probe.live, p.running], [0, false], 'break stops');
}

export async function backpressureKeepsMemoryFlat(): Promise<void> {
  const p = new PipelineBuilder()
    .addSource(range(100_000))
    .pipe((x: number) => x, { queueSize: 4 })
    .pipe((x: number) => x, { queueSize: 4 })
    .addSink(2)
    .build();
  for (let i = 0; i < 10; i++) await p.next();
  await sleep(20);
  const pulled = p.stats().stages[0]!.out;
  await p.stop();
  // 10 consumed + queues (4 + 4 + 2) + one item held by each stage (concurrency 1).
  check(pulled <= 10 + 4 + 4 + 2 + 2, `source ran ahead by ${pulled}`);
}

export async function mergeIsSeededAndComplete(): Promise<void> {
  const a = new PipelineBuilder().addSource(['a1', 'a2', 'a3']);
  const b = new PipelineBuilder().addSource(['b1', 'b2']).pipe(async (x: string) => x.toUpperCase());
  const rr = await collect(new PipelineBuilder().addSource(Pipeline.merge([a, b])).build());
  assertEqual(rr, ['a1', 'B1', 'a2', 'B2', 'a3'], 'round-robin');
  const weighted = async (seed: number) => {
    const src = Pipeline.merge([a, b], { mode: 'weighted', weights: [3, 1], seed });
    return collect(new PipelineBuilder<string>().addSource(src).build());
  };
  const w1 = await weighted(7);
  assertEqual(w1, await weighted(7), 'same seed, same order');
  assertEqual([...w1].sort(), ['B1', 'B2', 'a1', 'a2', 'a3'], 'weighted merge delivers all');
}

export async function workerExecutor(): Promise<void> {
  const bytes = Array.from({ length: 6 }, (_, i) => new Uint8Array(1000).fill(i));
  const p = new PipelineBuilder()
    .addSource(bytes)
    .pipe<{ sum: number; out: Float32Array; inputLength: number }>(workerTask(workerModule, 'sumBytes'), { concurrency: 3 })
    .build();
  const out = await collect(p);
  assertEqual(
    out.map((r) => r.sum),
    [0, 1000, 2000, 3000, 4000, 5000],
    'results in order',
  );
  check(out[5]!.out instanceof Float32Array && out[5]!.out[0] === 5000, 'typed array came back');
  assertEqual(bytes[0]!.byteLength, 0, 'input buffer was transferred, not copied');

  const pool = new WorkerPoolExecutor(workerTask(workerModule, 'double'), 2);
  const q = new PipelineBuilder()
    .addSource([1, 13, 3, 7, 4, 9])
    .pipe<number>(
      customTask('double', () => pool),
      { concurrency: 2 },
    )
    .build();
  assertEqual(await collect(q), [2, 6, 8], 'failed item not delivered');
  assertEqual(
    q.failures().map((f) => [f.stage, f.input, (f.error as Error).message]),
    [
      ['double', '13', 'unlucky 13'],
      ['double', '7', 'a typed failure in the worker'],
      ['double', '9', 'a class of its own'],
    ],
    'reported',
  );
  const [plain, typed, custom] = q.failures().map((f) => f.error);
  check(plain instanceof RangeError && !(plain instanceof TandemError), 'a built-in error keeps its class');
  check(
    typed instanceof TandemError && typed.code === 'corrupt' && typed.name === 'DecodeError',
    `a typed error keeps its name and code across the worker boundary: ${String(typed)}`,
  );
  check(
    custom instanceof TandemError && custom.code === 'task-failed' && custom.name === 'MyError',
    `an error of another class keeps its name and gets a code: ${String(custom)}`,
  );
  assertEqual(pool.workers, 0, 'workers terminated at the end');

  const bad = new PipelineBuilder().addSource([1, 2]).pipe(workerTask(workerModule, 'nope')).build();
  await collect(bad);
  assertEqual(bad.failures().length, 2, 'missing export fails each item, no hang');
}

export async function workerInitData(): Promise<void> {
  const table = Uint8Array.from({ length: 12 }, (_, i) => 100 + i);
  const p = new PipelineBuilder()
    .addSource(range(12))
    .pipe<{ value: number; initCalls: number }>(workerTask(workerInitModule, 'scaled', { workers: 2, init: { factor: 3, table } }), {
      concurrency: 2,
    })
    .build();
  const out = await collect(p);
  assertEqual(
    out.map((r) => r.value),
    range(12).map((x) => x * 3 + 100 + x),
    'every task saw the setup value',
  );
  assertEqual([...new Set(out.map((r) => r.initCalls))], [1], 'init ran once per worker, before its first task');
  assertEqual(table.byteLength, 12, 'the setup value is cloned, not transferred');

  const refused = new WorkerPoolExecutor(workerTask(workerInitModule, 'scaled', { init: { factor: 0, table } }), 2);
  const signal = new AbortController().signal;
  await rejectsWith(
    refused.run(1, signal),
    (e) => e instanceof TandemError && e.code === 'bad-setup' && e.message === 'factor 0 refused',
    'an init that throws fails the tasks with its error',
  );
  await rejectsWith(refused.run(2, signal), (e) => e instanceof TandemError && e.code === 'bad-setup', 'and the ones after it');
  await refused.close();
  assertEqual(refused.workers, 0, 'workers terminated');
}

export async function workerStopMidRun(): Promise<void> {
  const pool = new WorkerPoolExecutor(workerTask(workerModule, 'spin'), 2);
  const p = new PipelineBuilder()
    .addSource(range(100).map(() => 30))
    .pipe(
      customTask('spin', () => pool),
      { concurrency: 2 },
    )
    .build();
  await p.next();
  await p.stop();
  assertEqual([pool.workers, p.running], [0, false], 'stop terminates workers');
}

export async function statsAndProfile(): Promise<void> {
  const b = new PipelineBuilder()
    .addSource(range(40))
    .pipe(async (x: number, { signal }) => (await sleep(4, signal), x), { name: 'io', concurrency: 1 })
    .pipe((x: number) => x + 1, { name: 'cheap' });
  const p = b.build();
  await collect(p);
  const s = p.stats();
  const io = s.stages.find((x) => x.name === 'io')!;
  check(io.tasks === 40 && io.taskMs.p50 >= 3, `io task time measured (${io.taskMs.p50})`);
  check(formatStats(s).includes('bottleneck: io'), formatStats(s));
  const prof = await profilePipeline(b, range(32), { concurrencies: [1, 4] });
  assertEqual(prof.find((r) => r.stage === 'io')?.recommended, 4, 'IO-bound stage wants concurrency');
}

/** A generator that yields and then throws: its outputs are delivered and its input fails once. */
export async function generatorOutputsSurviveItsFailure(): Promise<void> {
  for (const ordered of ['input', 'completion'] as const) {
    const p = new PipelineBuilder()
      .addSource(range(6))
      .pipe(
        async function* (x: number) {
          await sleep(x % 2);
          yield x * 10;
          if (x % 3 === 0) throw new Error(`late failure ${x}`);
        },
        { name: 'gen', concurrency: 3, ordered },
      )
      .build();
    const out = await collect(p);
    const sorted = ordered === 'input' ? out : [...out].sort((a, b) => a - b);
    assertEqual(sorted, [0, 10, 20, 30, 40, 50], `outputs yielded before a throw are delivered (${ordered})`);
    assertEqual(
      p.failures().map((f) => f.input),
      ['0', '3'],
      `the inputs are reported once as failed (${ordered})`,
    );
    const gen = p.stats().stages.find((st) => st.name === 'gen')!;
    assertEqual([gen.in, gen.filtered, gen.failed, gen.out], [6, 0, 2, 6], `accounting (${ordered})`);
  }
}

/** A long run over bad data keeps a bounded number of records; every failure is still counted and streamed. */
export async function failureRecordsAreBounded(): Promise<void> {
  const streamed: string[] = [];
  const p = new PipelineBuilder()
    .addSource(range(300))
    .pipe(
      (x: number) => {
        if (x % 3 === 0) throw new Error(`bad ${x}`);
        return x;
      },
      { name: 'parse' },
    )
    .build({ keepFailures: 25, onFailure: (r) => streamed.push(r.input) });
  let delivered = 0;
  for await (const _ of p) delivered++;
  assertEqual(delivered, 200, 'good items delivered');
  assertEqual(p.failureCount(), 100, 'every failure counted');
  assertEqual(p.failures().length, 25, 'only the first 25 records kept');
  assertEqual(p.failures()[24]?.input, '72', 'the kept ones are the first');
  assertEqual(streamed.length, 100, 'every failure streamed to onFailure');
  assertEqual(streamed[99], '297', 'in order');
}

/**
 * A pipeline of an in-memory source and promise-only stages still lets timers run: a stop()
 * scheduled 20 ms in lands long before the last of 5 million items.
 */
export async function timersRunDuringPromiseOnlyPipelines(): Promise<void> {
  const total = 5_000_000;
  const p = new PipelineBuilder<number>()
    .addSource(
      (function* () {
        for (let i = 0; i < total; i++) yield i;
      })(),
    )
    .pipe((x: number) => x + 1)
    .pipe(async (x: number) => x * 2, { concurrency: 4 })
    .addSink(16)
    .build();
  const t0 = performance.now();
  let firedAt = -1;
  const timer = setTimeout(() => {
    firedAt = performance.now() - t0;
    void p.stop();
  }, 20);
  let delivered = 0;
  try {
    for await (const _ of p) delivered++;
  } finally {
    clearTimeout(timer);
  }
  check(firedAt >= 0 && firedAt < 2000, `the 20 ms timer fired at ${firedAt.toFixed(0)} ms`);
  check(delivered < total, `the stop ended the run early (${delivered} of ${total} delivered)`);
}

export const scenarios: Record<string, () => Promise<void>> = {
  timersRunDuringPromiseOnlyPipelines,
  failureRecordsAreBounded,
  generatorOutputsSurviveItsFailure,
  orderedWithConcurrency,
  completionOrderDeliversAll,
  generatorsFilterAndReshape,
  epochsAndCustomAggregator,
  failureBudgetStops,
  rateBudgetOverall,
  stallTimeoutNamesStage,
  abortSignalAndDispose,
  breakStopsPipeline,
  backpressureKeepsMemoryFlat,
  mergeIsSeededAndComplete,
  workerExecutor,
  workerInitData,
  workerStopMidRun,
  statsAndProfile,
};
