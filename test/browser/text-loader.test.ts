// Headless Chromium (WebGPU): textLoader() packs as the reference does, resumes exactly, and its
// i32 GPU batches equal the CPU ones.
import { it } from 'vitest';
import { deviceBatchesEqualCpu, packsLikeTheReference, resumesExactly, tokenizesInWorkers } from '../shared/text-loader-scenarios.ts';

it('concat packs { texts } exactly as the reference does', packsLikeTheReference);
it('best-fit: resumed from state() or after a break, the same batches', () => resumesExactly('best-fit'));
it('textLoader(to: gpu): inputs, labels, docIds and positions read back equal the CPU batches', deviceBatchesEqualCpu);
it('@huggingface/tokenizers in two workers gives the corpus ids, BOS and EOS added, in order', tokenizesInWorkers);
