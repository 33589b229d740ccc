// webpack 5, no plugins: `new Worker(new URL(…, import.meta.url))` and `new URL('x.wasm', import.meta.url)`
// in Tandem's modules become a worker chunk and an asset by themselves. Serve dist/ (with COOP/COEP
// headers for the pthreads mode; without them the pool falls back to workers).
import { fileURLToPath } from 'node:url';

export default {
  mode: 'production',
  entry: './main.js',
  output: { path: fileURLToPath(new URL('dist', import.meta.url)), filename: 'main.js', clean: true },
  // Tandem's wasm and the photos it is given are large; the app is not a size-budgeted bundle.
  performance: { hints: false },
};
