// The loader contract (src/loader/shell.ts), one scenario list run against every loader —
// loader(), videoLoader(), textLoader() — in Node, Deno and Chromium. Each subject makes a small
// loader over in-memory items (no files: the same in every runtime). What one loader does, all do:
// busy and closed, abort by signal (and the listener gone after close), idempotent close, batches
// back (held() 0), the released-batch error, typed errors for bad sources, live stats and failure
// counts, and `epochs`, setEpoch, `break` and state() where the medium has them.
import type { DecodePool } from '../../src/decode/index.ts';
import { OptionError } from '../../src/errors/index.ts';
import { GpuError } from '../../src/gpu/index.ts';
import { LoaderError, loader } from '../../src/loader/index.ts';
import { textLoader } from '../../src/text/index.ts';
import { videoLoader } from '../../src/video/index.ts';
import { check, rejectsWith } from './assert.ts';
import { checkBatchEnds } from './batch-ends.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { trainByteLevelBpe } from './bpe-trainer.ts';
import { charEncoder } from './text-loader-scenarios.ts';
import { sampleImages } from './transfer-scenarios.ts';

interface Batch {
  readonly keys?: readonly string[];
  release(): void;
}

/** What every loader has, as the contract sees it. */
interface AnyLoader extends AsyncIterable<Batch>, AsyncDisposable {
  close(): Promise<void>;
  held(): number | { batchBuffers: number; gpuSlots: number };
  failures(): readonly unknown[];
  failureCount(): number;
  onStats(callback: (stats: unknown) => void, intervalMs?: number): () => void;
  summary(): string;
  setEpoch?(epoch: number): void;
  state?(): unknown;
}

interface LoaderOptionsLike {
  signal?: AbortSignal;
  epochs?: number;
  shuffle?: boolean;
  rank?: number;
  worldSize?: number;
  resumeFrom?: never;
  consumer?: string;
}

export interface ContractSubject {
  name: 'loader' | 'videoLoader' | 'textLoader';
  make(options?: LoaderOptionsLike & { resumeFrom?: unknown }): AnyLoader;
  /** A loader over a source it cannot take: making or iterating it fails with an OptionError. */
  badSource(): AnyLoader;
  /** Rows (images, clips, documents) one epoch delivers, counted by keys. */
  keysOf(batch: Batch): readonly string[];
  /** Whether a `for await` after `break` continues at the consumer's batch (and state() exists). */
  continues: boolean;
  /** Reads what release() gives back (the batch's data). */
  read(batch: Batch): unknown;
}

const heldNow = (data: AnyLoader) => {
  const h = data.held();
  return typeof h === 'number' ? h : h.batchBuffers + h.gpuSlots;
};

/** The subjects over a pool the runtime made, and its fixture loader for the videos. */
export async function contractSubjects(pool: DecodePool, load: FixtureLoader): Promise<ContractSubject[]> {
  const images = sampleImages(10, 48).map((x, i) => ({ bytes: x.bytes, label: i % 3, key: `img${i}` }));
  // One image that does not decode: a failed slot inside a batch, which a resumed pass must not try again.
  images[4] = { bytes: new TextEncoder().encode('not an image'), label: 1, key: 'img4-broken' };
  const videos = await Promise.all(
    ['testsrc.h264.mp4', 'rgb.h264.mp4', 'testsrc.vp9.webm'].map(async (name, label) => ({ bytes: await load(name), label, key: name })),
  );
  const texts = Array.from({ length: 24 }, (_, i) => `document ${i}: ${'lorem ipsum '.repeat(1 + (i % 5))}`);
  const keysOrIndex = (batch: Batch) => batch.keys ?? [];
  return [
    {
      name: 'loader',
      make: (o = {}) => loader(images, { batchSize: 3, size: 16, pool, ...o } as never) as unknown as AnyLoader,
      badSource: () => loader(42 as never, { pool }) as unknown as AnyLoader,
      keysOf: keysOrIndex,
      continues: true,
      read: (b) => (b as unknown as { data: unknown }).data,
    },
    {
      name: 'videoLoader',
      make: (o = {}) =>
        videoLoader(videos, {
          clip: { frames: 2, stride: 2 },
          sampler: 'uniform',
          clipsPerVideo: 2,
          size: 16,
          batchSize: 2,
          pool,
          ...o,
        } as never) as unknown as AnyLoader,
      // A shard source (it is streamed, not listed): the video loader shuffles and shares out lists.
      badSource: () => videoLoader({ shards: ['clips.tar'] } as never, { clip: { frames: 2 }, pool }) as unknown as AnyLoader,
      keysOf: keysOrIndex,
      continues: true,
      read: (b) => (b as unknown as { data: unknown }).data,
    },
    {
      name: 'textLoader',
      make: (o = {}) =>
        textLoader({ texts }, { tokenizer: charEncoder, seqLen: 32, batchSize: 2, pack: 'pad', ...o } as never) as unknown as AnyLoader,
      badSource: () => textLoader(42 as never, { tokenizer: charEncoder }) as unknown as AnyLoader,
      // A padded row is one document: its key names it.
      keysOf: (batch) => (batch as unknown as { keys: readonly string[] }).keys,
      continues: true,
      read: (b) => (b as unknown as { inputs: unknown }).inputs,
    },
  ];
}

async function drain(data: AnyLoader, keysOf: (b: Batch) => readonly string[], limit = Infinity): Promise<string[]> {
  const keys: string[] = [];
  let n = 0;
  for await (const batch of data) {
    keys.push(...keysOf(batch));
    batch.release();
    if (++n >= limit) break;
  }
  return keys;
}

/** Each batch's keys, joined: the batches as they came. */
async function batchesOf(data: AnyLoader, keysOf: (b: Batch) => readonly string[], limit = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of data) {
    out.push(keysOf(batch).join(','));
    batch.release();
    if (out.length >= limit) break;
  }
  return out;
}

export const contractScenarios: Record<string, (s: ContractSubject) => Promise<void>> = {
  async 'one for await at a time (busy), none after close (closed), close idempotent'(s) {
    const data = s.make();
    const first = data[Symbol.asyncIterator]();
    const step = await first.next();
    check(!step.done, `${s.name}: a first batch`);
    (step.value as Batch).release();
    await rejectsWith(
      (async () => {
        for await (const b of data) b.release();
      })(),
      (e) => e instanceof LoaderError && e.code === 'busy',
      `${s.name}: a second for await is 'busy'`,
    );
    await first.return?.();
    await data.close();
    await data.close();
    await rejectsWith(
      (async () => {
        for await (const b of data) b.release();
      })(),
      (e) => e instanceof LoaderError && e.code === 'closed',
      `${s.name}: for await after close is 'closed'`,
    );
  },

  async 'the signal closes the loader; close() removes its listener'(s) {
    const aborting = new AbortController();
    const data = s.make({ signal: aborting.signal });
    let n = 0;
    for await (const batch of data) {
      batch.release();
      if (++n === 1) aborting.abort();
    }
    check(n <= 2, `${s.name}: the pass ends after the abort (${n} batches)`);
    await rejectsWith(
      (async () => {
        for await (const b of data) b.release();
      })(),
      (e) => e instanceof LoaderError && e.code === 'closed',
      `${s.name}: closed by its signal`,
    );
    // A long-lived signal shared by many loaders must not keep one listener per closed loader.
    const shared = new AbortController();
    let added = 0;
    let removed = 0;
    const add = shared.signal.addEventListener.bind(shared.signal);
    const remove = shared.signal.removeEventListener.bind(shared.signal);
    shared.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      add(...args);
    }) as AbortSignal['addEventListener'];
    shared.signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => {
      removed++;
      remove(...args);
    }) as AbortSignal['removeEventListener'];
    const other = s.make({ signal: shared.signal });
    await drain(other, s.keysOf, 1);
    await other.close();
    check(added >= 1 && removed === added, `${s.name}: listeners added ${added}, removed ${removed}`);
  },

  async 'every batch back: held() 0; a released batch used again is a BatchReleasedError'(s) {
    await using data = s.make();
    let n = 0;
    for await (const batch of data) checkBatchEnds(`${s.name} batch ${n++}`, batch, s.read);
    check(n > 0, `${s.name}: batches`);
    check(heldNow(data) === 0, `${s.name}: ${JSON.stringify(data.held())} held after every release`);
  },

  async 'a source it cannot take is an OptionError'(s) {
    let threw: unknown;
    try {
      const data = s.badSource();
      try {
        for await (const b of data) b.release();
      } finally {
        await data.close();
      }
    } catch (error) {
      threw = error;
    }
    check(threw instanceof OptionError, `${s.name}: bad source gave ${String(threw)}`);
  },

  async 'statistics: live onStats, summary, failure count, the consumer named'(s) {
    await using data = s.make({ consumer: 'training loop' });
    let seen = 0;
    const stop = data.onStats(() => seen++, 1);
    const keys = await drain(data, s.keysOf);
    stop();
    check(keys.length > 0, `${s.name}: rows`);
    check(data.summary().includes('training loop'), `${s.name}: the summary names the consumer:\n${data.summary()}`);
    check(
      data.failureCount() === data.failures().length,
      `${s.name}: failures counted (${data.failureCount()}, ${data.failures().length})`,
    );
    check(seen >= 0, 'onStats returned a stopper');
  },

  async 'close() while the first batch is being made: the pending next() ends, nothing held, nothing failed'(s) {
    const data = s.make();
    const first = data[Symbol.asyncIterator]().next();
    await data.close();
    const r = await first;
    check(r.done === true, `${s.name}: no batch after close() (got ${r.done ? 'the end' : 'a batch'})`);
    check(heldNow(data) === 0, `${s.name}: ${heldNow(data)} held after close()`);
    check(data.failures().length === 0, `${s.name}: ${data.failures().length} failures from a close()`);
  },

  async 'shuffled and shared out by rank: the ranks together deliver the epoch, every row once'(s) {
    await using whole = s.make({ shuffle: true });
    const all = await drain(whole, s.keysOf);
    const shares: string[][] = [];
    for (const rank of [0, 1, 2]) {
      await using share = s.make({ shuffle: true, rank, worldSize: 3 });
      shares.push(await drain(share, s.keysOf));
    }
    check(
      shares.every((rows) => rows.length > 0),
      `${s.name}: every rank gets rows (${shares.map((r) => r.length).join(', ')})`,
    );
    const union = shares.flat().sort();
    check(union.join() === [...all].sort().join(), `${s.name}: 3 ranks deliver ${union.join()}\n  one rank ${[...all].sort().join()}`);
  },

  async 'epochs run in one for await; setEpoch(n) starts epoch n'(s) {
    await using twice = s.make({ epochs: 2, shuffle: true });
    const both = await drain(twice, s.keysOf);
    await using once = s.make({ shuffle: true });
    const first = await drain(once, s.keysOf);
    check(both.length === 2 * first.length, `${s.name}: 2 epochs give ${both.length} rows, one gives ${first.length}`);
    check(first.join() === both.slice(0, first.length).join(), `${s.name}: epoch 0 is the same in both`);
    await using later = s.make({ shuffle: true });
    const setEpoch = later.setEpoch?.bind(later);
    check(setEpoch !== undefined, `${s.name}: has setEpoch`);
    setEpoch(1);
    const second = await drain(later, s.keysOf);
    // The same items; their order within a batch may differ, as a failed slot is filled from its batch's end.
    check([...second].sort().join() === both.slice(first.length).sort().join(), `${s.name}: setEpoch(1) gives epoch 1`);
    let threw: unknown;
    try {
      setEpoch(-1);
    } catch (error) {
      threw = error;
    }
    check(threw instanceof OptionError, `${s.name}: setEpoch(-1) is an OptionError (got ${String(threw)})`);
  },

  async 'after break, the next for await continues at the consumer; state() resumes a new loader there'(s) {
    if (!s.continues) return;
    await using whole = s.make({ shuffle: true, epochs: 2 });
    const all = await batchesOf(whole, s.keysOf);
    for (const cut of [1, 2, 3, 5]) {
      await using parted = s.make({ shuffle: true, epochs: 2 });
      const head = await batchesOf(parted, s.keysOf, cut);
      const state = JSON.parse(JSON.stringify(parted.state?.()));
      const tail = await batchesOf(parted, s.keysOf);
      check(
        [...head, ...tail].join(' | ') === all.join(' | '),
        `${s.name}: break after ${cut}, then for await: the same batches\n  ${[...head, ...tail].join(' | ')}\n  ${all.join(' | ')}`,
      );
      await using resumed = s.make({ shuffle: true, epochs: 2, resumeFrom: state });
      const again = await batchesOf(resumed, s.keysOf);
      check(again.join(' | ') === tail.join(' | '), `${s.name}: resumed after ${cut} from state(): the same batches`);
    }
  },

  async 'a pass its signal stops is not finished: state() resumes a new loader at what was not delivered; a signal aborted before, nothing runs'(
    s,
  ) {
    if (!s.continues) return;
    await using whole = s.make({ shuffle: true, epochs: 2 });
    const all = await batchesOf(whole, s.keysOf);
    const aborting = new AbortController();
    const stopped = s.make({ shuffle: true, epochs: 2, signal: aborting.signal });
    const head: string[] = [];
    for await (const batch of stopped) {
      head.push(s.keysOf(batch).join(','));
      batch.release();
      if (head.length === 2) aborting.abort();
    }
    const state = JSON.parse(JSON.stringify(stopped.state?.()));
    await using resumed = s.make({ shuffle: true, epochs: 2, resumeFrom: state });
    const tail = await batchesOf(resumed, s.keysOf);
    check(
      [...head, ...tail].join(' | ') === all.join(' | '),
      `${s.name}: stopped by its signal after ${head.length} batches, then resumed: the same batches\n  ${[...head, ...tail].join(' | ')}\n  ${all.join(' | ')}`,
    );
    const before = new AbortController();
    before.abort();
    const never = s.make({ signal: before.signal });
    await rejectsWith(
      (async () => {
        for await (const b of never) b.release();
      })(),
      (e) => e instanceof LoaderError && e.code === 'closed',
      `${s.name}: an aborted signal, no pass`,
    );
  },
};

/** A device whose limits no loader accepts: opening its GPU target fails after the rest opened. */
const tooSmallDevice = { createBuffer: () => undefined, queue: {}, limits: new Proxy({}, { get: () => 1 }) };

/**
 * Opening fails part-way (the GPU target, after the decode threads or tokenizer workers started):
 * the error reaches the caller and what had started is closed. `countThreads` counts the runtime's
 * threads from the OS (Node and Deno; a browser cannot count its workers).
 */
export async function openingFailureClosesWhatOpened(load: FixtureLoader, countThreads: () => Promise<number>): Promise<void> {
  const videos = [{ bytes: await load('testsrc.h264.mp4'), label: 0, key: 'v' }];
  const images = sampleImages(2, 32);
  const texts = ['one document', 'and another one'];
  const makers: Array<[string, () => AnyLoader]> = [
    ['loader', () => loader(images, { size: 16, threads: 2, to: tooSmallDevice as never }) as unknown as AnyLoader],
    [
      'videoLoader',
      () => videoLoader(videos, { clip: { frames: 2 }, size: 16, threads: 2, to: tooSmallDevice as never }) as unknown as AnyLoader,
    ],
    [
      'textLoader',
      () =>
        textLoader(
          { texts },
          { tokenizer: { json: trainByteLevelBpe(texts, 20) }, tokenizerWorkers: 2, to: tooSmallDevice as never },
        ) as unknown as AnyLoader,
    ],
  ];
  for (const [name, make] of makers) {
    const before = await steadyThreads(countThreads);
    const data = make();
    await rejectsWith(
      (async () => {
        for await (const b of data) b.release();
      })(),
      (e) => e instanceof GpuError,
      `${name}: a device below the limits fails the first for await`,
    );
    const after = await steadyThreads(countThreads, before);
    check(after <= before, `${name}: ${after} threads after the failed open, ${before} before: what opened was not closed`);
    await data.close();
  }
}

/** The thread count once it holds still (threads of a closing pool take a moment to exit), or `target` once reached. */
async function steadyThreads(count: () => Promise<number>, target = -1): Promise<number> {
  let last = await count();
  for (let i = 0; i < 40 && last !== target; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await count();
    if (now === last && target < 0 && i >= 3) break;
    last = now;
  }
  return last;
}
