import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import {
  brokenTimmFilesAreRefused,
  safetensorsDtypesConvert,
  timmHeadReplaced,
  timmLogitsMatchPytorch,
  timmRoundTrip,
  type ReadFixture,
} from '../shared/timm-scenarios.ts';

const read: ReadFixture = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

it("timm-layout weights of vit_tiny_patch16_224's shape give PyTorch's logits on the CPU reference", async () => {
  const { cpu } = await timmLogitsMatchPytorch(read);
  console.log(`[timm] CPU reference logits vs PyTorch float64: max |diff| ${cpu!.toExponential(2)}`);
}, 120_000);

it('loading then saving timm weights gives back every tensor bit for bit', async () => {
  expect(await timmRoundTrip(read)).toBe(152);
});

it('a new head for other classes keeps the body and draws the seeded head', () => {
  timmHeadReplaced();
});

it('broken or mismatched safetensors get a WeightsError naming the tensor or shape', () => {
  expect(brokenTimmFilesAreRefused()).toBe(16);
});

it('F16, BF16 and F64 tensors read as float32', () => {
  safetensorsDtypesConvert();
});
