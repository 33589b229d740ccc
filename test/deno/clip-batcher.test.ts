// Deno tier: VideoClipBatcher on the wasm pool, the same scenario bodies as Node.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import { clipBatcherScenarios } from '../shared/clip-batcher-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));

for (const [title, body] of Object.entries(clipBatcherScenarios)) {
  Deno.test({ name: `VideoClipBatcher: ${title}`, fn: () => withPool(2, (p) => body(p, load)).then(() => {}) });
}
