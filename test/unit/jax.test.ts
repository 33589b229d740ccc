// tandem/jax on jax-js's CPU backends (Node has no navigator.gpu, so no WebGPU backend here; the
// GPU path runs in test/node-gpu/jax.test.ts and test/browser/jax.test.ts).
import * as jax from '@jax-js/jax';
import { beforeAll, it } from 'vitest';
import { badInputsAreTypedErrors, emptyBatchGivesEmptyArrays, hostBatchIntoJax, textLoaderIntoJax } from '../shared/jax-scenarios.ts';

// A bare jax.init() reads navigator.gpu and throws on Node 20, where there is no navigator.
beforeAll(() => jax.init('wasm', 'cpu'));

for (const device of ['wasm', 'cpu'] as const) {
  it(`a CPU text batch becomes int32 jax-js arrays on '${device}', equal to the batch and released`, () => hostBatchIntoJax(jax, device));
  it(`an empty batch gives [0, seqLen] arrays on '${device}'`, () => emptyBatchGivesEmptyArrays(jax, device));
}
it('bad batches, bad options and a GPU batch without a WebGPU backend are typed errors', () => badInputsAreTypedErrors(jax, false));
it("textLoader()'s CPU batches go into jax-js, equal to its rows", () => textLoaderIntoJax(jax, 'wasm', false));
