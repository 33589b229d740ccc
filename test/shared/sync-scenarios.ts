// SlotPool's rules (src/sync/slot-pool.ts), which the decode pool's job records, the batcher's
// buffers and the upload ring all rely on.
import { SlotPool } from '../../src/sync/index.ts';
import { check, rejectsWith } from './assert.ts';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Free slots are lent at once; then callers wait in line and are served first come, first served. */
export async function slotsGoToTheLineInOrder(): Promise<void> {
  const pool = new SlotPool(['a', 'b']);
  const first = await pool.acquire();
  const second = await pool.acquire();
  check(new Set([first, second]).size === 2 && pool.available === 0, 'two free slots lent at once');
  const served: string[] = [];
  const third = pool.acquire().then((s) => served.push(`third:${s}`));
  const fourth = pool.acquire().then((s) => served.push(`fourth:${s}`));
  await tick();
  check(pool.waiting === 2 && served.length === 0, 'the next two wait');
  pool.release(second);
  await third;
  pool.release(first);
  await fourth;
  check(served.join() === `third:${second},fourth:${first}`, `served in the order they came: ${served.join()}`);
  check(Number(pool.available) === 0 && Number(pool.waiting) === 0, 'both slots still lent, nobody waiting');
}

/** A caller that gives up leaves the line; the slot goes to the next one, never to nobody. */
export async function anAbortedWaitLeavesTheLine(): Promise<void> {
  const pool = new SlotPool([1]);
  const held = pool.tryAcquire();
  check(held === 1 && pool.tryAcquire() === undefined, 'the only slot is lent');
  const controller = new AbortController();
  const quitter = pool.acquire(controller.signal);
  const patient = pool.acquire();
  await tick();
  controller.abort(new Error('gave up'));
  await rejectsWith(quitter, (e) => e instanceof Error && e.message === 'gave up', 'the aborted wait rejects with the reason');
  check(pool.waiting === 1, 'the quitter left the line');
  pool.release(held);
  check((await patient) === 1, 'the slot went to the caller still waiting');
  pool.release(1);
  check(Number(pool.available) === 1 && Number(pool.waiting) === 0, 'back among the free');
  await rejectsWith(
    pool.acquire(AbortSignal.abort(new Error('late'))),
    (e) => e instanceof Error && e.message === 'late',
    'an aborted signal takes no slot',
  );
  check(pool.available === 1, 'still free');
}

/** Releasing what is not lent out is a bug that shows at once. */
export async function releasingWhatIsNotLentThrows(): Promise<void> {
  const pool = new SlotPool(['x']);
  let threw = false;
  try {
    pool.release('x');
  } catch {
    threw = true;
  }
  check(threw, 'releasing a free slot throws');
  const x = await pool.acquire();
  pool.release(x);
  threw = false;
  try {
    pool.release(x);
  } catch {
    threw = true;
  }
  check(threw && pool.available === 1, 'releasing twice throws and leaves one free slot');
}

export const syncScenarios: Record<string, () => Promise<void>> = {
  slotsGoToTheLineInOrder,
  anAbortedWaitLeavesTheLine,
  releasingWhatIsNotLentThrows,
};
