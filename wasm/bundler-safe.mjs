// Makes emscripten's ES-module output loadable by bundlers as shipped (run by wasm/build.sh on
// each linked .mjs):
//   - pthread workers are started with a literal options object, which Vite (and webpack) need to
//     see to bundle the worker; emscripten passes a variable. Before that, the module's
//     `tandemWorker` option is asked for the worker (with the module's own URL): a page that
//     imported the module from another origin starts it through a same-origin blob: script;
//   - the Node-only `import("module")` and `import('worker_threads')` (behind emscripten's Node
//     checks) get a specifier bundlers do not try to resolve for browsers ("externalized for
//     browser compatibility" warnings, or failures with bundlers that have no Node shims).
// Each rewrite must match exactly once where expected, or the build fails: an emscripten upgrade
// that changes the output has to be looked at, not silently shipped unpatched.
import { readFileSync, writeFileSync } from 'node:fs';

const [file, name] = process.argv.slice(2);
if (!file || !name) throw new Error('usage: node wasm/bundler-safe.mjs FILE.mjs MODULE_NAME');
let code = readFileSync(file, 'utf8');

function rewrite(what, from, to, expected) {
  const count = code.split(from).length - 1;
  if (count !== expected) throw new Error(`${file}: expected ${expected} × ${what}, found ${count}`);
  code = code.split(from).join(to);
}

const threaded = code.includes('allocateUnusedWorker');
rewrite(
  'pthread worker construction',
  `new Worker(new URL("${name}.mjs",import.meta.url),workerOptions)`,
  `(Module["tandemWorker"]&&Module["tandemWorker"](import.meta.url))||new Worker(new URL("${name}.mjs",import.meta.url),{type:"module",workerData:"em-pthread",name:"em-pthread"})`,
  threaded ? 1 : 0,
);
const hidden = (builtin) => `await import(/* @vite-ignore */ /* webpackIgnore: true */ ["node", "${builtin}"].join(":"))`;
rewrite('Node-only import of "module"', 'await import("module")', hidden('module'), 1);
// The threaded module's own check for being a pthread in Node (emscripten's ES6 + pthreads preamble).
// This await is at the module's top level: a bundler that builds workers as IIFE stops here
// (Vite's default: "Module format iife does not support top-level await"), and shows this line.
const hint = '/* Bundling Tandem? Workers must be ES modules: in Vite add tandem/vite (plugins: [tandem()]) or set worker: { format: "es" } */ ';
rewrite('Node-only import of "worker_threads"', "await import('worker_threads')", hint + hidden('worker_threads'), threaded ? 1 : 0);
writeFileSync(file, code);
console.log(`[wasm] ${file.split('/').pop()}: worker options made literal${threaded ? '' : ' (none: single-threaded)'}, Node import hidden from bundlers`);
