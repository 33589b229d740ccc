// Node tier: videoLoader()'s position, state() and resumeFrom (test/shared/video-resume-scenarios.ts):
// stopped after every k batches and resumed, a child process SIGKILLed mid-run and resumed from its
// checkpoints, foreign states refused.
import process from 'node:process';
import { describe, expect, it } from 'vitest';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';
import { foreignStatesRefused, killedVideoRunsResume, NODE_TS_HOOKS, stoppedRunsResumeExactly } from '../shared/video-resume-scenarios.ts';

const KILLS = 3;

describe('videoLoader: state() and resumeFrom (Node)', () => {
  const pool = usePool({ threads: 2 });
  it('stopped after every k batches of a shuffled 2-epoch run (a cut-off video, clips that fail to decode): the next for await and a loader resumed from the JSON state give the same batches, pixels included', async () => {
    const r = await stoppedRunsResumeExactly(pool(), load);
    expect(r.stops.length).toBe(r.batches - 1);
  });
  it('a state of loader(), another seed, shuffle or rank is refused: OptionError naming resumeFrom and what differs', () =>
    foreignStatesRefused(pool(), load));
  it(`a child SIGKILLed ${KILLS} times mid-run, each time resumed from its last checkpoint: its batches together are the uninterrupted run's`, {
    timeout: 300_000,
  }, async () => {
    const r = await killedVideoRunsResume({ command: process.execPath, args: ['--import', NODE_TS_HOOKS] }, pool(), load, KILLS);
    expect(r.kills).toBeGreaterThanOrEqual(KILLS);
    console.log(`[video resume] Node: ${r.kills} kills, resumed at batches ${r.resumedAt.join(', ')} of ${r.batches}`);
  });
});
