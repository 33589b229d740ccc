// Deno tier: the wasm decode pool, with the same scenario bodies as Node and Chromium.
import './limits.ts';
import {
  brokenInputsGetTypedErrors,
  exifOrientationApplied,
  formatsAndModes,
  jpegDecodesToPattern,
  oversubscribedPoolNeverHangs,
  pngDecodesExactly,
  poolBufferHandle,
  withPool,
} from '../shared/decode-scenarios.ts';
import { fallbackBatchesStayDense, fallbackMatchesThreads } from '../shared/fallback-scenarios.ts';

const opts = { sanitizeOps: true, sanitizeResources: true };

Deno.test({
  name: 'decodes a generated JPEG on a pthread to the expected pixels',
  ...opts,
  fn: () => withPool(2, jpegDecodesToPattern).then(() => {}),
});
Deno.test({ name: 'applies every EXIF orientation', ...opts, fn: () => withPool(2, exifOrientationApplied) });
Deno.test({ name: 'decodes BMP, palette and 16-bit PNG, gray JPEG; crop and contain', ...opts, fn: () => withPool(2, formatsAndModes) });
Deno.test({ name: 'decodes PNG losslessly', ...opts, fn: () => withPool(2, pngDecodesExactly) });
Deno.test({
  name: 'allocate gives a handle that survives memory growth and refuses misuse',
  ...opts,
  fn: () => withPool(2, poolBufferHandle),
});
Deno.test({
  name: 'broken input gets typed errors and the pool stays healthy',
  ...opts,
  fn: () => withPool(2, brokenInputsGetTypedErrors),
});
Deno.test({
  name: 'oversubscribed pool never hangs and timers keep firing',
  ...opts,
  fn: async () => {
    const { ticks } = await withPool(2, (pool) => oversubscribedPoolNeverHangs(pool));
    if (ticks === 0) throw new Error('the event loop was blocked during decoding');
  },
});

// The fallback pool (single-threaded instances in workers), forced here; pages without
// cross-origin isolation get it automatically.
Deno.test({
  name: 'fallback pool: same bytes as the pthreads pool',
  ...opts,
  fn: () => withPool(2, (threads) => withPool(2, (workers) => fallbackMatchesThreads(threads, workers), 'workers')),
});
Deno.test({
  name: 'fallback pool: JPEG pixels, EXIF, formats',
  ...opts,
  fn: () =>
    withPool(
      2,
      async (pool) => {
        await jpegDecodesToPattern(pool);
        await exifOrientationApplied(pool);
        await formatsAndModes(pool);
      },
      'workers',
    ),
});
Deno.test({
  name: 'fallback pool: typed errors, oversubscription, dense batches',
  ...opts,
  fn: () =>
    withPool(
      2,
      async (pool) => {
        await brokenInputsGetTypedErrors(pool);
        await oversubscribedPoolNeverHangs(pool);
        await fallbackBatchesStayDense(pool);
      },
      'workers',
    ),
});
