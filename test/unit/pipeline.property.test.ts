/** Property tests: random stage graphs must account for every input exactly once. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FILTERED, PipelineBuilder, PipelineFailureBudgetError } from '../../src/pipeline/index.ts';
import { sleep } from '../shared/async.ts';

type Item = { id: number };
/** 'stubborn' ignores the abort signal: stop must still wait for it. */
type Kind = 'sync' | 'async' | 'timer' | 'stubborn' | 'gen' | 'agen';
interface StageSpec {
  kind: Kind;
  concurrency: number;
  ordered: 'input' | 'completion';
  failMod: number; // item fails here when (id * 31 + salt) % failMod === 0 (0: never)
  filterMod: number;
  salt: number;
}

const stageArb: fc.Arbitrary<StageSpec> = fc.record({
  kind: fc.constantFrom<Kind>('sync', 'async', 'timer', 'stubborn', 'gen', 'agen'),
  concurrency: fc.integer({ min: 1, max: 8 }),
  ordered: fc.constantFrom<'input' | 'completion'>('input', 'completion'),
  failMod: fc.constantFrom(0, 0, 3, 7, 11),
  filterMod: fc.constantFrom(0, 0, 4, 9),
  salt: fc.integer({ min: 0, max: 100 }),
});

const hits = (mod: number, id: number, salt: number) => mod > 0 && (id * 31 + salt) % mod === 0;

/** Live task / timer counters shared by every instrumented stage of one run. */
class Live {
  tasks = 0;
  timers = 0;
}

function stageFn(s: StageSpec, live: Live) {
  const decide = (x: Item): Item | typeof FILTERED => {
    if (hits(s.filterMod, x.id, s.salt)) return FILTERED;
    if (hits(s.failMod, x.id, s.salt + 1)) throw new Error(`injected ${x.id}`);
    return x;
  };
  const wait = async (x: Item, signal: AbortSignal) => {
    live.tasks++;
    try {
      if (s.kind === 'timer') {
        live.timers++;
        try {
          await sleep((x.id + s.salt) % 2, signal);
        } finally {
          live.timers--;
        }
      } else if (s.kind === 'stubborn') {
        live.timers++;
        try {
          await sleep(1);
        } finally {
          live.timers--;
        }
      } else for (let i = (x.id * 7 + s.salt) % 4; i > 0; i--) await null;
    } finally {
      live.tasks--;
    }
  };
  switch (s.kind) {
    case 'sync':
      return decide;
    case 'async':
    case 'timer':
    case 'stubborn':
      return async (x: Item, { signal }: { signal: AbortSignal }) => (await wait(x, signal), decide(x));
    case 'gen':
      return function* (x: Item) {
        const v = decide(x);
        if (v !== FILTERED) yield v;
      };
    case 'agen':
      return async function* (x: Item, { signal }: { signal: AbortSignal }) {
        await wait(x, signal);
        const v = decide(x);
        if (v !== FILTERED) yield v;
      };
  }
}

function build(specs: StageSpec[], n: number, live: Live, budgetAt?: { stage: number; max: number }) {
  let b = new PipelineBuilder().addSource(Array.from({ length: n }, (_, id) => ({ id })));
  specs.forEach((s, i) => {
    b = b.pipe(stageFn(s, live) as (x: Item) => Item, {
      name: `s${i}`,
      concurrency: s.concurrency,
      ordered: s.ordered,
      failures: budgetAt?.stage === i ? { maxFailures: budgetAt.max } : undefined,
      queueSize: 1 + ((s.salt * 13) % 6),
    });
  });
  return b.addSink(1 + (n % 4)).build({ describeInput: (x) => String((x as Item).id) });
}

/** What should happen to each id, stage by stage. */
function model(specs: StageSpec[], n: number) {
  const failedAt = specs.map(() => 0);
  const delivered: number[] = [];
  const filtered: number[] = [];
  const failed: number[] = [];
  for (let id = 0; id < n; id++) {
    let fate = 'delivered';
    for (const [k, s] of specs.entries()) {
      if (hits(s.filterMod, id, s.salt)) fate = 'filtered';
      else if (hits(s.failMod, id, s.salt + 1)) {
        fate = 'failed';
        failedAt[k]!++;
      }
      if (fate !== 'delivered') break;
    }
    (fate === 'delivered' ? delivered : fate === 'filtered' ? filtered : failed).push(id);
  }
  return { delivered, filtered, failed, failedAt };
}

const graphArb = fc.record({
  specs: fc.array(stageArb, { minLength: 1, maxLength: 4 }),
  n: fc.integer({ min: 0, max: 150 }),
});

describe('pipeline properties', () => {
  test('exactly once: delivered + filtered + failed == inputs; order kept under input', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, async ({ specs, n }) => {
        const live = new Live();
        const p = build(specs, n, live);
        const out: number[] = [];
        for await (const x of p) out.push((x as Item).id);
        const m = model(specs, n);
        const failedIds = p.failures().map((f) => Number(f.input));
        const filteredCount = p.stats().stages.reduce((a, s) => a + s.filtered, 0);
        expect([...out].sort((a, b) => a - b)).toEqual(m.delivered);
        expect([...failedIds].sort((a, b) => a - b)).toEqual(m.failed);
        expect(filteredCount).toEqual(m.filtered.length);
        expect(out.length + filteredCount + failedIds.length).toBe(n);
        if (specs.every((s) => s.ordered === 'input')) expect(out).toEqual(m.delivered);
        expect([live.tasks, live.timers, p.running]).toEqual([0, 0, false]);
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  test('a stage budget stops the run exactly when it is exceeded', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, fc.nat(), fc.integer({ min: 0, max: 6 }), async ({ specs, n }, at, max) => {
        const stage = at % specs.length;
        const live = new Live();
        const p = build(specs, n, live, { stage, max });
        const m = model(specs, n);
        const run = (async () => {
          for await (const _ of p);
        })();
        if (m.failedAt[stage]! > max) {
          const e = await run.then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(e).toBeInstanceOf(PipelineFailureBudgetError);
          expect((e as PipelineFailureBudgetError).stages.map((s) => s.stage)).toEqual([`s${stage}`]);
        } else {
          await run;
        }
        expect([live.tasks, live.timers, p.running]).toEqual([0, 0, false]);
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  test('stopping at a random point leaves no task, timer or loop running', async () => {
    await fc.assert(
      fc.asyncProperty(
        graphArb,
        fc.nat({ max: 40 }),
        fc.constantFrom('stop', 'break', 'abort', 'dispose'),
        async ({ specs, n }, k, how) => {
          const live = new Live();
          const ac = new AbortController();
          let b = new PipelineBuilder().addSource(Array.from({ length: n }, (_, id) => ({ id })));
          specs.forEach((s, i) => {
            b = b.pipe(stageFn(s, live) as (x: Item) => Item, { name: `s${i}`, concurrency: s.concurrency, ordered: s.ordered });
          });
          const p = b.build({ signal: ac.signal });
          let seen = 0;
          try {
            for await (const _ of p) {
              if (seen++ < k) continue;
              if (how === 'break') break;
              if (how === 'abort') ac.abort(new Error('abort'));
              else if (how === 'stop') await p.stop();
              else await p[Symbol.asyncDispose]();
            }
          } catch (e) {
            expect((e as Error).message).toBe('abort');
          }
          await p.stop();
          expect([live.tasks, live.timers, p.running, p.state]).toEqual([0, 0, false, 'stopped']);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});

test('regression: a budget stop raised synchronously while all slots are busy does not hang', async () => {
  const p = new PipelineBuilder()
    .addSource([0, 1, 2, 3])
    .pipe(
      (x: number, { signal }: { signal: AbortSignal }) => {
        if (x === 1) throw new Error('sync failure');
        return sleep(50, signal).then(() => x);
      },
      { concurrency: 2, failures: { maxFailures: 0 } },
    )
    .build();
  const e = await (async () => {
    for await (const _ of p);
  })().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(PipelineFailureBudgetError);
  expect(p.running).toBe(false);
}, 5_000);
