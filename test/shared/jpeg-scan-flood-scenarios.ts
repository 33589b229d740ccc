// Progressive JPEG scans that cost 2 bytes each and visit every block: an end-of-band run covers
// a whole component. libjpeg-turbo stops at 500 scans (TJFLAG_LIMITSCANS); libavcodec's mjpeg,
// which decodes a CMYK JPEG asked for one channel, had no limit, so n such scans cost
// O(n x blocks) with no way to stop the thread (80,000 over a 1024x1024 image, 1.3 MB: 2.4 s in ffmpeg).
// wasm/ffmpeg/decoder-bounds.patch gives it libjpeg-turbo's limit.
import { type DecodePool, DecodeError } from '../../src/decode/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { decodedCopy } from './metadata-flood-scenarios.ts';

/** Past the limit by far: before the patch this many held the thread for minutes. */
const SCANS_OVER_THE_LIMIT = 60_000;
const SCANS_UNDER_THE_LIMIT = 400;
const SIDE = 32;

/**
 * `jpeg` (progressive) with `scans` more AC scans of its first component before EOI, each one
 * end-of-band run that adds no coefficient, after a Huffman table holding only that run's symbol.
 */
export function floodJpegScans(jpeg: Uint8Array, scans: number): Uint8Array {
  let at = 2;
  let component = -1;
  while (at + 4 <= jpeg.length && component < 0) {
    const marker = jpeg[at + 1]!;
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    if (jpeg[at] !== 0xff || marker === 0xda) throw new Error('flood: no SOF2 before the first scan');
    if (marker === 0xc2) component = jpeg[at + 10]!; // SOF2: P, Y, X, Nf, then the first component's ID
    at += 2 + length;
  }
  if (component < 0 || jpeg[jpeg.length - 2] !== 0xff || jpeg[jpeg.length - 1] !== 0xd9) throw new Error('flood: not a progressive JPEG');
  // DHT: class 1 (AC), table 0, one code of length 1 for symbol 0xE0 (a run of 2^14 + 14 bits).
  const table = Uint8Array.of(0xff, 0xc4, 0, 20, 0x10, 1, ...new Array<number>(15).fill(0), 0xe0);
  // SOS: one component, AC table 0, spectral band 1-63, no approximation; then three runs of
  // 32,766 blocks (code '0', 14 bits 11111111111110), padded with ones, each 0xFF byte stuffed.
  const sos = [0xff, 0xda, 0, 8, 1, component, 0x00, 1, 63, 0x00];
  const scan = Uint8Array.of(...sos, 0x7f, 0xfc, 0xff, 0x00, 0xf9, 0xff, 0x00, 0xf7);
  const out = new Uint8Array(jpeg.length + table.length + scans * scan.length);
  out.set(jpeg.subarray(0, jpeg.length - 2));
  out.set(table, jpeg.length - 2);
  for (let i = 0, p = jpeg.length - 2 + table.length; i < scans; i++, p += scan.length) out.set(scan, p);
  out.set([0xff, 0xd9], out.length - 2);
  return out;
}

/**
 * Under the limit, scans that add nothing leave the image as it was; past it the image fails alone
 * as a corrupt item, at once, and the pool decodes the next one.
 */
export async function progressiveScanFloodFailsFast(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const jpeg = await load('large/cmyk-progressive-2048.jpg');
  const options = { width: SIDE, height: SIDE, channels: 1 as const };
  const decode = async (bytes: Uint8Array) =>
    (await decodedCopy(pool, SIDE * SIDE, async (buffer) => void (await pool.decodeInto(bytes, buffer, options)))).bytes;
  const plain = await decode(jpeg);
  check(
    plain.some((v) => v !== plain[0]),
    'the progressive CMYK fixture decodes to a ramp',
  );
  const under = await decode(floodJpegScans(jpeg, SCANS_UNDER_THE_LIMIT));
  check(
    under.every((v, i) => v === plain[i]),
    `${SCANS_UNDER_THE_LIMIT} empty scans leave the image as it was`,
  );
  const started = Date.now();
  const over = await decode(floodJpegScans(jpeg, SCANS_OVER_THE_LIMIT)).then(
    () => 'decoded',
    (error: unknown) => (error instanceof DecodeError ? error.code : String(error)),
  );
  check(over === 'corrupt', `${SCANS_OVER_THE_LIMIT} scans fail as corrupt, not ${over} (after ${Date.now() - started} ms)`);
  const again = await decode(jpeg);
  check(
    again.every((v, i) => v === plain[i]),
    'the pool decodes the fixture again after the flood',
  );
}
