// TensorFlow.js's WebGPU backend built on Tandem's device in Deno, fed Tandem batches.
import './limits.ts';
import { tfjsScenarios, videoLoaderGivesTensors } from '../shared/tfjs-scenarios.ts';

for (const [name, fn] of Object.entries(tfjsScenarios)) Deno.test(name, fn);
Deno.test('tfjs: videoLoader(to: tf) gives clip tensors equal to its CPU clips normalised by hand, disposed by release()', () =>
  videoLoaderGivesTensors((name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url))));
