import { it } from 'vitest';
import { wasmSessionMatchesHandBuiltTensors, webgpuSessionMatchesHandBuiltTensors } from '../shared/onnx-scenarios.ts';

it('onnx: the wasm session on feeder tensors equals hand-built tensors', { timeout: 300_000 }, wasmSessionMatchesHandBuiltTensors);
it('onnx: the WebGPU session on Tandem GPU inputs matches hand-built tensors, no readback', { timeout: 300_000 }, () =>
  webgpuSessionMatchesHandBuiltTensors(),
);
