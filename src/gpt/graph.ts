// The GPT's step as a fixed list of dispatches over buffers allocated once for one batch shape:
// forward (embedding → blocks → final norm → tied head), the loss, backward in reverse with every
// gradient written once into the flat gradient buffer (the token table's twice: head, then
// embedding), then the ViT's optimizer; the blocks are the ViT's (vit/blocks.ts). The batch is first
// copied into the graph's own four buffers, so no dispatch depends on which buffers a batch came in.
import { invariant } from '../errors/index.ts';
import {
  blockStack,
  checkBindingLimit,
  type Dispatch,
  type EmbedTables,
  graphStorage,
  type Kernels,
  layerNormOf,
} from '../vit/internal.ts';
import { type GptConfig, gptDims, gptParamLayout } from './config.ts';

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
  k: Kernels,
  c: GptConfig,
  B: number,
  o: { params?: GPUBuffer; training?: TrainingPart } = {},
): GptGraph {
  const d = gptDims(c);
  const L = gptParamLayout(c);
  const D = c.width;
  const T = c.context;
  const R = B * T;
  const V = c.vocabSize;
  checkBindingLimit(device, 'gpt', [L.size, B * c.heads * T * T, R * d.hidden, R * 3 * D, R * V]);
  const { buffers, buffer, offset } = graphStorage(device, L, 'gpt');
  const params = o.params ?? buffer(L.size);
  const [inputs, labels, docIds, positions, dx] = [buffer(R), buffer(R), buffer(R), buffer(R), buffer(R * D)];
  const spec = { depth: c.depth, B, T, D, H: c.heads, hidden: d.hidden, params, offset, buffer, docIds };
  const grads = o.training?.grads;
  const blocks = blockStack(k, spec, grads && { grads, dx });
  const [y, stf, logits, dlogits] = [buffer(R * D), buffer(2 * R), buffer(R * V), buffer(R * V)];
  const tables: EmbedTables = { V, context: T, D, wteOff: offset('wte'), wpeOff: offset('wpe') };
  const first = blocks.streams[0];
  const last = blocks.streams[c.depth];
  invariant(first && last, 'gpt: no residual streams');
  const lnf = layerNormOf(spec, 'lnf', R);
  const forward: Dispatch[] = [
    k.tokenEmbedding(tables, R, inputs, positions, params, first),
    ...blocks.forward,
    k.layerNorm(lnf, last, params, y, stf),
    // Tied head: logits = y · wteᵀ.
    k.matmul({ a: y, b: params, c: logits, M: R, N: V, K: D, transB: true, offB: offset('wte') }),
  ];
  const backward: Dispatch[] = [];
  if (o.training && grads) {
    const dh = buffer(R * D);
    backward.push(
      k.matmul({ a: dlogits, b: y, c: grads, M: V, N: D, K: R, transA: true, offC: offset('wte') }),
      k.matmul({ a: dlogits, b: params, c: dh, M: R, N: D, K: V, offB: offset('wte') }),
      k.layerNormParams(lnf, dh, last, stf, grads),
      k.layerNormBackward(lnf, dh, last, params, stf, dx, false),
      ...blocks.backward,
      k.tokenEmbeddingBackward(tables, R, inputs, positions, dx, grads),
      ...o.training.optimizer,
    );
  }
  return { rows: R, params, inputs, labels, docIds, positions, logits, dlogits, dx, forward, backward, buffers };
}
