// The images the plain-JavaScript bench children (bench/scaling/child.mjs, bench/tiering/child.mjs)
// decode: `count` JPEGs of a corpus read into memory, every (n ÷ count)-th file in name order so
// that every class folder is in (bench/decode/images.ts's corpusImages does the same for the
// TypeScript benches, which these children cannot import: they run on dist/ under Node too).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** @param {string} dir @param {number} count @returns {Buffer[]} */
export function spreadImages(dir, count) {
  const all = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.jpe?g$/i.test(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
  const step = Math.max(1, Math.floor(all.length / count));
  return all
    .filter((_, i) => i % step === 0)
    .slice(0, count)
    .map((f) => readFileSync(f));
}
