// Deno tier: the kill tests (test/shared/resume-scenarios.ts) with the training child run by Deno.
import './limits.ts';
import { killedRunsResumeExactly } from '../shared/resume-scenarios.ts';

// TANDEM_KILL_RUNS can only raise the count: a green tier has always killed at least 6 times.
const MIN_KILLS = 6;
const kills = Math.max(MIN_KILLS, Number(Deno.env.get('TANDEM_KILL_RUNS')) || 0);

Deno.test(`SIGKILL at ${kills} random moments of a training run in Deno, each resumed: every key once, the same final weights`, async () => {
  const r = await killedRunsResumeExactly({ command: Deno.execPath(), args: ['run', '-A'] }, kills, 2);
  if (r.kills < MIN_KILLS) throw new Error(`${r.kills} kills, at least ${MIN_KILLS} expected`);
  console.log(
    `[resume] Deno: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});

const shardKills = Math.max(3, Number(Deno.env.get('TANDEM_SHARD_KILL_RUNS')) || 0);

Deno.test(`streamed shards in Deno: SIGKILL at ${shardKills} random moments, each resumed: every key once, the same final weights`, async () => {
  const r = await killedRunsResumeExactly({ command: Deno.execPath(), args: ['run', '-A'] }, shardKills, 4, 'shards');
  console.log(
    `[resume] Deno, streamed shards: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});

const parquetKills = Math.max(3, Number(Deno.env.get('TANDEM_PARQUET_KILL_RUNS')) || 0);

Deno.test(`Parquet row groups in Deno: SIGKILL at ${parquetKills} random moments, each resumed over uneven row groups: every key once, the same final weights`, async () => {
  const r = await killedRunsResumeExactly({ command: Deno.execPath(), args: ['run', '-A'] }, parquetKills, 5, 'parquet');
  if (r.kills < 3) throw new Error(`${r.kills} kills, at least 3 expected`);
  console.log(
    `[resume] Deno, Parquet: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});
