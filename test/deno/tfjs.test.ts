// TensorFlow.js's WebGPU backend built on Tandem's device in Deno, fed Tandem batches.
import './limits.ts';
import { tfjsScenarios } from '../shared/tfjs-scenarios.ts';

for (const [name, fn] of Object.entries(tfjsScenarios)) Deno.test(name, fn);
