// The ViT's training step as a fixed list of dispatches over buffers allocated once for one batch
// size: forward (patches → tokens → blocks → class-token norm → head), backward in reverse with
// every gradient written exactly once into the flat gradient buffer, then the optimizer. Only the
// first dispatch (images) and the loss (labels) depend on per-step buffers; see model.ts. The
// blocks are the GPT's too (blocks.ts).
import { invariant } from '../errors/index.ts';
import { dims, paramLayout, type ViTConfig } from './config.ts';
import { blockStack, checkBindingLimit, graphStorage, layerNormOf } from './blocks.ts';
import type { Dispatch, Kernels } from './kernels.ts';
import type { OptimValues } from './params.ts';

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
  const NP = B * d.patches;
  checkBindingLimit(device, 'vit', [L.size, B * c.heads * T * T, B * T * d.hidden, B * T * 3 * D, NP * d.patchDim]);
  const { buffers, buffer, offset } = graphStorage(device, L, 'vit');
  const [params, grads, m, v] = [buffer(L.size), buffer(L.size), buffer(L.size), buffer(L.size)];
  const state = buffer(8);
  const partial = buffer(256);
  const patches = buffer(NP * d.patchDim);
  const pe = buffer(NP * D);
  const dx = buffer(B * T * D);
  // Attention is fused (attention.wgsl): the batched matmul path (Q·Kᵀ, softmax, P·V as strided
  // batches) is tested too, but its 64×64 tiles are mostly padding at T = 17 and cost ~20× more
  // on lavapipe.
  const spec = { depth: c.depth, B, T, D, H: c.heads, hidden: d.hidden, params, offset, buffer };
  const blocks = blockStack(k, spec, { grads, dx });
  const [y, stf, logits, dlogits] = [buffer(B * D), buffer(2 * B), buffer(B * c.classes), buffer(B * c.classes)];
  const [dh, dpe] = [buffer(B * D), buffer(NP * D)];
  const first = blocks.streams[0];
  const last = blocks.streams[c.depth];
  invariant(first && last, 'vit: no residual streams');
  const forward: Dispatch[] = [
    k.matmul({
      a: patches,
      b: params,
      c: pe,
      M: NP,
      N: D,
      K: d.patchDim,
      offB: offset('patch.w'),
      bias: { buffer: params, offset: offset('patch.b') },
    }),
    k.tokens(pe, params, first, B, T, D, offset('cls'), offset('pos')),
    ...blocks.forward,
  ];
  // Final norm on the class-token rows only (row stride T·D), then the linear head.
  const lnf = layerNormOf(spec, 'lnf', B, T * D);
  const head = { M: B, N: c.classes, K: D, offB: offset('head.w'), bias: { buffer: params, offset: offset('head.b') } };
  forward.push(k.layerNorm(lnf, last, params, y, stf), k.matmul({ a: y, b: params, c: logits, ...head }));
  const backward: Dispatch[] = [
    k.matmul({ a: y, b: dlogits, c: grads, M: D, N: c.classes, K: B, transA: true, offC: offset('head.w') }),
    k.colSum(dlogits, B, c.classes, grads, offset('head.b')),
    k.matmul({ a: dlogits, b: params, c: dh, M: B, N: D, K: c.classes, transB: true, offB: offset('head.w') }),
    k.layerNormParams(lnf, dh, last, stf, grads),
    k.layerNormBackward(lnf, dh, last, params, stf, dx, false),
    ...blocks.backward,
    k.tokensBackward(dx, dpe, grads, B, T, D, offset('cls'), offset('pos')),
    k.matmul({ a: patches, b: dpe, c: grads, M: d.patchDim, N: D, K: NP, transA: true, offC: offset('patch.w') }),
    k.colSum(dpe, NP, D, grads, offset('patch.b')),
    ...k.optimizer(hyper, L.size, { grads, partial, state, w: params, m, v }),
  ];
  return { params, grads, m, v, state, partial, patches, logits, dlogits, dx, forward, backward, buffers };
}
