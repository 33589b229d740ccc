// Deno tier: ONNX Runtime Web with Tandem's feeder. The wasm execution provider on feeder tensors
// equals hand-built tensors; so does the WebGPU provider, through the package's `webgpu` entry
// (Deno resolves the default entry to a build without WebGPU: "[webgpu] backend not found").
import './limits.ts';
import * as ortWebgpu from 'onnxruntime-web/webgpu';
import { onnxScenarios } from '../shared/onnx-scenarios.ts';

for (const [title, body] of Object.entries(onnxScenarios(ortWebgpu))) Deno.test(title, body);
