// The demo page's Vite config: `npx vite demo` (dev), `npx vite build demo`, `npx vite preview
// demo`. Cross-origin isolation (for wasm pthreads) comes from the top-level config; the e2e tests build the same config without isolation to check the fallback.
import { fileURLToPath } from 'node:url';
import { defineConfig, type UserConfig } from 'vite';
import { isolation } from '../vite.config.ts';

const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export function demoConfig(options: { isolated?: boolean } = {}): UserConfig {
  const headers = options.isolated === false ? {} : isolation;
  return {
    root: demoRoot,
    server: { headers, fs: { allow: [repoRoot] } },
    preview: { headers },
    worker: { format: 'es' },
    // What Tandem imports only when a page uses it (the Parquet reader for the Hub field, tokenizers.js
    // in the tokenizer workers) is pre-bundled at start: found on first use, Vite reloads the page
    // mid-run ("optimized dependencies changed", seen in the text demo's e2e test).
    optimizeDeps: { include: ['hyparquet', 'hyparquet-compressors', '@huggingface/tokenizers'] },
    // out/ is git-ignored and outside tsconfig's include (the build copies some .ts files as assets).
    build: {
      target: 'es2022',
      outDir: `${repoRoot}out/demo`,
      emptyOutDir: true,
      // Three pages: the image demo, the video demo (video.html) and the text demo (text.html).
      rolldownOptions: { input: { main: `${demoRoot}index.html`, video: `${demoRoot}video.html`, text: `${demoRoot}text.html` } },
    },
    logLevel: 'warn',
  };
}

export default defineConfig(demoConfig());
