import { it } from 'vitest';
import { fetchFixture } from '../shared/browser-fixtures.ts';
import { tfjsScenarios, videoLoaderGivesTensors } from '../shared/tfjs-scenarios.ts';

for (const [name, scenario] of Object.entries(tfjsScenarios)) it(name, { timeout: 300_000 }, scenario);
it(
  'tfjs: videoLoader(to: tf) gives clip tensors equal to its CPU clips normalised by hand, disposed by release()',
  { timeout: 300_000 },
  () => videoLoaderGivesTensors(fetchFixture),
);
