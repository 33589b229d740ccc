/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { playwright } from '@vitest/browser-playwright';

// SharedArrayBuffer (wasm pthreads) exists only on cross-origin isolated pages.
export const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

// Emscripten's output must run as Node loads it (its pthread workers re-import the same file);
// vitest's module runner would otherwise transform it and the workers never report in.
const nodeNative = [/wasm\/dist\/tandem-decode(-st)?\.mjs$/];

export const chromiumArgs = [
  '--enable-unsafe-webgpu',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export default defineConfig({
  server: { headers: isolation },
  preview: { headers: isolation },
  // The decode module uses top-level await, so its pthread workers must be ES modules.
  worker: { format: 'es' },
  // Packages Tandem import()s only when used (the Parquet reader) are pre-bundled at start: found on
  // first use, Vite would reload the page mid-test.
  optimizeDeps: { exclude: ['webgpu'], include: ['hyparquet', 'hyparquet-compressors', 'hyparquet-writer', '@huggingface/tokenizers'] },
  build: { target: 'es2022' },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          server: { deps: { external: nodeNative } },
        },
      },
      {
        extends: true,
        test: {
          name: 'node-gpu',
          include: ['test/node-gpu/**/*.test.ts'],
          environment: 'node',
          server: { deps: { external: nodeNative } },
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Tandem from its npm tarball in throwaway projects (Node, Deno, a Vite app, a plain page).
        test: {
          name: 'consumer',
          include: ['test/consumer/**/*.test.ts'],
          environment: 'node',
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        // Playwright drives the demo page (demo/) served by Vite on 127.0.0.1; tests in Node.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          // 127.0.0.1 servers for the page, relayed to handlers in the page (test/browser-setup/serve.ts).
          globalSetup: ['test/browser-setup/relay.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: { executablePath: '/usr/bin/chromium', args: chromiumArgs } }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
