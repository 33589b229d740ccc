// The CPU normalisation the feeders run, and the tests' own, against floats fixed in the test.
import { expect, it } from 'vitest';
import { normalizeReference } from '../../src/gpu/internal.ts';
import { matchesFixedNormalization, normalizeByHand } from '../shared/normalize-by-hand.ts';

it('normalizeReference (the CPU feeders) gives the fixed vectors, ImageNet and custom, NCHW and NHWC', () => {
  expect(matchesFixedNormalization((bytes, shape, options) => normalizeReference(bytes, shape, options), 'normalizeReference')).toBe(36);
});
it("the tests' own normalisation gives the same fixed vectors", () => {
  expect(matchesFixedNormalization(normalizeByHand, 'normalizeByHand')).toBe(36);
});
