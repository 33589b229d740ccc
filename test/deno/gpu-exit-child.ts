// Child of exit.test.ts (not a test file of the tier): one WebGPU dispatch through Tandem, checked
// against the CPU, then exit. Run as `deno test -A --no-check gpu-exit-child.ts`.
import { normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

Deno.test('a WGSL dispatch through Tandem, then exit', async () => {
  await normalizeMatchesCpu();
});
