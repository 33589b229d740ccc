// The pre-LN transformer blocks as dispatches, shared by the ViT's and the GPT's graphs: each block
// is x + attn(LN1(x)) then + MLP(LN2(·)), its tensors named `b{l}.…` in the flat parameters. The
// forward list runs stream 0 to stream `depth`; the backward list takes dL/d(last stream) in `dx`
// and leaves dL/d(stream 0) there, every block's gradients written once into `grads`.
import { invariant } from '../errors/index.ts';
import type { ParamLayout } from './config.ts';
import type { Dispatch, Kernels, LayerNormSpec } from './kernels.ts';

/** The blocks' shape: B sequences of T tokens of width D, H heads, the MLP's hidden width. */
export interface BlockDims {
  depth: number;
  B: number;
  T: number;
  D: number;
  H: number;
  hidden: number;
}

export interface BlockStackSpec extends BlockDims {
  params: GPUBuffer;
  /** A tensor's element offset in `params` (and `grads`). */
  offset: (name: string) => number;
  /** A new buffer of n f32, owned by the graph. */
  buffer: (n: number) => GPUBuffer;
  /** The GPT's document ids: attention causal within documents (the Kernels must be a decoder's). */
  docIds?: GPUBuffer;
}

export interface BlockStack {
  /** The residual streams: [0] the blocks' input (the embedding writes it), [depth] their output. */
  streams: GPUBuffer[];
  forward: Dispatch[];
  /** Empty without `grads`. */
  backward: Dispatch[];
}

/** The layer norm of `prefix` (`.g`, `.b`) over `rows` rows of D, read every `xStride` elements. */
export function layerNormOf(s: BlockStackSpec, prefix: string, rows: number, xStride = s.D): LayerNormSpec {
  return { rows, D: s.D, xStride, yStride: s.D, gOff: s.offset(`${prefix}.g`), bOff: s.offset(`${prefix}.b`) };
}

export function blockStack(k: Kernels, s: BlockStackSpec, training?: { grads: GPUBuffer; dx: GPUBuffer }): BlockStack {
  const { B, T, D, H, hidden: Mh, params, buffer: buf } = s;
  const R = B * T;
  const streams = Array.from({ length: s.depth + 1 }, () => buf(R * D));
  const blocks = Array.from({ length: s.depth }, () => ({
    h1: buf(R * D),
    st1: buf(2 * R),
    qkv: buf(R * 3 * D),
    probs: buf(B * H * T * T),
    o: buf(R * D),
    xmid: buf(R * D),
    h2: buf(R * D),
    st2: buf(2 * R),
    u: buf(R * Mh),
    a: buf(R * Mh),
  }));
  const attn = { B, H, T, hd: D / H };
  const at = <V>(list: V[], l: number): V => {
    const v = list[l];
    invariant(v !== undefined, `transformer: no block ${l}`);
    return v;
  };
  const forward: Dispatch[] = [];
  for (let l = 0; l < s.depth; l++) {
    const [b, x] = [at(blocks, l), at(streams, l)];
    const p = (n: string) => s.offset(`b${l}.${n}`);
    const bias = (n: string) => ({ buffer: params, offset: p(n) });
    forward.push(
      k.layerNorm(layerNormOf(s, `b${l}.ln1`, R), x, params, b.h1, b.st1),
      k.matmul({ a: b.h1, b: params, c: b.qkv, M: R, N: 3 * D, K: D, offB: p('qkv.w'), bias: bias('qkv.b') }),
      k.attention(attn, b.qkv, b.probs, b.o, s.docIds),
      k.matmul({ a: b.o, b: params, c: b.xmid, M: R, N: D, K: D, offB: p('proj.w'), bias: bias('proj.b'), residual: x }),
      k.layerNorm(layerNormOf(s, `b${l}.ln2`, R), b.xmid, params, b.h2, b.st2),
      k.matmul({ a: b.h2, b: params, c: b.u, M: R, N: Mh, K: D, offB: p('fc1.w'), bias: bias('fc1.b') }),
      k.gelu(b.u, b.a, R * Mh),
      k.matmul({ a: b.a, b: params, c: at(streams, l + 1), M: R, N: D, K: Mh, offB: p('fc2.w'), bias: bias('fc2.b'), residual: b.xmid }),
    );
  }
  const backward: Dispatch[] = [];
  if (!training) return { streams, forward, backward };
  const { grads, dx } = training;
  const [dh, dqkv, dP, dO, du] = [buf(R * D), buf(R * 3 * D), buf(B * H * T * T), buf(R * D), buf(R * Mh)];
  for (let l = s.depth - 1; l >= 0; l--) {
    const [b, x] = [at(blocks, l), at(streams, l)];
    const p = (n: string) => s.offset(`b${l}.${n}`);
    const ln1 = layerNormOf(s, `b${l}.ln1`, R);
    const ln2 = layerNormOf(s, `b${l}.ln2`, R);
    backward.push(
      // MLP branch: x_out = x_mid + gelu(LN2(x_mid)·W1 + b1)·W2 + b2
      k.matmul({ a: b.a, b: dx, c: grads, M: Mh, N: D, K: R, transA: true, offC: p('fc2.w') }),
      k.colSum(dx, R, D, grads, p('fc2.b')),
      k.matmul({ a: dx, b: params, c: du, M: R, N: Mh, K: D, transB: true, offB: p('fc2.w') }),
      k.geluBackward(b.u, du, R * Mh),
      k.matmul({ a: b.h2, b: du, c: grads, M: D, N: Mh, K: R, transA: true, offC: p('fc1.w') }),
      k.colSum(du, R, Mh, grads, p('fc1.b')),
      k.matmul({ a: du, b: params, c: dh, M: R, N: D, K: Mh, transB: true, offB: p('fc1.w') }),
      k.layerNormParams(ln2, dh, b.xmid, b.st2, grads),
      k.layerNormBackward(ln2, dh, b.xmid, params, b.st2, dx, true),
      // Attention branch: x_mid = x_in + attn(LN1(x_in))·Wo + bo
      k.matmul({ a: b.o, b: dx, c: grads, M: D, N: D, K: R, transA: true, offC: p('proj.w') }),
      k.colSum(dx, R, D, grads, p('proj.b')),
      k.matmul({ a: dx, b: params, c: dO, M: R, N: D, K: D, transB: true, offB: p('proj.w') }),
      ...k.attentionBackward(attn, b.qkv, b.probs, dO, dP, dqkv),
      k.matmul({ a: b.h1, b: dqkv, c: grads, M: D, N: 3 * D, K: R, transA: true, offC: p('qkv.w') }),
      k.colSum(dqkv, R, 3 * D, grads, p('qkv.b')),
      k.matmul({ a: dqkv, b: params, c: dh, M: R, N: D, K: 3 * D, transB: true, offB: p('qkv.w') }),
      k.layerNormParams(ln1, dh, x, b.st1, grads),
      k.layerNormBackward(ln1, dh, x, params, b.st1, dx, true),
    );
  }
  return { streams, forward, backward };
}

const USAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/** A graph's buffers (kept in `buffers`, to free with it) and its tensors' offsets in `layout`. */
export function graphStorage(device: GPUDevice, layout: ParamLayout, model: string) {
  const buffers: GPUBuffer[] = [];
  const buffer = (n: number): GPUBuffer => {
    const b = device.createBuffer({ size: Math.max(16, n * 4), usage: USAGE });
    buffers.push(b);
    return b;
  };
  const offset = (name: string): number => {
    const t = layout.byName.get(name);
    invariant(t, `${model}: no tensor ${name}`);
    return t.offset;
  };
  return { buffers, buffer, offset };
}

/** Every tensor is bound whole: checked before anything is allocated. */
export function checkBindingLimit(device: GPUDevice, model: string, elements: number[]): void {
  const biggest = Math.max(...elements) * 4;
  const limit = device.limits.maxStorageBufferBindingSize;
  if (biggest > limit)
    throw new RangeError(
      `${model}: a ${biggest}-byte tensor exceeds this device's ${limit}-byte storage binding limit (smaller batch or model)`,
    );
}
