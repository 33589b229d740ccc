// Lets Node 20 (no --experimental-strip-types) run Tandem's TypeScript sources as they are, for the
// video kill test's child (test/shared/video-resume-child.ts): each .ts module is transpiled on load
// by the TypeScript compiler the repository already has (types dropped, nothing type-checked), so
// the child runs src/ itself, never a stale build.
//   node --import ./test/shared/video-ts-hooks.mjs test/shared/video-resume-child.ts ...
import { readFile } from 'node:fs/promises';
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

// Imported by --import on the main thread: register this same file as the module hooks. (Worker
// threads, which --import reaches too, load no TypeScript.)
if (isMainThread) register(import.meta.url);

let ts;

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  ts ??= (await import('typescript')).default;
  const source = await readFile(new URL(url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true, sourceMap: false },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
