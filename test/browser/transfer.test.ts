import { expect, it } from 'vitest';
import { gpuBytesEqualDecodedBytes, ringHeldByConsumer } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  it(`decoded batches arrive byte-exact on the GPU (${method}, ring of 2 reused)`, async () => {
    expect(await gpuBytesEqualDecodedBytes(method)).toEqual({ batches: 5, images: 21 });
  });
  it(`the consumer holds both ring slots and releases them in random order; every batch reads back byte-exact (${method})`, async () => {
    const r = await ringHeldByConsumer(method);
    expect(r.uploads).toBe(24);
    expect(r.waited).toBeGreaterThan(4);
  });
}
