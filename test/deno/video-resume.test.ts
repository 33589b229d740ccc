// Deno tier: videoLoader()'s position, state() and resumeFrom (test/shared/video-resume-scenarios.ts),
// the same scenario bodies as Node; the kill test's child is run by Deno.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { foreignStatesRefused, killedVideoRunsResume, stoppedRunsResumeExactly } from '../shared/video-resume-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));
const KILLS = 3;

Deno.test('videoLoader: stopped after every k batches of a shuffled 2-epoch run, the next for await and a loader resumed from the JSON state give the same batches, pixels included', () =>
  withPool(2, (p) => stoppedRunsResumeExactly(p, load)).then(() => {}));
Deno.test('videoLoader: a state of loader(), another seed, shuffle or rank is refused naming resumeFrom and what differs', () =>
  withPool(2, (p) => foreignStatesRefused(p, load)).then(() => {}));
Deno.test(`videoLoader: a child SIGKILLed ${KILLS} times mid-run in Deno, each time resumed from its last checkpoint: its batches together are the uninterrupted run's`, async () => {
  const r = await withPool(2, (p) =>
    killedVideoRunsResume({ command: Deno.execPath(), args: ['run', '-A', '--no-check'] }, p, load, KILLS),
  );
  if (r.kills < KILLS) throw new Error(`${r.kills} kills, ${KILLS} expected`);
  console.log(`[video resume] Deno: ${r.kills} kills, resumed at batches ${r.resumedAt.join(', ')} of ${r.batches}`);
});
