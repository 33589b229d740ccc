import { it } from 'vitest';
import { loadFixture } from '../shared/node-fixtures.ts';
import { tfjsScenarios, videoLoaderGivesTensors } from '../shared/tfjs-scenarios.ts';

for (const [name, scenario] of Object.entries(tfjsScenarios)) it(name, { timeout: 120_000 }, scenario);
it(
  'tfjs: videoLoader(to: tf) gives clip tensors equal to its CPU clips normalised by hand, disposed by release()',
  { timeout: 120_000 },
  () => videoLoaderGivesTensors(loadFixture),
);
