import { describe, expect, it } from 'vitest';
import { DecodeError, DecodePool } from '../../src/decode/index.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePools } from '../shared/use-pool.ts';
import { windowedDecodesEqualWholeDecodes } from '../shared/window-scenarios.ts';
import {
  randomCropIsReproducible,
  randomCropMatchesTorchvision,
  randomCropStatisticsMatchTorchvision,
} from '../shared/random-crop-scenarios.ts';

// Fixtures made by scripts/make-crop-reference.py (Debian's torchvision and PIL), run by scripts/make-fixtures.sh.

describe('RandomResizedCrop + flip fused into decode (Node)', () => {
  const pools = usePools({ threads: 2 }, { threads: 1, mode: 'workers' });

  it("draws torchvision's boxes and lands on its resized_crop + hflip pixels, in both pool modes", async () => {
    for (const pool of pools)
      console.log(`[random crop] ${pool.mode}:\n  ${(await randomCropMatchesTorchvision(pool, load)).join('\n  ')}`);
  });
  it("draws crops with the statistics of torchvision's RandomResizedCrop.get_params", async () => {
    expect(await randomCropStatisticsMatchTorchvision(pools[0]!, load)).toBe(148);
  });
  it('the same seed gives the same crop; flip mirrors exactly; the batcher draws per (seed, epoch, key)', async () => {
    for (const pool of pools) expect(await randomCropIsReproducible(pool, load)).toBe(23);
  });
  it('refuses ranges it cannot draw from, and a crop box beside it, as bad requests', async () => {
    const bytes = await load('photo-landscape.jpg');
    const bad = [
      { width: 8, height: 8, randomCrop: { seed: 1, scale: [0.5, 0.2] as const } },
      { width: 8, height: 8, randomCrop: { seed: 1, scale: [0, 1] as const } },
      { width: 8, height: 8, randomCrop: { seed: 1, ratio: [2, 1] as const } },
      { width: 8, height: 8, randomCrop: { seed: 1, flip: 1.5 } },
      { width: 8, height: 8, randomCrop: { seed: 1.5 } },
      { width: 8, height: 8, crop: { x: 0, y: 0, width: 10, height: 10 }, randomCrop: { seed: 1 } },
    ];
    for (const options of bad) {
      const error = await pools[0]!.decode(bytes, options).catch((e: unknown) => e);
      expect(error instanceof DecodeError && error.code === 'bad-request', JSON.stringify(options)).toBe(true);
    }
    // The pool still decodes after them.
    expect((await pools[0]!.decode(bytes, { width: 8, height: 8, randomCrop: { seed: 1 } })).info.crop).toBeDefined();
  });
});

describe('decoding only the window the output reads (Node)', () => {
  it('gives the bytes of a whole decode for every fit, crop, scale, orientation, layout and filter, in both pool modes', async () => {
    const pools = [await DecodePool.create({ threads: 2 }), await DecodePool.create({ threads: 1, mode: 'workers' })];
    try {
      for (const pool of pools) expect(await windowedDecodesEqualWholeDecodes(pool, load)).toBe(15 * 14);
    } finally {
      for (const pool of pools) await pool.close();
    }
  });
});
