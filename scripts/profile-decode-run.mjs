// Decodes the first --images JPEGs of a corpus on a one-thread pool (two requests in flight, so
// the thread never waits for the event loop), --passes times, with --transform cover
// (Resize + CenterCrop) or rrc (RandomResizedCrop); run under `node --cpu-prof` by
// scripts/profile-decode.sh, on a build of the library whose wasm keeps its function names.
//   node profile-decode-run.mjs LIB_DIR CORPUS_DIR [images] [passes] [cover|rrc]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [lib, corpus, images = '600', passes = '3', transform = 'cover'] = process.argv.slice(2);
const { DecodePool } = await import(join(lib, 'decode', 'index.js'));
const files = [];
for (const entry of readdirSync(corpus).sort()) {
  const path = join(corpus, entry);
  if (statSync(path).isDirectory()) for (const f of readdirSync(path).sort()) if (f.endsWith('.jpg')) files.push(join(path, f));
}
const inputs = files.slice(0, Number(images)).map((f) => new Uint8Array(readFileSync(f)));
const pool = await DecodePool.create({ threads: 1 });
const target = pool.malloc(224 * 224 * 3 * 2);
const t0 = performance.now();
let n = 0;
for (let pass = 0; pass < Number(passes); pass++) {
  let next = 0;
  const lane = async (k) => {
    while (next < inputs.length) {
      const i = next++;
      const options = { width: 224, height: 224, ...(transform === 'rrc' ? { randomCrop: { seed: i + pass * 7919 } } : { fit: 'cover' }) };
      await pool.decodeInto(inputs[i], target + k * 224 * 224 * 3, options);
      n++;
    }
  };
  await Promise.all([lane(0), lane(1)]);
}
const seconds = (performance.now() - t0) / 1000;
pool.free(target);
await pool.close();
console.log(JSON.stringify({ images: n, seconds, perSecond: n / seconds, transform }));
