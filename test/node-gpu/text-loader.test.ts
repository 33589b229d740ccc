// dawn on lavapipe: textLoader() into i32 GPU buffers through the upload ring, against the CPU batches.
import { it } from 'vitest';
import { deviceBatchesEqualCpu } from '../shared/text-loader-scenarios.ts';

it('textLoader(to: gpu): inputs, labels, docIds and positions read back equal the CPU batches', deviceBatchesEqualCpu);
