// Deno tier: ONNX Runtime Web with Tandem's feeder. The wasm execution provider on feeder tensors
// equals hand-built tensors; so does the WebGPU provider, through the package's `webgpu` entry
// (Deno resolves the default entry to a build without WebGPU: "[webgpu] backend not found").
import './limits.ts';
import * as ortWebgpu from 'onnxruntime-web/webgpu';
import { wasmSessionMatchesHandBuiltTensors, webgpuSessionMatchesHandBuiltTensors } from '../shared/onnx-scenarios.ts';

Deno.test('onnx: the wasm session on feeder tensors equals hand-built tensors', wasmSessionMatchesHandBuiltTensors);

Deno.test('onnx: the WebGPU session on its own device, fed GPU buffers by Tandem, matches hand-built tensors with no readback', () =>
  webgpuSessionMatchesHandBuiltTensors(ortWebgpu));
