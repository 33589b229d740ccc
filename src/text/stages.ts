// The loader's small per-item steps, kept out of loader.ts: numbering the pass's documents (carried
// pieces first), a token-shard document's BOS/EOS and vocabulary check, and the hand-over to jax-js
// and tf.js.
import type { Jax } from '../jax/index.ts';
import { tfjsInt32, type JaxNamespace, type TfNamespaceLike } from '../loader/internal.ts';
import { leasedBatch, type BatchEnds } from '../sync/index.ts';
import type { PackedBatch } from './batches.ts';
import { TextError } from './errors.ts';
import type { PackedDeviceBatch } from './gpu-ring.ts';
import type { PackerSnapshot } from './pack.ts';
import type { ResolvedText, TextItem } from './sources.ts';
import type { TokenTensors } from './types.ts';
import type { JaxTokens } from '../jax/index.ts';

export interface Numbered {
  index: number;
  key: string;
  item: TextItem;
}

/** `to: jax`: the filled rows as jax-js int32 arrays `[count, seqLen]`, owned by the caller as jax-js arrays are; `release()` ends the batch, the arrays stay yours. */
export type JaxTokenBatch = JaxTokens & BatchEnds;

/** The pass's documents by number: carried pieces first (−n … −1, read back by key), then the order's, from 0. */
export async function* numbered(
  items: Iterable<TextItem> | AsyncIterable<TextItem>,
  carry: readonly [string, number][],
  resolved: ResolvedText,
): AsyncGenerator<Numbered> {
  for (const [i, [key]] of carry.entries()) yield { index: i - carry.length, key, item: resolved.carried(key) };
  let index = 0;
  for await (const item of items) yield { index: index++, key: item.key, item };
}

/** A batch as jax-js arrays, through the `tandem/jax` door (loaded only for `to: jax`). */
export async function toJax(
  jax: JaxNamespace,
  batch: PackedBatch | PackedDeviceBatch,
): Promise<JaxTokenBatch & { snapshot: PackerSnapshot }> {
  const { jaxTokens } = await import('../jax/index.ts');
  const snapshot = batch.snapshot;
  const { inputs, labels, docIds, positions, ...plain } = await jaxTokens(jax as unknown as Jax, batch);
  return leasedBatch('a jax-js batch', () => {}, { inputs, labels, docIds, positions }, { ...plain, snapshot });
}

/** `to: tf`: the four arrays as int32 tensors `[batchSize, seqLen]`, through the loaders' one tf.js target. */
export function toTfjs(tf: TfNamespaceLike, batch: PackedBatch): TokenTensors & { snapshot: PackerSnapshot } {
  const { inputs, labels, docIds, positions, count, shape, padding, keys, snapshot } = batch;
  return tfjsInt32(tf, batch, { inputs, labels, docIds, positions }, shape, { count, shape, padding, keys, snapshot });
}

/** Token-shard documents: BOS/EOS added when asked, ids checked against the vocabulary. */
export function withSpecials(
  tokens: Uint32Array,
  bos: number | undefined,
  eos: number | undefined,
  vocab: number | undefined,
  key: string,
  max: number,
): Uint32Array {
  if (tokens.length > max) throw new TextError('too-large', `${key}: ${tokens.length} tokens, past maxDocumentTokens ${max}`);
  if (vocab !== undefined)
    for (let i = 0; i < tokens.length; i++)
      if ((tokens[i] ?? 0) >= vocab)
        throw new TextError('token-out-of-range', `${key}: token ${tokens[i]} at ${i} is past the vocabulary (${vocab})`);
  if (bos === undefined && eos === undefined) return tokens;
  const out = new Uint32Array(tokens.length + (bos === undefined ? 0 : 1) + (eos === undefined ? 0 : 1));
  if (bos !== undefined) out[0] = bos;
  out.set(tokens, bos === undefined ? 0 : 1);
  if (eos !== undefined) out[out.length - 1] = eos;
  return out;
}
