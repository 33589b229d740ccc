import './limits.ts';
import { gpuBytesEqualDecodedBytes, ringHeldByConsumer } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  Deno.test(`decoded batches arrive byte-exact on the GPU (${method}, ring of 2 reused)`, async () => {
    const r = await gpuBytesEqualDecodedBytes(method);
    if (r.batches !== 5 || r.images !== 21) throw new Error(`unexpected ${JSON.stringify(r)}`);
  });
  Deno.test(`the consumer holds both ring slots and releases them in random order; every batch reads back byte-exact (${method})`, async () => {
    const r = await ringHeldByConsumer(method);
    if (r.uploads !== 24 || r.waited <= 4) throw new Error(`unexpected ${JSON.stringify(r)}`);
  });
}
