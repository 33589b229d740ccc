// One fresh process of bench/tiering.ts: a one-thread decode pool timed pass after pass over the
// same images held in memory, from the very first image, so the report sees what V8's tiering of
// the wasm did in this process. Plain JavaScript on dist/, for Node and Deno alike. Prints one JSON
// line: images/s per pass.
//
//   deno run -A bench/tiering/child.mjs --corpus DIR [--images 500] [--passes 6] [--mode default|warm|eager]
//
// --mode warm: before the first timed image, each pool thread decodes generated images
//   (`DecodePool.create({ warmUp: true })`).
// --mode eager: V8 compiles all of the wasm with its optimising compiler at once, asked for through
//   node:v8's setFlagsFromString('--no-wasm-dynamic-tiering') before the module is loaded.
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import process from 'node:process';
import { spreadImages } from '../shared/spread-images.mjs';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    images: { type: 'string', default: '500' },
    passes: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'default' },
  },
});
if (!values.corpus) throw new Error('--corpus DIR is required');
if (!['default', 'warm', 'eager'].includes(values.mode)) throw new Error(`--mode: default, warm or eager, not ${values.mode}`);
if (values.mode === 'eager') v8.setFlagsFromString('--no-wasm-dynamic-tiering');
const { DecodePool } = await import('../../dist/index.js');

const images = spreadImages(values.corpus, Number(values.images));

const createdAt = performance.now();
const pool = await DecodePool.create({ threads: 1 });
const size = 224;
const target = pool.malloc(size * size * 3 * 2);
if (values.mode === 'warm') {
  const { encodeJpeg, renderSample } = await import('../../dist/synthetic/index.js');
  const warm = [
    [500, 375, '420'],
    [375, 500, '420'],
    [400, 300, '444'],
  ].map(([w, h, subsampling], i) => {
    const s = renderSample(1, i, { width: w, height: h, classes: 4 });
    return encodeJpeg(s.rgb, s.width, s.height, { quality: 90, subsampling });
  });
  for (let k = 0; k < Number(process.env.WARM_ROUNDS ?? 40); k++)
    for (const bytes of warm) await pool.decodeInto(bytes, target, { width: size, height: size, fit: 'cover' });
}
const startMs = performance.now() - createdAt;
const rates = [];
for (let p = 0; p < Number(values.passes); p++) {
  const t0 = performance.now();
  let next = 0;
  const lane = async (k) => {
    for (let i = next++; i < images.length; i = next++)
      await pool.decodeInto(images[i], target + k * size * size * 3, { width: size, height: size, fit: 'cover' }).catch(() => {});
  };
  await Promise.all([lane(0), lane(1)]);
  rates.push(images.length / ((performance.now() - t0) / 1000));
}
pool.free(target);
await pool.close();
console.log(JSON.stringify({ mode: values.mode, startMs, rates }));
