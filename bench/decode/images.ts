// The benchmark's inputs: ImageNet-like JPEGs from the project's generator, 500×375, quality
// 75..95 (cycling with the index), 4:2:0; generated once into the cache and reused.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, exists, makeDir, writeFileAtomic } from '../../src/runtime/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import type { ImageInfo } from './types.ts';

export interface BenchImage {
  path: string;
  bytes: Uint8Array;
  info: ImageInfo;
  quality: number;
}

export const qualityOf = (i: number): number => 75 + (i % 21);

export async function benchImages(count: number): Promise<BenchImage[]> {
  const dir = `${cacheDir()}/datasets/bench-decode-q75-95-n${count}`;
  const path = (i: number) => `${dir}/${String(i).padStart(6, '0')}-q${qualityOf(i)}.jpg`;
  if (!(await exists(`${dir}/.complete`))) {
    await makeDir(dir);
    for (let i = 0; i < count; i++) {
      const s = renderSample(0, i, { width: 500, height: 375, classes: 4 });
      await writeFileAtomic(path(i), encodeJpeg(s.rgb, s.width, s.height, { quality: qualityOf(i) }));
    }
    await writeFileAtomic(`${dir}/.complete`, new TextEncoder().encode(`${count}\n`));
  }
  return Array.from({ length: count }, (_, i) => {
    const bytes = new Uint8Array(readFileSync(path(i)));
    return { path: path(i), bytes, info: jpegSize(bytes), quality: qualityOf(i) };
  });
}

/**
 * `count` JPEGs of a folder (ImageNet-style or flat), walked in name order: the first ones, or with
 * `spread` every (n ÷ count)-th, so that every class folder is in.
 */
export function corpusImages(dir: string, count: number, spread = false): BenchImage[] {
  const paths: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (!spread && paths.length >= count) return;
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.jpe?g$/i.test(name)) paths.push(path);
    }
  };
  walk(dir);
  if (paths.length === 0) throw new Error(`no JPEGs under ${dir}`);
  const step = spread ? Math.max(1, Math.floor(paths.length / count)) : 1;
  return paths
    .filter((_, i) => i % step === 0)
    .slice(0, count)
    .map((path) => {
      const bytes = new Uint8Array(readFileSync(path));
      return { path, bytes, info: jpegSize(bytes), quality: 0 };
    });
}

/** Width and height from a JPEG's first SOF marker. */
export function jpegSize(b: Uint8Array): ImageInfo {
  let p = 2;
  while (p + 9 < b.length) {
    if (b[p] !== 0xff) throw new Error('jpegSize: lost marker sync');
    const marker = b[p + 1]!;
    const len = (b[p + 2]! << 8) | b[p + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (b[p + 5]! << 8) | b[p + 6]!, width: (b[p + 7]! << 8) | b[p + 8]! };
    }
    p += 2 + len;
  }
  throw new Error('jpegSize: no SOF marker');
}
