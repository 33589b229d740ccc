// `tandem/text`: textLoader(), one object from token shards, text shards or text files to packed
// token batches on the CPU, on a GPU or as tf.js tensors; the packer and the tokenizer stage.
export { TextLoader, textLoader, type TextLoaderBatch } from './loader.ts';
export type { JaxTokenBatch } from './stages.ts';
export type { JaxNamespace, TextLoaderOptions, TfjsTokens } from './options.ts';
export type { PackMode, PackerSnapshot } from './pack.ts';
export type { PackingCounts } from './batches.ts';
export type { InMemoryTexts, TextShardSource, TextSource, TokenShardSource } from './sources.ts';
export type { TextLoaderState } from './state.ts';
export { TextError, type TextErrorCode } from './errors.ts';
export type { TokenBatch, TokenDeviceBatch, TokenDocument, TokenEncoder, TokenTensors } from './types.ts';
export {
  type IdsEncoder,
  type TextDocumentBytes,
  type TokenizerPoolOptions,
  type TokenizerRoad,
  type TokenizerRoads,
  type TokenizerSpec,
} from './tokenizer.ts';
export { regroupTextStates } from './regroup.ts';
