// textLoader()'s options: every one checked when the loader is made, before anything is allocated.
import { OptionChecker } from '../errors/index.ts';
import type { GpuContext } from '../gpu/index.ts';
import {
  checkCommonOptions,
  COMMON_OPTIONS,
  gpuTarget,
  isJax,
  isTfjs,
  type CommonLoaderOptions,
  type CommonLoaderSettings,
  type JaxNamespace,
  type TfNamespaceLike,
} from '../loader/internal.ts';
import type { PackMode } from './pack.ts';
import type { TextLoaderState } from './state.ts';
import type { TokenizerSpec } from './tokenizer.ts';

export type { JaxNamespace };
/** TensorFlow.js's namespace, as the loaders look for it (the image loader's TfNamespaceLike). */
export type TfjsTokens = TfNamespaceLike;

export interface TextLoaderOptions extends CommonLoaderOptions {
  /** Positions per row (default 256): a row holds seqLen + 1 tokens, inputs and labels shifted by one. */
  seqLen?: number;
  /** How documents become rows (default 'concat'); see docs/text.md. */
  pack?: PackMode;
  /** best-fit: documents waiting to be chosen from (default 64). */
  fitWindow?: number;
  /** Added before every document (default: none). */
  bos?: number;
  /** Added after every document (default: none). */
  eos?: number;
  /** The id at padding positions (default: `eos`, else 0); their label is −1. */
  pad?: number;
  /** Text sources: how text becomes ids (an `@huggingface/tokenizers` JSON or URL run in workers, or any `{ encode }`). */
  tokenizer?: TokenizerSpec;
  /** Worker threads of a `{ json }` / `{ url }` tokenizer (default: the cores but one). */
  tokenizerWorkers?: number;
  /** Ids must be below this (default: no check for text, the shard's header for token shards). */
  vocabSize?: number;
  /** A document past this many bytes fails 'too-large' before it is decoded (default 64 MiB). */
  maxDocumentBytes?: number;
  /** ... or past this many tokens (default 16 Mi). */
  maxDocumentTokens?: number;
  /** `.json` documents: the field holding the text (default 'text'). */
  textField?: string;
  /**
   * 'cpu' (default): Int32Array batches; a GPUDevice or GpuContext: i32 GPU buffers; TensorFlow.js's
   * namespace: int32 tensors; jax-js's namespace: int32 arrays (on its WebGPU device when that is its
   * default, through Tandem's ring and one GPU copy).
   */
  to?: 'cpu' | GPUDevice | GpuContext | TfjsTokens | JaxNamespace;
  resumeFrom?: TextLoaderState;
}

export interface TextLoaderSettings extends CommonLoaderSettings {
  seqLen: number;
  pack: PackMode;
  fitWindow: number;
  bos: number | undefined;
  eos: number | undefined;
  pad: number;
  tokenizer: TokenizerSpec | undefined;
  tokenizerWorkers: number | undefined;
  vocabSize: number | undefined;
  maxDocumentBytes: number;
  maxDocumentTokens: number;
  textField: string;
  to: 'cpu' | GPUDevice | GpuContext | TfjsTokens | JaxNamespace;
  resumeFrom: TextLoaderState | undefined;
}

const KNOWN = [
  ...COMMON_OPTIONS,
  'seqLen',
  'pack',
  'fitWindow',
  'bos',
  'eos',
  'pad',
  'tokenizer',
  'tokenizerWorkers',
  'vocabSize',
  'maxDocumentBytes',
  'maxDocumentTokens',
  'textField',
  'to',
  'resumeFrom',
] as const;

const TOKEN_MAX = 0xffffffff;

export function checkTextLoaderOptions(options: TextLoaderOptions): TextLoaderSettings {
  const o = new OptionChecker('textLoader options', options, KNOWN);
  const common = checkCommonOptions(o, { batchSize: 8, readConcurrency: 16 });
  const vocabSize = o.optionalInteger('vocabSize', 1, TOKEN_MAX);
  const idMax = vocabSize === undefined ? TOKEN_MAX : vocabSize - 1;
  const bos = o.optionalInteger('bos', 0, idMax);
  const eos = o.optionalInteger('eos', 0, idMax);
  const tokenizer = o.raw('tokenizer') as TokenizerSpec | undefined;
  if (tokenizer !== undefined && !isTokenizerSpec(tokenizer))
    o.fail('tokenizer', "an object with encode(text), { json } (a tokenizer.json's text or object) or { url }");
  const resumeFrom = o.raw('resumeFrom');
  if (
    resumeFrom !== undefined &&
    (typeof resumeFrom !== 'object' || resumeFrom === null || (resumeFrom as { kind?: unknown }).kind !== 'tandem.text')
  )
    o.fail('resumeFrom', "a state from textLoader's state()");
  return {
    ...common,
    seqLen: o.integer('seqLen', 256, 1, 1 << 20),
    pack: o.oneOf<PackMode>('pack', 'concat', ['concat', 'best-fit', 'pad']),
    fitWindow: o.integer('fitWindow', 64, 1, 1 << 16),
    bos,
    eos,
    pad: o.integer('pad', eos ?? 0, 0, idMax),
    tokenizer,
    tokenizerWorkers: o.optionalInteger('tokenizerWorkers', 1, 256),
    vocabSize,
    maxDocumentBytes: o.integer('maxDocumentBytes', 64 << 20, 1, 2 ** 31),
    maxDocumentTokens: o.integer('maxDocumentTokens', 16 << 20, 1, 2 ** 31),
    textField: typeof o.raw('textField') === 'string' ? (o.raw('textField') as string) : checkAbsent(o, 'textField', 'text'),
    to: checkTarget(o),
    resumeFrom: resumeFrom as TextLoaderState | undefined,
  };
}

function checkAbsent(o: OptionChecker, field: string, fallback: string): string {
  if (o.raw(field) !== undefined) o.fail(field, 'a string');
  return fallback;
}

function isTokenizerSpec(x: unknown): x is TokenizerSpec {
  if (typeof x !== 'object' || x === null) return false;
  const t = x as { encode?: unknown; json?: unknown; url?: unknown };
  return typeof t.encode === 'function' || t.json !== undefined || typeof t.url === 'string' || t.url instanceof URL;
}

function checkTarget(o: OptionChecker): TextLoaderSettings['to'] {
  const to = o.raw('to') ?? 'cpu';
  if (to === 'cpu') return to;
  const gpu = gpuTarget(to);
  if (gpu) return gpu;
  const target = to as TextLoaderSettings['to'];
  if (isTfjs(target) || isJax(target)) return target;
  return o.fail('to', "'cpu', a GPUDevice, a GpuContext (acquireGpu()), TensorFlow.js's or jax-js's namespace");
}
