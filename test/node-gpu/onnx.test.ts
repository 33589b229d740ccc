import { it } from 'vitest';
import { onnxScenarios } from '../shared/onnx-scenarios.ts';

// ONNX Runtime Web's WebGPU execution provider needs a browser or Deno; its wasm one runs here.
for (const [title, body] of Object.entries(onnxScenarios(undefined))) it(title, { timeout: 120_000 }, body);
