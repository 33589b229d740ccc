import { expect, it } from 'vitest';
import { killedRunsResumeExactly } from '../shared/resume-scenarios.ts';

// TANDEM_KILL_RUNS sets how many kills (the suite's default keeps the tier short; docs/resume.md
// has a longer run's figures). It can only raise the count: a green tier has always killed at least 6.
const MIN_KILLS = 6;
const kills = Math.max(MIN_KILLS, Number(process.env.TANDEM_KILL_RUNS) || 0);

it(`SIGKILL at ${kills} random moments of a training run, each resumed: every key once, the same final weights bit for bit`, {
  timeout: 900_000,
}, async () => {
  const r = await killedRunsResumeExactly({ command: process.execPath, args: [] }, kills);
  expect(r.kills).toBeGreaterThanOrEqual(MIN_KILLS);
  console.log(
    `[resume] Node: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});

const shardKills = Math.max(3, Number(process.env.TANDEM_SHARD_KILL_RUNS) || 0);

it(`streamed shards: SIGKILL at ${shardKills} random moments, each resumed from the stream's saved position and buffer: every key once, the same final weights`, {
  timeout: 900_000,
}, async () => {
  const r = await killedRunsResumeExactly({ command: process.execPath, args: [] }, shardKills, 3, 'shards');
  console.log(
    `[resume] Node, streamed shards: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});

const parquetKills = Math.max(3, Number(process.env.TANDEM_PARQUET_KILL_RUNS) || 0);

it(`Parquet row groups: SIGKILL at ${parquetKills} random moments, each resumed from the stream's position and buffer over uneven row groups: every key once, the same final weights`, {
  timeout: 900_000,
}, async () => {
  const r = await killedRunsResumeExactly({ command: process.execPath, args: [] }, parquetKills, 4, 'parquet');
  expect(r.kills).toBeGreaterThanOrEqual(3);
  console.log(
    `[resume] Node, Parquet: ${r.kills} kills resumed at steps ${r.resumedAt.join(', ')}; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s`,
  );
});
