// timm-layout weights, runtime-neutral (each throws on failure): Tandem's ViT against a PyTorch
// model built with timm's names, layers and defaults (scripts/make-timm-reference.py: seeded
// weights of vit_tiny_patch16_224's shape, two images, float64 logits), the file's round trip,
// a new head for fine-tuning that then learns, and a typed error for every kind of broken file.
import { initParams, paramLayout, presets, type ViTConfig } from '../../src/vit/config.ts';
import { ViTTrainer } from '../../src/vit/model.ts';
import { ReferenceViT } from '../../src/vit/reference.ts';
import { readSafetensors, WeightsError, writeSafetensors, type NamedTensor } from '../../src/vit/safetensors.ts';
import { loadTimmWeights, saveTimmWeights } from '../../src/vit/timm.ts';
import { check } from './assert.ts';
import { upload } from './vit-helpers.ts';
import { trainSynthetic } from './vit-scenarios.ts';

/** Loads a file made by scripts/make-fixtures.sh (test/fixtures/generated) by name. */
export type ReadFixture = (name: string) => Promise<Uint8Array>;

export const TIMM_FILES = {
  weights: 'timm-vit-tiny.safetensors',
  input: 'timm-vit-tiny.input.f32',
  logits: 'timm-vit-tiny.logits.f64',
} as const;

/** The largest |logit difference| allowed: f64 reference, and f32 on the GPU (logits are of order 1). */
export const TIMM_CPU_TOLERANCE = 2e-6; // measured 2.2e-7: erf's approximation (1.5e-7) through 12 blocks
export const TIMM_GPU_TOLERANCE = 5e-5; // measured 2.3e-6 on lavapipe; other GPUs round exp() differently

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  check(a.length === b.length, `lengths ${a.length} and ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

function floats(bytes: Uint8Array, kind: 'f32' | 'f64'): Float32Array | Float64Array {
  const copy = bytes.slice();
  return kind === 'f32' ? new Float32Array(copy.buffer) : new Float64Array(copy.buffer);
}

/**
 * The PyTorch model's weights load into vit_tiny_patch16_224's config, and the logits of the CPU
 * reference (unless `reference` is false) and, given a device, of the GPU trainer match PyTorch's.
 * Returns the largest differences.
 */
export async function timmLogitsMatchPytorch(
  read: ReadFixture,
  device?: GPUDevice,
  reference = true,
): Promise<{ cpu: number | undefined; gpu: number | undefined }> {
  const [file, input, expected] = await Promise.all([read(TIMM_FILES.weights), read(TIMM_FILES.input), read(TIMM_FILES.logits)]);
  const { config, params, headReplaced } = loadTimmWeights(file);
  check(!headReplaced, 'the file has a 1000-class head');
  check(JSON.stringify(config) === JSON.stringify(presets.vitTiny16), `config ${JSON.stringify(config)}`);
  const images = floats(input, 'f32');
  const want = floats(expected, 'f64');
  const B = 2;
  let cpu: number | undefined;
  if (reference) {
    const cpuLogits = new ReferenceViT(config).forward(Float64Array.from(params), images, [0, 0], B).logits;
    cpu = maxAbsDiff(cpuLogits, want);
    check(cpu <= TIMM_CPU_TOLERANCE, `CPU reference logits differ from PyTorch's by ${cpu}`);
  }
  let spread = 0;
  for (const v of want) spread = Math.max(spread, Math.abs(v));
  check(spread > 0.5, `the reference logits are too small to tell anything (${spread})`);
  if (!device) return { cpu, gpu: undefined };
  const trainer = await ViTTrainer.create(device, { config, batchSize: B, params });
  const imagesBuffer = upload(device, images);
  try {
    const gpuLogits = await trainer.predict(imagesBuffer);
    const gpu = maxAbsDiff(gpuLogits, want);
    check(gpu <= TIMM_GPU_TOLERANCE, `GPU logits differ from PyTorch's by ${gpu}`);
    return { cpu, gpu };
  } finally {
    imagesBuffer.destroy();
    trainer.destroy();
  }
}

/** Loading then saving gives back every tensor of the PyTorch file, bit for bit, under the same names. */
export async function timmRoundTrip(read: ReadFixture): Promise<number> {
  const file = await read(TIMM_FILES.weights);
  const original = readSafetensors(file).tensors;
  const { config, params } = loadTimmWeights(file);
  const again = readSafetensors(saveTimmWeights(config, params));
  check(again.metadata.heads === '3' && again.metadata.gelu === 'erf', `metadata ${JSON.stringify(again.metadata)}`);
  check([...again.tensors.keys()].sort().join() === [...original.keys()].sort().join(), 'the same tensor names');
  for (const [name, t] of original) {
    const back = again.tensors.get(name)!;
    check(back.shape.join() === t.shape.join(), `${name}: shape [${back.shape}] after the round trip, was [${t.shape}]`);
    const a = new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length);
    const b = new Uint32Array(back.data.buffer, back.data.byteOffset, back.data.length);
    for (let i = 0; i < a.length; i++)
      if (a[i] !== b[i]) check(false, `${name}[${i}]: ${back.data[i]} after the round trip, was ${t.data[i]}`);
  }
  return original.size;
}

/** A small model's weights written in timm's layout (what `tandem train --save-weights` writes). */
export function smallTimmFile(config: ViTConfig = { ...presets.tiny, gelu: 'erf', layerNormEps: 1e-6 }, seed = 7): Uint8Array {
  return saveTimmWeights(config, initParams(config, seed, 0.2));
}

/** A new head for other classes: the body is the file's, the head is the seeded head of a new model. */
export function timmHeadReplaced(): void {
  const base = { ...presets.tiny, gelu: 'erf' as const, layerNormEps: 1e-6 };
  const file = smallTimmFile(base);
  const same = loadTimmWeights(file);
  check(!same.headReplaced && same.config.classes === 10, 'the file loads with its own 10-class head');
  const other = loadTimmWeights(file, { classes: 3, seed: 5 });
  check(other.headReplaced && other.config.classes === 3, 'a 3-class head replaces it');
  const fresh = initParams(other.config, 5);
  const a = paramLayout(same.config);
  const b = paramLayout(other.config);
  for (const t of b.tensors) {
    const got = other.params.subarray(t.offset, t.offset + t.size);
    const want = t.name.startsWith('head.')
      ? fresh.subarray(t.offset, t.offset + t.size)
      : same.params.subarray(a.byName.get(t.name)!.offset, a.byName.get(t.name)!.offset + t.size);
    for (let i = 0; i < t.size; i++) check(got[i] === want[i], `${t.name}[${i}]: ${got[i]}, expected ${want[i]}`);
  }
}

/** Fine-tuning from loaded weights with a replaced head: the loss on separable data falls. */
export async function fineTuneFromTimmWeights(device: GPUDevice, steps = 40): Promise<number[]> {
  const file = smallTimmFile();
  const { config, params } = loadTimmWeights(file, { classes: 4, seed: 2 });
  const losses = (await trainSynthetic(device, config, steps, false, 10, params)).losses;
  check(losses.at(-1)! < 0.7 * losses[0]!, `the loss did not fall: ${losses.map((l) => l.toFixed(3)).join(' ')}`);
  return losses;
}

function expectWeightsError(what: string, code: WeightsError['code'], mentions: string, make: () => unknown): void {
  try {
    make();
  } catch (error) {
    check(error instanceof WeightsError, `${what}: ${String(error)} is not a WeightsError`);
    check(error.code === code, `${what}: code ${error.code}, expected ${code} (${error.message})`);
    check(error.message.includes(mentions), `${what}: "${error.message}" does not name ${mentions}`);
    return;
  }
  throw new Error(`${what}: loaded without an error`);
}

/** Every kind of broken file gets a WeightsError whose code says what and whose message names the tensor. */
export function brokenTimmFilesAreRefused(): number {
  const good = smallTimmFile();
  const file = readSafetensors(good);
  const edited = (edit: (m: Map<string, NamedTensor>) => void) => {
    const tensors = new Map(file.tensors);
    edit(tensors);
    return writeSafetensors(tensors, file.metadata);
  };
  const headerLength = Number(new DataView(good.buffer, good.byteOffset).getBigUint64(0, true));
  const withHeader = (json: string, bodyBytes = 0) => {
    const text = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + text.length + bodyBytes);
    new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
    out.set(text, 8);
    return out;
  };
  const cases: [string, WeightsError['code'], string, () => unknown][] = [
    ['four bytes', 'truncated', '8-byte', () => loadTimmWeights(good.subarray(0, 4))],
    ['header cut off', 'truncated', 'header', () => loadTimmWeights(good.subarray(0, 8 + headerLength - 10))],
    ['data cut off', 'truncated', 'head.bias', () => loadTimmWeights(good.subarray(0, good.length - 8))],
    ['header not JSON', 'malformed', 'JSON', () => loadTimmWeights(withHeader('{"a": [1, 2'))],
    ['header an array', 'malformed', 'object', () => loadTimmWeights(withHeader('[1, 2]'))],
    ['huge header length', 'malformed', 'header', () => loadTimmWeights(withHeader('{}').map((v, i) => (i === 7 ? 0x7f : v)))],
    [
      'offsets that disagree with the shape',
      'malformed',
      'norm.bias',
      () => loadTimmWeights(withHeader('{"norm.bias": {"dtype": "F32", "shape": [64], "data_offsets": [0, 8]}}')),
    ],
    [
      'overlapping tensors',
      'malformed',
      'overlap',
      () =>
        readSafetensors(
          withHeader(
            '{"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "c": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
            8,
          ),
        ),
    ],
    [
      'an int8 tensor',
      'dtype',
      'cls_token',
      () => loadTimmWeights(withHeader('{"cls_token": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}}')),
    ],
    [
      'a missing block tensor',
      'missing-tensor',
      'blocks.1.attn.proj.weight',
      () => loadTimmWeights(edited((m) => m.delete('blocks.1.attn.proj.weight'))),
    ],
    [
      'no patch embedding',
      'missing-tensor',
      'patch_embed.proj.weight',
      () => loadTimmWeights(edited((m) => m.delete('patch_embed.proj.weight'))),
    ],
    [
      'no head and no classes',
      'missing-tensor',
      'head.weight',
      () => loadTimmWeights(edited((m) => (m.delete('head.weight'), m.delete('head.bias')))),
    ],
    [
      'layer scale (a variant Tandem does not build)',
      'unexpected-tensor',
      'blocks.0.ls1.gamma',
      () => loadTimmWeights(edited((m) => m.set('blocks.0.ls1.gamma', { shape: [64], data: new Float32Array(64) }))),
    ],
    [
      'a wrongly shaped qkv',
      'shape',
      'blocks.0.attn.qkv.weight',
      () => loadTimmWeights(edited((m) => m.set('blocks.0.attn.qkv.weight', { shape: [192, 63], data: new Float32Array(192 * 63) }))),
    ],
    [
      'positions that are not a square grid',
      'shape',
      'pos_embed',
      () => loadTimmWeights(edited((m) => m.set('pos_embed', { shape: [1, 20, 64], data: new Float32Array(20 * 64) }))),
    ],
    ['heads that do not divide the width', 'shape', 'heads', () => loadTimmWeights(good, { heads: 5 })],
  ];
  for (const [what, code, mentions, make] of cases) expectWeightsError(what, code, mentions, make);
  // A header-less file without a head still loads when the classes are given.
  const headless = loadTimmWeights(
    edited((m) => (m.delete('head.weight'), m.delete('head.bias'))),
    { classes: 2 },
  );
  check(headless.headReplaced && headless.config.classes === 2, 'a file without a head takes a new one');
  return cases.length;
}

/** F16, BF16 and F64 tensors read as the float32 values they hold. */
export function safetensorsDtypesConvert(): void {
  const body = new Uint8Array(2 * 3 + 2 * 3 + 8 * 2);
  const view = new DataView(body.buffer);
  for (const [i, h] of [0x3c00, 0xc000, 0x0001].entries()) view.setUint16(i * 2, h, true); // 1, -2, smallest subnormal
  for (const [i, h] of [0x3f80, 0x4049, 0xff80].entries()) view.setUint16(6 + i * 2, h, true); // 1, 3.140625, -inf
  for (const [i, v] of [0.1, -1e300].entries()) view.setFloat64(12 + i * 8, v, true);
  const header = new TextEncoder().encode(
    JSON.stringify({
      h: { dtype: 'F16', shape: [3], data_offsets: [0, 6] },
      b: { dtype: 'BF16', shape: [3], data_offsets: [6, 12] },
      d: { dtype: 'F64', shape: [2], data_offsets: [12, 28] },
    }),
  );
  const bytes = new Uint8Array(8 + header.length + body.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
  bytes.set(header, 8);
  bytes.set(body, 8 + header.length);
  const t = readSafetensors(bytes).tensors;
  const same = (name: string, want: number[]) =>
    check([...t.get(name)!.data].join() === want.map((v) => Math.fround(v)).join(), `${name}: ${[...t.get(name)!.data]}, expected ${want}`);
  same('h', [1, -2, 2 ** -24]);
  same('b', [1, 3.140625, -Infinity]);
  same('d', [0.1, -Infinity]);
}
