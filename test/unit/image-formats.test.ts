import { describe, expect, it } from 'vitest';
import { coverMatchesTorchvision, imageFormatsMatchReferences } from '../shared/image-format-scenarios.ts';
import { fixturesMatchAcrossModes } from '../shared/fallback-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePools } from '../shared/use-pool.ts';

// Fixtures made by scripts/make-image-fixtures.py (Debian's PIL), run by scripts/test.sh.

describe('image formats against PIL (Node)', () => {
  const pools = usePools({ threads: 2 }, { threads: 1, mode: 'workers' });

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
