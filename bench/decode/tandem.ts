// One pass of Tandem's DecodePool over the images: pool.maxInFlight requests in flight, as the
// decode stage keeps them, each decoding into its own slot. Used in Deno and in the page.
import type { DecodePool } from '../../src/decode/index.ts';
import { OUT, type ImageInfo, type Transform } from './types.ts';

export async function decodePass(
  pool: DecodePool,
  images: ReadonlyArray<{ bytes: Uint8Array; info: ImageInfo }>,
  transform: Transform,
  reducedScale: boolean,
): Promise<{ seconds: number; failed: number }> {
  const lanes = pool.maxInFlight;
  const slot = transform === 'resize' ? OUT * OUT * 3 : Math.max(...images.map((m) => m.info.width * m.info.height * 3));
  const target = pool.malloc(slot * lanes);
  let next = 0,
    failed = 0;
  const t0 = performance.now();
  const lane = async (k: number) => {
    for (let i = next++; i < images.length; i = next++) {
      const { bytes, info } = images[i]!;
      const size =
        transform === 'resize'
          ? { width: OUT, height: OUT, fit: 'cover' as const }
          : { width: info.width, height: info.height, fit: 'stretch' as const };
      try {
        await pool.decodeInto(bytes, target + k * slot, { ...size, reducedScale });
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, k) => lane(k)));
  const seconds = (performance.now() - t0) / 1000;
  pool.free(target);
  return { seconds, failed };
}
