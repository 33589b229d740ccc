import * as ort from 'onnxruntime-web';
import { it } from 'vitest';
import { onnxScenarios } from '../shared/onnx-scenarios.ts';

for (const [title, body] of Object.entries(onnxScenarios(ort))) it(title, { timeout: 300_000 }, body);
