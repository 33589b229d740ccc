import { it } from 'vitest';
import { wasmSessionMatchesHandBuiltTensors } from '../shared/onnx-scenarios.ts';

// ONNX Runtime Web's WebGPU execution provider needs a browser (Chromium tier); its wasm one runs here.
it('onnx: the wasm session on feeder tensors equals hand-built tensors', { timeout: 120_000 }, wasmSessionMatchesHandBuiltTensors);
