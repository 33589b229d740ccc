// The GPT's step as a fixed list of dispatches over buffers allocated once for one batch shape:
// forward (embedding → blocks → final norm → tied head), the loss, backward in reverse with every
// gradient written once into the flat gradient buffer (the token table's twice: head, then
// embedding), then the ViT's optimizer. The batch is first copied into the graph's own four
// buffers, so no dispatch depends on which buffers a batch came in.
import { invariant } from '../errors/index.ts';
import type { Dispatch, Kernels, LayerNormSpec } from '../vit/internal.ts';
import { type GptConfig, gptDims, gptParamLayout } from './config.ts';
import type { EmbedTables, GptKernels } from './kernels.ts';

const USAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

export interface GptGraph {
  rows: number;
  params: GPUBuffer;
  /** The batch, copied in before each step: inputs, labels, docIds, positions (i32 [B·T]). */
  inputs: GPUBuffer;
  labels: GPUBuffer;
  docIds: GPUBuffer;
  positions: GPUBuffer;
  logits: GPUBuffer;
  dlogits: GPUBuffer;
  /** dL/dx of the residual stream: the final norm's backward writes every row, the blocks add. */
  dx: GPUBuffer;
  forward: Dispatch[];
  backward: Dispatch[];
  buffers: GPUBuffer[];
}

/** What the training graph adds: the flat gradient buffer and the optimizer's dispatches over it. */
export interface TrainingPart {
  grads: GPUBuffer;
  optimizer: Dispatch[];
}

/**
 * Builds the graph for B rows of `c.context` positions. With `training` the backward list is built
 * and ends with the optimizer; without (a forward-only graph, as generation's) it is empty.
 * `params` shares another graph's parameter buffer, else one is made.
 */
export function buildGptGraph(
  device: GPUDevice,
  vk: Kernels,
  gk: GptKernels,
  c: GptConfig,
  B: number,
  o: { params?: GPUBuffer; training?: TrainingPart } = {},
): GptGraph {
  const d = gptDims(c);
  const L = gptParamLayout(c);
  const D = c.width;
  const T = c.context;
  const R = B * T;
  const H = c.heads;
  const V = c.vocabSize;
  const Mh = d.hidden;
  const limit = device.limits.maxStorageBufferBindingSize;
  const biggest = Math.max(L.size, B * H * T * T, R * Mh, R * 3 * D, R * V) * 4;
  if (biggest > limit)
    throw new RangeError(
      `gpt: a ${biggest}-byte tensor exceeds this device's ${limit}-byte storage binding limit (smaller batch or model)`,
    );
  const buffers: GPUBuffer[] = [];
  const buf = (n: number) => {
    const b = device.createBuffer({ size: Math.max(16, n * 4), usage: USAGE });
    buffers.push(b);
    return b;
  };
  const off = (name: string) => {
    const t = L.byName.get(name);
    invariant(t, `gpt: no tensor ${name}`);
    return t.offset;
  };
  const params = o.params ?? buf(L.size);
  const [inputs, labels, docIds, positions] = [buf(R), buf(R), buf(R), buf(R)];
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
  const [y, stf, logits, dlogits] = [buf(R * D), buf(2 * R), buf(R * V), buf(R * V)];
  const ln = (prefix: string): LayerNormSpec => ({
    rows: R,
    D,
    xStride: D,
    yStride: D,
    gOff: off(`${prefix}.g`),
    bOff: off(`${prefix}.b`),
  });
  const attn = { B, H, T, hd: d.headDim };
  const tables: EmbedTables = { V, context: T, D, wteOff: off('wte'), wpeOff: off('wpe') };

  const stream = (l: number) => {
    const x = xs[l];
    invariant(x, `gpt: no residual stream ${l}`);
    return x;
  };
  const block = (l: number) => {
    const s = blocks[l];
    invariant(s, `gpt: no block ${l}`);
    return s;
  };
  const forward: Dispatch[] = [gk.embed(tables, R, inputs, positions, params, stream(0))];
  for (let l = 0; l < c.depth; l++) {
    const s = block(l);
    const x = stream(l);
    const p = (n: string) => off(`b${l}.${n}`);
    const bias = (n: string) => ({ buffer: params, offset: p(n) });
    forward.push(
      vk.layerNorm(ln(`b${l}.ln1`), x, params, s.h1, s.st1),
      vk.matmul({ a: s.h1, b: params, c: s.qkv, M: R, N: 3 * D, K: D, offB: p('qkv.w'), bias: bias('qkv.b') }),
      gk.attention(attn, s.qkv, docIds, s.probs, s.o),
      vk.matmul({ a: s.o, b: params, c: s.xmid, M: R, N: D, K: D, offB: p('proj.w'), bias: bias('proj.b'), residual: x }),
      vk.layerNorm(ln(`b${l}.ln2`), s.xmid, params, s.h2, s.st2),
      vk.matmul({ a: s.h2, b: params, c: s.u, M: R, N: Mh, K: D, offB: p('fc1.w'), bias: bias('fc1.b') }),
      vk.gelu(s.u, s.a, R * Mh),
      vk.matmul({ a: s.a, b: params, c: stream(l + 1), M: R, N: D, K: Mh, offB: p('fc2.w'), bias: bias('fc2.b'), residual: s.xmid }),
    );
  }
  const last = stream(c.depth);
  forward.push(
    vk.layerNorm(ln('lnf'), last, params, y, stf),
    // Tied head: logits = y · wteᵀ.
    vk.matmul({ a: y, b: params, c: logits, M: R, N: V, K: D, transB: true, offB: off('wte') }),
  );

  const backward: Dispatch[] = [];
  const dx = buf(R * D);
  if (o.training) {
    const { grads } = o.training;
    const [dh, dqkv, dP, dO, du] = [buf(R * D), buf(R * 3 * D), buf(B * H * T * T), buf(R * D), buf(R * Mh)];
    backward.push(
      vk.matmul({ a: dlogits, b: y, c: grads, M: V, N: D, K: R, transA: true, offC: off('wte') }),
      vk.matmul({ a: dlogits, b: params, c: dh, M: R, N: D, K: V, offB: off('wte') }),
      vk.layerNormParams(ln('lnf'), dh, last, stf, grads),
      vk.layerNormBackward(ln('lnf'), dh, last, params, stf, dx, false),
    );
    for (let l = c.depth - 1; l >= 0; l--) {
      const s = block(l);
      const x = stream(l);
      const p = (n: string) => off(`b${l}.${n}`);
      const ln1 = ln(`b${l}.ln1`);
      const ln2 = ln(`b${l}.ln2`);
      backward.push(
        vk.matmul({ a: s.a, b: dx, c: grads, M: Mh, N: D, K: R, transA: true, offC: p('fc2.w') }),
        vk.colSum(dx, R, D, grads, p('fc2.b')),
        vk.matmul({ a: dx, b: params, c: du, M: R, N: Mh, K: D, transB: true, offB: p('fc2.w') }),
        vk.geluBackward(s.u, du, R * Mh),
        vk.matmul({ a: s.h2, b: du, c: grads, M: D, N: Mh, K: R, transA: true, offC: p('fc1.w') }),
        vk.colSum(du, R, Mh, grads, p('fc1.b')),
        vk.matmul({ a: du, b: params, c: dh, M: R, N: D, K: Mh, transB: true, offB: p('fc1.w') }),
        vk.layerNormParams(ln2, dh, s.xmid, s.st2, grads),
        vk.layerNormBackward(ln2, dh, s.xmid, params, s.st2, dx, true),
        vk.matmul({ a: s.o, b: dx, c: grads, M: D, N: D, K: R, transA: true, offC: p('proj.w') }),
        vk.colSum(dx, R, D, grads, p('proj.b')),
        vk.matmul({ a: dx, b: params, c: dO, M: R, N: D, K: D, transB: true, offB: p('proj.w') }),
        ...gk.attentionBackward(attn, s.qkv, s.probs, dO, dP, dqkv),
        vk.matmul({ a: s.h1, b: dqkv, c: grads, M: D, N: 3 * D, K: R, transA: true, offC: p('qkv.w') }),
        vk.colSum(dqkv, R, 3 * D, grads, p('qkv.b')),
        vk.matmul({ a: dqkv, b: params, c: dh, M: R, N: D, K: 3 * D, transB: true, offB: p('qkv.w') }),
        vk.layerNormParams(ln1, dh, x, s.st1, grads),
        vk.layerNormBackward(ln1, dh, x, params, s.st1, dx, true),
      );
    }
    backward.push(gk.embedBackward(tables, R, inputs, positions, dx, grads), ...o.training.optimizer);
  }
  return { rows: R, params, inputs, labels, docIds, positions, logits, dlogits, dx, forward, backward, buffers };
}
