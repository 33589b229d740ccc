import { gpuBytesEqualDecodedBytes } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  Deno.test(`decoded batches arrive byte-exact on the GPU (${method}, ring of 2 reused)`, async () => {
    const r = await gpuBytesEqualDecodedBytes(method);
    if (r.batches !== 5 || r.images !== 21) throw new Error(`unexpected ${JSON.stringify(r)}`);
  });
}
