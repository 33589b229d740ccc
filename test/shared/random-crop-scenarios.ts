// The training transform fused into decode: RandomResizedCrop + RandomHorizontalFlip drawn inside
// the decoder (wasm/src/crop.c). Checked against torchvision in three ways: the sampler's draws
// have the statistics of torchvision's own get_params (scripts/make-crop-reference.py records
// them); for given seeds, the boxes are the ones the sampler's arithmetic gives and the pixels are
// torchvision's resized_crop + hflip of that box on PIL; and the same seed always gives the same
// crop, in every pool mode.
import { DecodePool, ImageBatcher, type EncodedImage, type ImageBatch } from '../../src/decode/index.ts';
import { encodeJpeg } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import { compare, EXACT, reducedLimits, stats } from './image-format-scenarios.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { decodeToBatches } from './transfer-scenarios.ts';

interface ReferenceCase {
  seed: number;
  x: number;
  y: number;
  width: number;
  height: number;
  flipped: boolean;
}

/** At a reduced DCT scale the crop is resampled from a smaller decode: close, not equal. */
/**
 * For each seed of the reference: the box and flip drawn, and the pixels against torchvision's
 * resized_crop (+ hflip) on PIL, from a full decode (exact) and at the reduced scale the crop
 * allows. Returns the measured errors.
 */
export async function randomCropMatchesTorchvision(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const cases = JSON.parse(new TextDecoder().decode(await load('photo-landscape.jpg.rrc.json'))) as ReferenceCase[];
  const bytes = await load('photo-landscape.jpg');
  const measured: string[] = [];
  let reduced = 0;
  for (const c of cases) {
    const want = await load(`photo-landscape.jpg.rrc${c.seed}.rgb`);
    for (const reducedScale of [false, true]) {
      const { pixels, info } = await pool.decode(bytes, { width: 224, height: 224, reducedScale, randomCrop: { seed: c.seed } });
      const box = info.crop;
      check(
        box?.x === c.x && box.y === c.y && box.width === c.width && box.height === c.height && info.flipped === c.flipped,
        `seed ${c.seed}: drew ${JSON.stringify(box)} flipped ${info.flipped}, the reference ${JSON.stringify(c)}`,
      );
      if (info.reducedScale > 1) reduced++;
      const what = `seed ${c.seed}, ${c.width}x${c.height}${c.flipped ? ' flipped' : ''} (${info.reducedScale > 1 ? `decoded at 1/${info.reducedScale}` : 'full decode'})`;
      measured.push(`${what}: ${stats(pixels, want)}`);
      // A reduced decode the crop allows is held to its documented figure; one the crop does not allow is exact.
      const limits = info.reducedScale > 1 ? reducedLimits(`photo-landscape.jpg crop seed ${c.seed}`) : EXACT;
      compare(pixels, want, limits, `${what} against torchvision`);
    }
  }
  // Crops wider than the target must be decoded at a reduced scale chosen for the crop, not the image.
  check(reduced > 0, 'no crop was decoded at a reduced scale');
  return measured;
}

interface SizeStats {
  width: number;
  height: number;
  areaBelow: number[];
  logRatioBelow: number[];
  area: number[];
  logRatio: number[];
  centreX: number[];
  centreY: number[];
  whole: number;
}

interface TailReference {
  draws: number;
  areaThresholds: number[];
  logRatioThresholds: number[];
}

type Box = { x: number; y: number; width: number; height: number };

async function drawBoxes(pool: DecodePool, W: number, H: number, draws: number, scale?: readonly [number, number]): Promise<Box[]> {
  const jpeg = encodeJpeg(new Uint8Array(W * H * 3).fill(128), W, H, { quality: 50 });
  const boxes: Box[] = [];
  for (let seed = 0; seed < draws; seed++) {
    const { info } = await pool.decode(jpeg, { width: 8, height: 8, channels: 1, randomCrop: { seed: seed * 7919 + 13, flip: 0, scale } });
    check(info.crop !== undefined, 'no crop reported');
    boxes.push(info.crop);
  }
  return boxes;
}

/**
 * The largest two-proportion z score between our boxes' shares below each area and log-ratio
 * threshold and torchvision's (20000 draws), with where it was.
 */
function tailDeviation(
  boxes: Box[],
  W: number,
  H: number,
  size: SizeStats,
  tail: TailReference,
): { z: number; where: string; tests: number } {
  const share = (values: number[], t: number) => values.filter((v) => v < t).length / values.length;
  const areas = boxes.map((b) => (b.width * b.height) / (W * H));
  const ratios = boxes.map((b) => Math.log(b.width / b.height));
  let worst = { z: 0, where: 'nowhere', tests: 0 };
  const compare = (values: number[], thresholds: number[], theirs: number[], name: string) => {
    for (const [i, t] of thresholds.entries()) {
      const p1 = share(values, t);
      const p2 = theirs[i] ?? Number.NaN;
      const pooled = (p1 * values.length + p2 * tail.draws) / (values.length + tail.draws);
      const se = Math.sqrt(pooled * (1 - pooled) * (1 / values.length + 1 / tail.draws));
      const z = se > 0 ? Math.abs(p1 - p2) / se : p1 === p2 ? 0 : Number.POSITIVE_INFINITY;
      worst.tests++;
      if (z > worst.z) worst = { z, where: `${name} < ${t}: ours ${p1.toFixed(4)}, torchvision ${p2.toFixed(4)}`, tests: worst.tests };
    }
  };
  compare(areas, tail.areaThresholds, size.areaBelow, 'area share');
  compare(ratios, tail.logRatioThresholds, size.logRatioBelow, 'log ratio');
  return worst;
}

/** A two-proportion z score above this fails; seeded on both sides, so a run either passes or fails every time. */
const TAIL_Z = 4.5;

/**
 * Draws `draws` crops per image size (tiny gray JPEGs of each size, decoded to 8×8) and compares
 * them with torchvision's own RandomResizedCrop.get_params draws (Tandem's generator cannot be
 * torch's, so the distributions are compared, not the boxes):
 * - quantiles of area share, log ratio and box centre, against 4000 draws, within 0.05 of each
 *   quantity's range (a wrong rounding, a swapped axis or a uniform ratio moves one by more);
 * - the share of draws below 11 area and 6 log-ratio thresholds, against 20000 draws, by a
 *   two-proportion z test at 4.5, fine enough for the tails: a scale floor of 0.10 instead of
 *   0.08 fails it, and the scenario proves that on every run by drawing with that floor too.
 * Returns how many comparisons passed.
 */
export async function randomCropStatisticsMatchTorchvision(pool: DecodePool, load: FixtureLoader, draws = 3000): Promise<number> {
  const reference = JSON.parse(new TextDecoder().decode(await load('crop-stats.torchvision.json'))) as {
    quantiles: number[];
    sizes: SizeStats[];
    tail: TailReference;
  };
  check(reference.tail !== undefined, 'crop-stats.torchvision.json has no tail shares: remake the fixtures (scripts/make-fixtures.sh)');
  let compared = 0;
  for (const size of reference.sizes) {
    const W = size.width;
    const H = size.height;
    const boxes = await drawBoxes(pool, W, H, draws);
    const ours: Omit<SizeStats, 'width' | 'height' | 'areaBelow' | 'logRatioBelow'> = {
      area: quantiles(
        boxes.map((b) => (b.width * b.height) / (W * H)),
        reference.quantiles,
      ),
      logRatio: quantiles(
        boxes.map((b) => Math.log(b.width / b.height)),
        reference.quantiles,
      ),
      centreX: quantiles(
        boxes.map((b) => (b.x + b.width / 2) / W),
        reference.quantiles,
      ),
      centreY: quantiles(
        boxes.map((b) => (b.y + b.height / 2) / H),
        reference.quantiles,
      ),
      whole: boxes.filter((b) => b.width === W && b.height === H).length / boxes.length,
    };
    // Tolerances as a share of each quantity's range: area share 0..1, log ratio ±log(4/3), centres 0..1.
    const span = { area: 1, logRatio: 2 * Math.log(4 / 3), centreX: 1, centreY: 1 } as const;
    for (const key of ['area', 'logRatio', 'centreX', 'centreY'] as const) {
      for (let q = 0; q < reference.quantiles.length; q++) {
        const diff = Math.abs((ours[key][q] ?? 0) - (size[key][q] ?? 0)) / span[key];
        check(
          diff <= 0.05,
          `${W}x${H} ${key} quantile ${reference.quantiles[q]}: ours ${ours[key][q]?.toFixed(4)}, torchvision ${size[key][q]?.toFixed(4)}`,
        );
        compared++;
      }
    }
    check(Math.abs(ours.whole - size.whole) <= 0.03, `${W}x${H}: whole-image crops ${ours.whole}, torchvision ${size.whole}`);
    const tail = tailDeviation(boxes, W, H, size, reference.tail);
    check(tail.z <= TAIL_Z, `${W}x${H}: ${tail.where} (z ${tail.z.toFixed(1)} > ${TAIL_Z})`);
    console.log(`[random crop] ${W}x${H} tail: largest z ${tail.z.toFixed(1)} (${tail.where})`);
    compared += tail.tests;
  }
  // The test's power, shown each run: the same draws with a scale floor of 0.10 must fail it.
  const size = reference.sizes[0]!;
  const floored = tailDeviation(
    await drawBoxes(pool, size.width, size.height, draws, [0.1, 1]),
    size.width,
    size.height,
    size,
    reference.tail,
  );
  console.log(`[random crop] tail z: floor 0.10 ${floored.z.toFixed(1)} at ${floored.where}`);
  check(floored.z > TAIL_Z, `a scale floor of 0.10 passed the tail test (largest z ${floored.z.toFixed(1)} at ${floored.where})`);
  return compared;
}

function quantiles(values: number[], qs: number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  return qs.map((q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN);
}

/**
 * The same seed gives the same crop and pixels; flip 1 mirrors exactly what flip 0 gives; the
 * batcher's preset draws per (seed, epoch, key): the same epoch twice gives the same batch, a new
 * epoch new crops. Returns how many images were compared.
 */
export async function randomCropIsReproducible(pool: DecodePool, load: FixtureLoader): Promise<number> {
  const bytes = await load('photo-landscape.jpg');
  const a = await pool.decode(bytes, { width: 64, height: 48, randomCrop: { seed: 42, flip: 0 } });
  const b = await pool.decode(bytes, { width: 64, height: 48, randomCrop: { seed: 42, flip: 0 } });
  check(
    a.pixels.every((v, i) => v === b.pixels[i]),
    'the same seed gave different pixels',
  );
  const mirrored = await pool.decode(bytes, { width: 64, height: 48, randomCrop: { seed: 42, flip: 1 } });
  check(mirrored.info.flipped === true && JSON.stringify(mirrored.info.crop) === JSON.stringify(a.info.crop), 'flip 1 changed the box');
  for (let y = 0; y < 48; y++)
    for (let x = 0; x < 64; x++)
      for (let c = 0; c < 3; c++)
        check(mirrored.pixels[(y * 64 + x) * 3 + c] === a.pixels[(y * 64 + 63 - x) * 3 + c], `flip: pixel (${x}, ${y}) is not the mirror`);
  const other = await pool.decode(bytes, { width: 64, height: 48, randomCrop: { seed: 43, flip: 0 } });
  check(JSON.stringify(other.info.crop) !== JSON.stringify(a.info.crop), 'seeds 42 and 43 drew the same box');

  const items: EncodedImage[] = Array.from({ length: 6 }, (_, i) => ({ bytes, key: `photo-${i}`, label: i }));
  const batcher = new ImageBatcher(pool, { batchSize: 6, height: 32, width: 32, buffers: 2, randomCrop: { seed: 5 } });
  const epoch = async (n: number): Promise<Uint8Array> => {
    batcher.setEpoch(n);
    let copy = new Uint8Array(0);
    await decodeToBatches(batcher, items, async (batch: ImageBatch) => {
      copy = batch.data.slice();
      batch.release();
    });
    return copy;
  };
  try {
    const first = await epoch(0);
    const again = await epoch(0);
    const next = await epoch(1);
    check(first.length === 6 * 32 * 32 * 3 && first.every((v, i) => v === again[i]), 'epoch 0 twice gave different batches');
    const slot = 32 * 32 * 3;
    let same = 0;
    for (let i = 0; i < 6; i++) if (first.subarray(i * slot, (i + 1) * slot).every((v, j) => v === next[i * slot + j])) same++;
    check(same === 0, `epoch 1 repeated ${same} of epoch 0's crops`);
    // Items carry the same bytes, so distinct rows mean distinct per-key draws.
    const rows = new Set(Array.from({ length: 6 }, (_, i) => first.subarray(i * slot, (i + 1) * slot).join()));
    check(rows.size === 6, `6 keys drew ${rows.size} distinct crops`);
  } finally {
    batcher.close();
  }
  return 5 + 18;
}
