#!/usr/bin/env node
// Decodes a corpus with two builds of the wasm decode module and compares every output byte, then
// times the two builds against each other, interleaved: the check a change to the decoder's C must
// pass before it lands ("byte-equal to today's output"), and a first reading of what it gained.
//
//   node scripts/compare-decode-modules.mjs --a DIR --b DIR --corpus DIR [--sizes 224] [--fits cover] [--channels 3]
//        [--full] [--rrc] [--limit N] [--reps 3] [--threads 1] [--no-time]
//
// DIR for --a and --b: a folder holding tandem-decode.mjs and tandem-decode.wasm (a copy of
// wasm/dist from a build). --corpus: any folder; every .jpg/.jpeg/.png/.webp/.bmp/.gif under it.
// Jobs compared, per image: each --channels × --sizes × --fits (square targets, reduced DCT scale allowed,
// so JPEGs take the M/8 scales), --full (the whole image at its own size, no resize) and --rrc
// (a seeded RandomResizedCrop(224) + flip). An image that fails must fail the same way in both.
// Exits 1 when any output or error differs. Uses the package build in dist/ (npm run build).
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DecodePool } from '../dist/index.js';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    corpus: { type: 'string' },
    sizes: { type: 'string', default: '224' },
    fits: { type: 'string', default: 'cover' },
    channels: { type: 'string', default: '3' },
    full: { type: 'boolean', default: false },
    rrc: { type: 'boolean', default: false },
    limit: { type: 'string' },
    reps: { type: 'string', default: '3' },
    threads: { type: 'string', default: '1' },
    'no-time': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help || !args.a || !args.b || !args.corpus) {
  console.log(
    'usage: node scripts/compare-decode-modules.mjs --a DIR --b DIR --corpus DIR [--sizes 224,288] [--fits cover,stretch,contain] [--channels 1,3,4] [--full] [--rrc] [--limit N] [--reps 3] [--threads 1] [--no-time]',
  );
  process.exit(args.help ? 0 : 2);
}

async function listImages(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && /\.(jpe?g|png|webp|bmp|gif)$/i.test(entry.name)) out.push(join(entry.parentPath ?? entry.path, entry.name));
  }
  return out.sort();
}

const files = (await listImages(resolve(args.corpus))).slice(0, args.limit ? Number(args.limit) : undefined);
const images = await Promise.all(files.map((f) => readFile(f)));
const threads = Number(args.threads);
const base = (dir) => pathToFileURL(`${resolve(dir)}/`);
const pools = {
  a: await DecodePool.create({ threads, moduleBase: base(args.a) }),
  b: await DecodePool.create({ threads, moduleBase: base(args.b) }),
};

// Source sizes (oriented) for --full, read once with build A.
async function orientedSize(bytes) {
  const { info } = await pools.a.decode(bytes, { width: 8, height: 8 });
  const turned = info.orientation >= 5;
  return { width: turned ? info.sourceHeight : info.sourceWidth, height: turned ? info.sourceWidth : info.sourceHeight };
}

const jobs = [];
for (const channels of args.channels.split(',').filter(Boolean).map(Number))
  for (const size of args.sizes.split(',').filter(Boolean).map(Number))
    for (const fit of args.fits.split(',').filter(Boolean))
      jobs.push({
        name: `${fit} ${size}${channels === 3 ? '' : ` ×${channels}`}`,
        options: () => ({ width: size, height: size, fit, channels }),
      });
if (args.rrc) jobs.push({ name: 'rrc 224', options: (i) => ({ width: 224, height: 224, randomCrop: { seed: 7919 * i + 1, flip: 0.5 } }) });
let fullSizes = [];
if (args.full) {
  fullSizes = await Promise.all(images.map((bytes) => orientedSize(bytes).catch(() => ({ width: 8, height: 8 }))));
  jobs.push({ name: 'full size', options: (i) => ({ ...fullSizes[i], fit: 'stretch', reducedScale: false }) });
}

const outcome = async (pool, bytes, options) => {
  try {
    return { pixels: (await pool.decode(bytes, options)).pixels };
  } catch (error) {
    return { error: error?.code ? `${error.code}: ${error.detail}` : String(error) };
  }
};

let differing = 0;
for (const job of jobs) {
  let same = 0;
  let failedBoth = 0;
  let maxDiff = 0;
  const examples = [];
  for (let i = 0; i < images.length; i++) {
    const options = job.options(i);
    const [ra, rb] = await Promise.all([outcome(pools.a, images[i], options), outcome(pools.b, images[i], options)]);
    let equal = false;
    if (ra.error || rb.error) {
      equal = ra.error === rb.error;
      if (equal) failedBoth++;
    } else if (ra.pixels.length === rb.pixels.length) {
      equal = true;
      for (let k = 0; k < ra.pixels.length; k++) {
        const d = Math.abs(ra.pixels[k] - rb.pixels[k]);
        if (d) {
          equal = false;
          if (d > maxDiff) maxDiff = d;
        }
      }
    }
    if (equal) same++;
    else if (examples.length < 5) examples.push(`${files[i]}: ${ra.error ?? 'ok'} / ${rb.error ?? 'ok'}`);
  }
  differing += images.length - same;
  console.log(
    `${job.name}: ${same}/${images.length} identical (${failedBoth} failed the same way in both)` +
      (same < images.length ? `; ${images.length - same} differ, max |a-b| ${maxDiff}\n  ${examples.join('\n  ')}` : ''),
  );
}

if (!args['no-time']) {
  // Requests in flight per pool: two per thread, as the loader keeps them.
  const inFlight = 2 * threads;
  async function timeOne(pool, job) {
    const t0 = performance.now();
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < images.length; i = next++) await outcome(pool, images[i], job.options(i));
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    return images.length / ((performance.now() - t0) / 1000);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (const job of jobs) {
    // One untimed pass each first: V8 tiers the wasm up during the first images.
    await timeOne(pools.a, job);
    await timeOne(pools.b, job);
    const rates = { a: [], b: [] };
    for (let r = 0; r < Number(args.reps); r++) {
      for (const side of r % 2 ? ['b', 'a'] : ['a', 'b']) rates[side].push(await timeOne(pools[side], job));
    }
    const a = median(rates.a);
    const b = median(rates.b);
    console.log(
      `${job.name}: a ${a.toFixed(0)} images/s, b ${b.toFixed(0)} images/s, b ÷ a ${(b / a).toFixed(3)} (median of ${args.reps}, ${threads} thread(s) each)`,
    );
  }
}
await Promise.all([pools.a.close(), pools.b.close()]);
process.exit(differing ? 1 : 0);
