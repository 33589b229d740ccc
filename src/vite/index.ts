// `tandem/vite`: what a Vite app needs to run Tandem, as one plugin.
//   - Cross-origin isolation (COOP/COEP) for the dev server and `vite preview`, so that the
//     decode pool gets SharedArrayBuffer and runs pthreads in one memory. A page served without
//     these headers still works: DecodePool falls back to one wasm instance per worker.
//   - ES-module workers: the decode module uses top-level await, in its pthread workers too.
//   - Tandem kept out of dependency pre-bundling: pre-bundling would move its modules away from
//     the wasm files they locate through import.meta.url.
//   - The Parquet reader and writer Tandem imports only on use pre-bundled from the start: an
//     excluded package's dependencies are otherwise found on first use, and Vite then re-optimises
//     and reloads the page in the middle of the user's run.
// Types only from Vite: the package has no runtime dependency on it.
import type { Plugin } from 'vite';

export interface TandemViteOptions {
  /** Send COOP/COEP from the dev and preview servers (default true). */
  crossOriginIsolation?: boolean;
}

export const CROSS_ORIGIN_ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/** Tandem's own dependencies that it imports only on use (`tandem/parquet`). */
const ON_USE_DEPENDENCIES = ['hyparquet', 'hyparquet-compressors', 'hyparquet-writer'];

export function tandem(options: TandemViteOptions = {}): Plugin {
  const headers = options.crossOriginIsolation === false ? {} : { ...CROSS_ORIGIN_ISOLATION_HEADERS };
  return {
    name: 'tandem',
    config() {
      return {
        server: { headers },
        preview: { headers },
        worker: { format: 'es' },
        optimizeDeps: { exclude: ['tandem'], include: ON_USE_DEPENDENCIES.map((name) => `tandem > ${name}`) },
      };
    },
  };
}

export default tandem;
