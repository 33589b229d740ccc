import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { coverMatchesTorchvision, imageFormatsMatchReferences } from '../shared/image-format-scenarios.ts';
import { fixturesMatchAcrossModes } from '../shared/fallback-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

// Made by scripts/make-image-fixtures.py (Debian's PIL), run by scripts/test.sh.
const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('image formats against PIL (Node)', () => {
  const pools: DecodePool[] = [];
  beforeAll(async () => {
    pools.push(await DecodePool.create({ threads: 2 }), await DecodePool.create({ threads: 1, mode: 'workers' }));
  });
  afterAll(async () => {
    for (const pool of pools) await pool.close();
  });

  it('progressive and CMYK JPEG, lossy/lossless/alpha WebP, first GIF frame (pthreads)', async () => {
    expect(await imageFormatsMatchReferences(pools[0]!, load)).toHaveLength(8);
  });
  it('the same in the worker fallback', async () => {
    expect(await imageFormatsMatchReferences(pools[1]!, load)).toHaveLength(8);
  });
  it('the worker fallback gives the pthreads bytes on every image fixture, a video and an audio file', async () => {
    expect(await fixturesMatchAcrossModes(pools[0]!, pools[1]!, load)).toBe(22);
  });
  it("Resize(224) + CenterCrop(224) lands on torchvision's pixels, in both pool modes", async () => {
    for (const pool of pools) console.log(`[torchvision] ${pool.mode}:\n  ${(await coverMatchesTorchvision(pool, load)).join('\n  ')}`);
  });
});
