import { expect, it } from 'vitest';
import { gpuBytesEqualDecodedBytes } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  it(`decoded batches arrive byte-exact on the GPU (${method}, ring of 2 reused)`, async () => {
    expect(await gpuBytesEqualDecodedBytes(method)).toEqual({ batches: 5, images: 21 });
  });
}
