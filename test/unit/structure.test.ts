// The rules in DESIGN.md's "Structure we hold ourselves to", checked on every run: each folder of
// src/ is a room with one door (index.ts); imports between rooms go through doors and point one
// way, down this list of layers; no room holds more than a quarter of the code.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = new URL('../../src/', import.meta.url).pathname;
/** Lower layers first; a room may import rooms of lower layers only. */
const LAYERS: string[][] = [
  ['runtime', 'random', 'sync'],
  ['synthetic'],
  ['pipeline', 'decode', 'gpu', 'sources'],
  ['vit'],
  ['train'],
  ['cli', 'vite', 'index'],
];
const layerOf = (room: string) => LAYERS.findIndex((rooms) => rooms.includes(room));

const files = readdirSync(src, { recursive: true }).map(String).filter((f) => /\.(ts|js)$/.test(f));
const roomOf = (path: string) => path.split('/')[0]!.replace(/\.ts$/, '');
const imports = files.flatMap((file) =>
  [...readFileSync(join(src, file), 'utf8').matchAll(/(?:import|export)[^'";]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)].map((m) => ({
    file,
    target: normalize(join(dirname(file), m[1] ?? m[2]!)),
  })),
).filter((i) => !i.target.startsWith('..') && roomOf(i.target) !== roomOf(i.file));

describe('structure of src/', () => {
  it('every room is in a layer', () => {
    const rooms = [...new Set(files.map(roomOf))];
    expect(rooms.filter((r) => layerOf(r) < 0)).toEqual([]);
  });
  it('imports between rooms point down the layers', () => {
    const upward = imports.filter((i) => layerOf(roomOf(i.target)) >= layerOf(roomOf(i.file))).map((i) => `${i.file} -> ${i.target}`);
    expect(upward).toEqual([]);
  });
  it('imports between rooms go through the door (index.ts)', () => {
    const deep = imports.filter((i) => !/^[a-z-]+\/index\.ts$/.test(i.target)).map((i) => `${i.file} -> ${i.target}`);
    expect(deep).toEqual([]);
  });
  it('no room holds more than a quarter of the code', () => {
    const lines = new Map<string, number>();
    let total = 0;
    for (const file of readdirSync(src, { recursive: true }).map(String).filter((f) => /\.(ts|js|wgsl)$/.test(f))) {
      const n = readFileSync(join(src, file), 'utf8').split('\n').length;
      lines.set(roomOf(file), (lines.get(roomOf(file)) ?? 0) + n);
      total += n;
    }
    const over = [...lines].filter(([, n]) => n > total / 4).map(([room, n]) => `${room}: ${n} of ${total} lines`);
    expect(over).toEqual([]);
  });
});
