// A bench's Node side (bench/text.ts's, bench/parquet.ts's): src/ and the bench's child transpiled (TypeScript's transpileModule,
// no type check) into a folder of the cache named after their content and tree, the layout kept so the
// child's relative imports hold, with node_modules linked beside it for the npm packages and wasm/
// for the decoder's module (src/decode finds it at ../../wasm/dist from its own files). Node 20
// cannot run .ts itself, and dist/ is left alone: other work may be using it while this runs.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (/\.(ts|js|wgsl)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

/** The transpiled child's path (built now unless the cache already holds these sources). */
export async function nodeChild(root: string, cache: string, bench = 'text'): Promise<{ child: string; built: boolean }> {
  const files = [...filesUnder(`${root}/src`), `${root}/bench/${bench}/child.ts`];
  // The tree's path is in the key too: the build links that tree's node_modules, which a build
  // reused from another tree (a deleted clone) would leave dangling.
  const hash = createHash('sha256').update(root).update('\u0000');
  for (const f of files) hash.update(relative(root, f)).update('\u0000').update(readFileSync(f));
  const dir = `${cache}/bench/${bench}-node/${hash.digest('hex').slice(0, 16)}`;
  const child = `${dir}/bench/${bench}/child.js`;
  if (existsSync(child)) return { child, built: false };
  const { default: ts } = await import('typescript');
  const options = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    rewriteRelativeImportExtensions: true,
    verbatimModuleSyntax: true,
  };
  const staging = `${dir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  for (const f of files) {
    const out = join(staging, relative(root, f)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    if (f.endsWith('.ts'))
      writeFileSync(out, ts.transpileModule(readFileSync(f, 'utf8'), { compilerOptions: options, fileName: f }).outputText);
    else copyFileSync(f, out);
  }
  writeFileSync(`${staging}/package.json`, '{ "type": "module" }\n');
  symlinkSync(`${root}/node_modules`, `${staging}/node_modules`);
  symlinkSync(`${root}/wasm`, `${staging}/wasm`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return { child, built: true };
}
