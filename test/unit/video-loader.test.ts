// Node tier: videoLoader() to CPU clips on a pthreads pool (test/shared/video-loader-scenarios.ts).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { brokenVideosFailTheirOwnItem, cpuClipsFollowTheSampler } from '../shared/video-loader-scenarios.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('videoLoader (Node, CPU clips)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });
  it('hands out the clips the sampler draws: frame times, labels, keys, batch shape', () => cpuClipsFollowTheSampler(pool, load));
  it('a cut, random, audio-only or empty file fails its own item in the sample stage with a typed error; nothing is lost', () =>
    brokenVideosFailTheirOwnItem(pool, load));
});
