// One RandomResizedCrop box and flip per clip, drawn from (seed, epoch, key, clip): every frame of a
// clip shares them, so motion inside the clip is kept while clips differ. The draw is torchvision's
// (ten tries of an area share and a log-uniform aspect ratio, then the centre crop of the nearest
// allowed ratio), on Tandem's seeded generator.
import { hash3, mix32, Rng } from '../random/index.ts';
import { keyHash } from './samplers.ts';

export interface ClipCrop {
  crop: { x: number; y: number; width: number; height: number };
  flip: boolean;
}

const SALT_CROP = 0x63726f70;
const RATIO: readonly [number, number] = [3 / 4, 4 / 3];

export function drawClipCrop(
  width: number,
  height: number,
  scale: readonly [number, number],
  draw: { seed: number; epoch: number; key: string; clip: number },
): ClipCrop {
  const rng = new Rng(hash3(mix32((draw.seed >>> 0) ^ keyHash(draw.key)), draw.epoch * 65536 + draw.clip, SALT_CROP));
  const area = width * height;
  const [logLo, logHi] = [Math.log(RATIO[0]), Math.log(RATIO[1])];
  const flip = rng.float() < 0.5;
  for (let attempt = 0; attempt < 10; attempt++) {
    const target = area * rng.range(scale[0], scale[1]);
    const ratio = Math.exp(rng.range(logLo, logHi));
    const w = Math.round(Math.sqrt(target * ratio));
    const h = Math.round(Math.sqrt(target / ratio));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const x = Math.floor(rng.float() * (width - w + 1));
      const y = Math.floor(rng.float() * (height - h + 1));
      return { crop: { x, y, width: w, height: h }, flip };
    }
  }
  const aspect = width / height;
  const w = aspect < RATIO[0] ? width : aspect > RATIO[1] ? Math.round(height * RATIO[1]) : width;
  const h = aspect < RATIO[0] ? Math.round(width / RATIO[0]) : height;
  return { crop: { x: Math.floor((width - w) / 2), y: Math.floor((height - h) / 2), width: w, height: h }, flip };
}
