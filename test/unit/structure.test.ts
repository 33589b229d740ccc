// The structure rules of docs/architecture.md, checked on every run: each folder of
// src/ is a room with one door (index.ts); imports between rooms go through doors and point one
// way, down this list of layers; no room holds more than a quarter of the code.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = new URL('../../src/', import.meta.url).pathname;
/** Lower layers first; a room may import rooms of lower layers only. */
const LAYERS: string[][] = [
  ['errors'],
  ['runtime', 'random', 'sync'],
  ['synthetic'],
  ['pipeline', 'decode', 'gpu', 'sources'],
  ['vit', 'tfjs', 'onnx', 'jax', 'parquet'],
  ['loader', 'gpt'],
  ['text'],
  ['train', 'video'],
  ['cli', 'vite', 'index'],
];
const layerOf = (room: string) => LAYERS.findIndex((rooms) => rooms.includes(room));

const files = readdirSync(src, { recursive: true })
  .map(String)
  .filter((f) => /\.(ts|js)$/.test(f));
const roomOf = (path: string) => path.split('/')[0]!.replace(/\.ts$/, '');
const allImports = files
  .flatMap((file) =>
    [...readFileSync(join(src, file), 'utf8').matchAll(/(?:import|export)[^'";]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)].map(
      (m) => ({
        file,
        target: normalize(join(dirname(file), m[1] ?? m[2]!)),
      }),
    ),
  )
  .filter((i) => !i.target.startsWith('..'));
const imports = allImports.filter((i) => roomOf(i.target) !== roomOf(i.file));

/** Every cycle of file imports (type-only ones included), each as the files around it. */
function importCycles(): string[] {
  const edges = new Map<string, string[]>();
  for (const i of allImports) edges.set(i.file, [...(edges.get(i.file) ?? []), i.target]);
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return cycles;
}

describe('structure of src/', () => {
  it("tandem's doors load no package when imported: a page with an import map, or a CDN, needs none", () => {
    // The static graph (type-only imports and import() left out) from each public door may name
    // only other files of src/ (and node: builtins, which browsers never reach: they sit behind
    // runtime checks); a package such as the Parquet reader is import()ed where it is used.
    const staticImports = (file: string) =>
      [...readFileSync(join(src, file), 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)[^'";]*?from\s+'([^']+)'/gm)].map((m) => m[1]!);
    const doors = ['index.ts', ...files.filter((f) => /^[a-z-]+\/index\.ts$/.test(f))];
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of staticImports(file)) {
        if (spec.startsWith('.')) visit(normalize(join(dirname(file), spec)));
        else if (!spec.startsWith('node:')) packages.add(`${spec} (from ${file})`);
      }
    };
    for (const door of doors) visit(door);
    expect([...packages]).toEqual([]);
  });
  it('every runtime dependency is pre-bundled by tandem/vite (loaded only on use, Vite would find it mid-run and may reload the page)', async () => {
    // The test above holds that no door imports a package statically: each dependency is reached
    // through an import() only when its feature is used.
    const { dependencies } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const { tandem } = await import('../../src/vite/index.ts');
    const config = (tandem().config as () => { optimizeDeps: { include: string[]; exclude: string[] } })();
    expect(config.optimizeDeps.exclude).toEqual(['tandem']);
    expect(new Set(config.optimizeDeps.include)).toEqual(new Set(Object.keys(dependencies).map((name) => `tandem > ${name}`)));
  });
  it('every room is in a layer', () => {
    const rooms = [...new Set(files.map(roomOf))];
    expect(rooms.filter((r) => layerOf(r) < 0)).toEqual([]);
  });
  it('imports between rooms point down the layers', () => {
    const upward = imports.filter((i) => layerOf(roomOf(i.target)) >= layerOf(roomOf(i.file))).map((i) => `${i.file} -> ${i.target}`);
    expect(upward).toEqual([]);
  });
  it('imports between rooms go through a door: index.ts (the public one) or internal.ts (for sibling rooms only)', () => {
    // One more door, for worker programs only: a room's worker script (`*-entry.js`, started by
    // `new Worker(new URL(…))`) imports the pipeline's worker bootstrap statically, so that a
    // bundler bundles the worker whole. It is plain JavaScript that Node 20 workers load from src/,
    // so it cannot go through a TypeScript door.
    const workerDoor = (i: { file: string; target: string }) => /-entry\.js$/.test(i.file) && i.target === 'pipeline/worker-bootstrap.js';
    const deep = imports
      .filter((i) => !/^[a-z-]+\/(index|internal)\.ts$/.test(i.target) && !workerDoor(i))
      .map((i) => `${i.file} -> ${i.target}`);
    expect(deep).toEqual([]);
  });
  it('no file imports itself through others (no import cycles, type-only imports included)', () => {
    expect(importCycles()).toEqual([]);
  });
  it('no room holds more than a quarter of the code', () => {
    const lines = new Map<string, number>();
    let total = 0;
    for (const file of readdirSync(src, { recursive: true })
      .map(String)
      .filter((f) => /\.(ts|js|wgsl)$/.test(f))) {
      const n = readFileSync(join(src, file), 'utf8').split('\n').length;
      lines.set(roomOf(file), (lines.get(roomOf(file)) ?? 0) + n);
      total += n;
    }
    const over = [...lines].filter(([, n]) => n > total / 4).map(([room, n]) => `${room}: ${n} of ${total} lines`);
    expect(over).toEqual([]);
  });
});

// The package's doors show the API, not the rooms: each door's run-time exports are listed in
// test/unit/doors.json, so a name leaves or joins the public API only by changing that list too.
// Helpers that tests need are imported from their files. TANDEM_UPDATE_DOORS=1 rewrites the list.
describe('the package doors (package.json exports)', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
  const listPath = new URL('./doors.json', import.meta.url);
  const doors = Object.keys(pkg.exports).map((entry) => (entry === '.' ? 'index' : `${entry.slice(2)}/index`));
  it('each door exports exactly its listed names', async () => {
    const actual: Record<string, string[]> = {};
    for (const door of doors)
      actual[door] = Object.keys(await import(/* @vite-ignore */ new URL(`../../src/${door}.ts`, import.meta.url).href)).sort();
    if (process.env.TANDEM_UPDATE_DOORS === '1') writeFileSync(listPath, `${JSON.stringify(actual, null, 2)}\n`);
    expect(actual).toEqual(JSON.parse(readFileSync(listPath, 'utf8')));
  });
});

describe('internal doors', () => {
  it('no public door re-exports an internal one, and package.json exports none', () => {
    const pkg = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    expect(pkg).not.toMatch(/internal/);
    const leaks = files.filter(
      (f) => f.endsWith('index.ts') && /from '\.{1,2}\/[a-z/-]*internal\.ts'/.test(readFileSync(join(src, f), 'utf8')),
    );
    expect(leaks).toEqual([]);
  });
});

describe('structure of test/', () => {
  it('every Deno test file imports ./limits.ts (the per-test time limit)', () => {
    const deno = new URL('../deno/', import.meta.url).pathname;
    const files = readdirSync(deno).filter((f) => f.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => !/^import '\.\/limits\.ts';$/m.test(readFileSync(join(deno, f), 'utf8')))).toEqual([]);
  });
});
