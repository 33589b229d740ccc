// The ViT's training step as a fixed list of dispatches over buffers allocated once for one batch
// size: forward (patches → tokens → blocks → class-token norm → head), backward in reverse with
// every gradient written exactly once into the flat gradient buffer, then the optimizer. Only the
// first dispatch (images) and the loss (labels) depend on per-step buffers; see model.ts.
import { invariant } from '../errors/index.ts';
import { dims, paramLayout, type ViTConfig } from './config.ts';
import type { Dispatch, Kernels, LayerNormSpec } from './kernels.ts';
import type { OptimValues } from './params.ts';

const USAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

export interface StepGraph {
  /** Buffers the trainer reads, clears or checkpoints. */
  params: GPUBuffer;
  grads: GPUBuffer;
  m: GPUBuffer;
  v: GPUBuffer;
  state: GPUBuffer;
  partial: GPUBuffer;
  patches: GPUBuffer;
  logits: GPUBuffer;
  dlogits: GPUBuffer;
  dx: GPUBuffer;
  /** After patchify, up to the logits. */
  forward: Dispatch[];
  /** From dlogits to every parameter gradient; `dx` must be cleared before it runs. */
  backward: Dispatch[];
  buffers: GPUBuffer[];
}

export function buildGraph(device: GPUDevice, k: Kernels, c: ViTConfig, B: number, hyper: OptimValues): StepGraph {
  const d = dims(c);
  const L = paramLayout(c);
  const D = c.width;
  const T = d.tokens;
  const R = B * T;
  const H = c.heads;
  const hd = d.headDim;
  const Mh = d.hidden;
  const NP = B * d.patches;
  const buffers: GPUBuffer[] = [];
  // Checked up front, before anything is allocated: every tensor is bound whole.
  const limit = device.limits.maxStorageBufferBindingSize;
  const biggest = Math.max(L.size, B * H * T * T, R * Mh, R * 3 * D, NP * d.patchDim) * 4;
  if (biggest > limit)
    throw new RangeError(
      `vit: a ${biggest}-byte tensor exceeds this device's ${limit}-byte storage binding limit (smaller batch or model)`,
    );
  const buf = (n: number) => {
    const b = device.createBuffer({ size: Math.max(16, n * 4), usage: USAGE });
    buffers.push(b);
    return b;
  };
  const off = (name: string) => {
    const t = L.byName.get(name);
    invariant(t, `vit: no tensor ${name}`);
    return t.offset;
  };
  const [params, grads, m, v] = [buf(L.size), buf(L.size), buf(L.size), buf(L.size)];
  const state = buf(8);
  const partial = buf(256);
  const patches = buf(NP * d.patchDim);
  const pe = buf(NP * D);
  const xs = Array.from({ length: c.depth + 1 }, () => buf(R * D));
  const blocks = Array.from({ length: c.depth }, () => ({
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
  const [y, stf, logits, dlogits] = [buf(B * D), buf(2 * B), buf(B * c.classes), buf(B * c.classes)];
  const [dx, dh, dqkv, dP, dO, du, dpe] = [
    buf(R * D),
    buf(R * D),
    buf(R * 3 * D),
    buf(B * H * T * T),
    buf(R * D),
    buf(R * Mh),
    buf(NP * D),
  ];

  const ln = (prefix: string, rows: number, xStride: number): LayerNormSpec => ({
    rows,
    D,
    xStride,
    yStride: D,
    gOff: off(`${prefix}.g`),
    bOff: off(`${prefix}.b`),
  });
  // Attention is fused (attention.wgsl): the batched matmul path (Q·Kᵀ, softmax, P·V as strided
  // batches) is tested too, but its 64×64 tiles are mostly padding at T = 17 and cost ~20× more
  // on lavapipe.
  const attn = { B, H, T, hd };

  const forward: Dispatch[] = [
    k.matmul({
      a: patches,
      b: params,
      c: pe,
      M: NP,
      N: D,
      K: d.patchDim,
      offB: off('patch.w'),
      bias: { buffer: params, offset: off('patch.b') },
    }),
    k.tokens(pe, params, xs[0]!, B, T, D, off('cls'), off('pos')),
  ];
  const backward: Dispatch[] = [];
  for (let l = 0; l < c.depth; l++) {
    const s = blocks[l]!;
    const x = xs[l]!;
    const p = (n: string) => off(`b${l}.${n}`);
    const bias = (n: string) => ({ buffer: params, offset: p(n) });
    const ln1 = ln(`b${l}.ln1`, R, D);
    const ln2 = ln(`b${l}.ln2`, R, D);
    forward.push(
      k.layerNorm(ln1, x, params, s.h1, s.st1),
      k.matmul({ a: s.h1, b: params, c: s.qkv, M: R, N: 3 * D, K: D, offB: p('qkv.w'), bias: bias('qkv.b') }),
      k.attention(attn, s.qkv, s.probs, s.o),
      k.matmul({ a: s.o, b: params, c: s.xmid, M: R, N: D, K: D, offB: p('proj.w'), bias: bias('proj.b'), residual: x }),
      k.layerNorm(ln2, s.xmid, params, s.h2, s.st2),
      k.matmul({ a: s.h2, b: params, c: s.u, M: R, N: Mh, K: D, offB: p('fc1.w'), bias: bias('fc1.b') }),
      k.gelu(s.u, s.a, R * Mh),
      k.matmul({ a: s.a, b: params, c: xs[l + 1]!, M: R, N: D, K: Mh, offB: p('fc2.w'), bias: bias('fc2.b'), residual: s.xmid }),
    );
    // Recorded in reverse below, so each block's backward list is built front to back here.
    backward.unshift(
      k.matmul({ a: s.a, b: dx, c: grads, M: Mh, N: D, K: R, transA: true, offC: p('fc2.w') }),
      k.colSum(dx, R, D, grads, p('fc2.b')),
      k.matmul({ a: dx, b: params, c: du, M: R, N: Mh, K: D, transB: true, offB: p('fc2.w') }),
      k.geluBackward(s.u, du, R * Mh),
      k.matmul({ a: s.h2, b: du, c: grads, M: D, N: Mh, K: R, transA: true, offC: p('fc1.w') }),
      k.colSum(du, R, Mh, grads, p('fc1.b')),
      k.matmul({ a: du, b: params, c: dh, M: R, N: D, K: Mh, transB: true, offB: p('fc1.w') }),
      k.layerNormParams(ln2, dh, s.xmid, s.st2, grads),
      k.layerNormBackward(ln2, dh, s.xmid, params, s.st2, dx, true),
      k.matmul({ a: s.o, b: dx, c: grads, M: D, N: D, K: R, transA: true, offC: p('proj.w') }),
      k.colSum(dx, R, D, grads, p('proj.b')),
      k.matmul({ a: dx, b: params, c: dO, M: R, N: D, K: D, transB: true, offB: p('proj.w') }),
      ...k.attentionBackward(attn, s.qkv, s.probs, dO, dP, dqkv),
      k.matmul({ a: s.h1, b: dqkv, c: grads, M: D, N: 3 * D, K: R, transA: true, offC: p('qkv.w') }),
      k.colSum(dqkv, R, 3 * D, grads, p('qkv.b')),
      k.matmul({ a: dqkv, b: params, c: dh, M: R, N: D, K: 3 * D, transB: true, offB: p('qkv.w') }),
      k.layerNormParams(ln1, dh, x, s.st1, grads),
      k.layerNormBackward(ln1, dh, x, params, s.st1, dx, true),
    );
  }
  // Final norm on the class-token rows only (row stride T·D), then the linear head.
  const lnf = ln('lnf', B, T * D);
  const last = xs[c.depth]!;
  forward.push(
    k.layerNorm(lnf, last, params, y, stf),
    k.matmul({
      a: y,
      b: params,
      c: logits,
      M: B,
      N: c.classes,
      K: D,
      offB: off('head.w'),
      bias: { buffer: params, offset: off('head.b') },
    }),
  );
  backward.unshift(
    k.matmul({ a: y, b: dlogits, c: grads, M: D, N: c.classes, K: B, transA: true, offC: off('head.w') }),
    k.colSum(dlogits, B, c.classes, grads, off('head.b')),
    k.matmul({ a: dlogits, b: params, c: dh, M: B, N: D, K: c.classes, transB: true, offB: off('head.w') }),
    k.layerNormParams(lnf, dh, last, stf, grads),
    k.layerNormBackward(lnf, dh, last, params, stf, dx, false),
  );
  backward.push(
    k.tokensBackward(dx, dpe, grads, B, T, D, off('cls'), off('pos')),
    k.matmul({ a: patches, b: dpe, c: grads, M: d.patchDim, N: D, K: NP, transA: true, offC: off('patch.w') }),
    k.colSum(dpe, NP, D, grads, off('patch.b')),
    ...k.optimizer(hyper, L.size, { grads, partial, state, w: params, m, v }),
  );
  return { params, grads, m, v, state, partial, patches, logits, dlogits, dx, forward, backward, buffers };
}
