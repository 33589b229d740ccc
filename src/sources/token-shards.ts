// Pre-tokenised shards read as a stream of documents: Tandem's own format (a header, a document
// table, the tokens) and llm.c / nanoGPT's (a header and the tokens, documents split at a delimiter
// token). A shard is never held whole: the reader keeps the table and the document it is reading.
// Each document comes out as a WebDataset-shaped sample, so ShardStream reads token shards with
// everything it does for tar shards (order, shares, shuffle buffer, resume, regroup, HTTP, caches).
import { OptionChecker } from '../errors/index.ts';
import type { WebDatasetItem } from './shards.ts';
import { ByteReader, SourceError } from './tar.ts';

/** The bytes "TDTK" read as a little-endian u32. */
export const TOKEN_SHARD_MAGIC = 0x4b544454;
export const TOKEN_SHARD_VERSION = 1;
/** Both formats start with 256 little-endian u32 words. */
export const TOKEN_SHARD_HEADER_BYTES = 1024;
/** llm.c's GPT-2 shards (version 1, u16 tokens) and its Llama 3 shards (version 7, u32 tokens). */
export const LLMC_GPT2_MAGIC = 20240520;
export const LLMC_LLAMA3_MAGIC = 20240801;

const DEFAULT_MAX_DOCUMENTS = 1 << 24;
const DEFAULT_MAX_DOCUMENT_TOKENS = 1 << 24;
/** Tokens widened per read: a fixed scratch buffer, whatever the document's length. */
const CHUNK_TOKENS = 1 << 16;

export interface TokenShardOptions {
  /**
   * llm.c shards: a document starts at every occurrence of this id and includes it (llm.c puts
   * its end-of-text token, 50256 for GPT-2, at the start of every document). Without it an llm.c
   * shard is one document. Tandem shards carry a document table and ignore it.
   */
  documentStart?: number;
  /** llm.c shards name no vocabulary size: with this, a document holding an id ≥ it fails. */
  vocabSize?: number;
  /** A shard whose table lists more documents is refused before the table is allocated (default 2^24). */
  maxDocuments?: number;
  /** A longer document fails (SourceError 'too-large') and is skipped unread (default 2^24 tokens). */
  maxDocumentTokens?: number;
}

export interface TokenShardReadOptions extends TokenShardOptions {
  /** Names used in error messages, e.g. the shard's URL. */
  shardName?: string;
}

/** What a shard's header says, checked. */
export interface TokenShardHeader {
  format: 'tandem' | 'llm.c';
  bytesPerToken: 2 | 4;
  /** Every id is below it (2^16 or 2^32 for an llm.c shard read without `vocabSize`). */
  vocabSize: number;
  tokens: number;
  /** Tandem shards only: llm.c shards have no table. */
  documents?: number;
}

/** A document's ids as u32 (a view of a sample's `files.tokens`, no copy). */
export function documentTokens(files: Record<string, Uint8Array>): Uint32Array {
  const bytes = files.tokens;
  if (!bytes || bytes.byteLength % 4 !== 0 || bytes.byteOffset % 4 !== 0)
    throw new SourceError('corrupt', 'tokens', 'not a token shard sample (files.tokens must be whole u32 ids)');
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

export interface TokenShardLimits extends TokenShardOptions {
  maxDocuments: number;
  maxDocumentTokens: number;
}

/** Checks token shard options (`where` names the call in an OptionError) and fills in the limits. */
export function tokenShardLimits(options: TokenShardReadOptions | undefined, where = 'tokenShards options'): TokenShardLimits {
  const check = new OptionChecker(where, options, ['documentStart', 'vocabSize', 'maxDocuments', 'maxDocumentTokens', 'shardName']);
  return {
    documentStart: check.optionalInteger('documentStart', 0, 0xffffffff),
    vocabSize: check.optionalInteger('vocabSize', 1, 2 ** 32),
    maxDocuments: check.integer('maxDocuments', DEFAULT_MAX_DOCUMENTS, 1, 2 ** 32),
    maxDocumentTokens: check.integer('maxDocumentTokens', DEFAULT_MAX_DOCUMENT_TOKENS, 1, 2 ** 32),
  };
}

/** Reads and checks the 1024-byte header; `where` ends every message. */
export function parseTokenShardHeader(header: Uint8Array, options: TokenShardOptions = {}, where = ''): TokenShardHeader {
  const bad = (why: string) => new SourceError('bad-header', 'header', `token shard header: ${why}${where}`);
  if (header.length < TOKEN_SHARD_HEADER_BYTES) throw bad(`${header.length} bytes, not ${TOKEN_SHARD_HEADER_BYTES}`);
  const view = new DataView(header.buffer, header.byteOffset, TOKEN_SHARD_HEADER_BYTES);
  const word = (i: number) => view.getUint32(i * 4, true);
  const magic = word(0);
  if (magic === LLMC_GPT2_MAGIC || magic === LLMC_LLAMA3_MAGIC) {
    const version = magic === LLMC_GPT2_MAGIC ? 1 : 7;
    if (word(1) !== version) throw bad(`llm.c magic ${magic} with version ${word(1)} (expected ${version})`);
    const bytesPerToken = magic === LLMC_GPT2_MAGIC ? 2 : 4;
    return { format: 'llm.c', bytesPerToken, vocabSize: options.vocabSize ?? 2 ** (8 * bytesPerToken), tokens: word(2) };
  }
  if (magic !== TOKEN_SHARD_MAGIC) throw bad(`magic 0x${magic.toString(16)} is neither "TDTK" nor llm.c's`);
  if (word(1) !== TOKEN_SHARD_VERSION) throw bad(`version ${word(1)} (this reader knows ${TOKEN_SHARD_VERSION})`);
  const bytesPerToken = word(2);
  if (bytesPerToken !== 2 && bytesPerToken !== 4) throw bad(`${bytesPerToken} bytes per token (2 or 4)`);
  const [vocabSize, documents, tokens] = [word(3), word(4), word(5)];
  if (vocabSize === 0 || (bytesPerToken === 2 && vocabSize > 65536))
    throw bad(`vocabulary size ${vocabSize} with ${bytesPerToken}-byte tokens`);
  // Every document has at least one token, so there are no more documents than tokens.
  if (documents > tokens || (tokens > 0 && documents === 0)) throw bad(`${documents} documents for ${tokens} tokens`);
  for (let i = 6; i < 256; i++) if (word(i) !== 0) throw bad(`reserved word ${i} is ${word(i)}, not 0`);
  const maxDocuments = options.maxDocuments ?? DEFAULT_MAX_DOCUMENTS;
  if (documents > maxDocuments)
    throw new SourceError('too-large', 'header', `token shard lists ${documents} documents, over maxDocuments ${maxDocuments}${where}`);
  return { format: 'tandem', bytesPerToken, vocabSize, tokens, documents };
}

/** Reads a shard's tokens into documents, widening u16 through one fixed scratch buffer. */
class TokenReader {
  private readonly scratch: Uint8Array;
  private readonly scratch16: Uint16Array;
  constructor(
    private readonly bytes: ByteReader,
    private readonly header: TokenShardHeader,
    private readonly where: string,
  ) {
    this.scratch = new Uint8Array(header.bytesPerToken === 2 ? CHUNK_TOKENS * 2 : 0);
    this.scratch16 = new Uint16Array(this.scratch.buffer);
  }

  truncated(key: string, what: string): SourceError {
    return new SourceError('truncated', key, `token shard truncated ${what}${this.where}`);
  }

  /**
   * `count` ids into `target` from `at`; a stream ending first throws 'truncated'. u32 ids are read
   * straight into the document's memory: every platform with WebGPU is little-endian.
   */
  async into(target: Uint32Array, at: number, count: number, key: string): Promise<void> {
    if (this.header.bytesPerToken === 4) {
      const bytes = new Uint8Array(target.buffer, target.byteOffset + at * 4, count * 4);
      if ((await this.bytes.readInto(bytes)) < bytes.length) throw this.truncated(key, `inside document ${key}`);
      return;
    }
    const chunk = this.scratch.subarray(0, count * 2);
    if ((await this.bytes.readInto(chunk)) < chunk.length) throw this.truncated(key, `inside document ${key}`);
    target.set(this.scratch16.subarray(0, count), at);
  }

  /** A whole document of `length` tokens, read as one piece. */
  async document(d: number, length: number, maxTokens: number): Promise<WebDatasetItem> {
    const key = String(d);
    if (length > maxTokens) {
      const size = length * this.header.bytesPerToken;
      if ((await this.bytes.skip(size)) < size) throw this.truncated(key, `inside document ${key}`);
      return this.failure(key, 'too-large', `${length} tokens, over maxDocumentTokens ${maxTokens}`);
    }
    const tokens = new Uint32Array(length);
    const step = this.header.bytesPerToken === 2 ? CHUNK_TOKENS : length;
    for (let at = 0; at < length; at += step) await this.into(tokens, at, Math.min(step, length - at), key);
    return this.finish(key, tokens);
  }

  /** The sample, or its failure when an id is outside the vocabulary. */
  finish(key: string, tokens: Uint32Array): WebDatasetItem {
    const vocab = this.header.vocabSize;
    for (let i = 0; i < tokens.length; i++) {
      const id = tokens[i] ?? 0;
      if (id >= vocab) return this.failure(key, 'bad-token', `token ${i} is ${id}, not below the vocabulary size ${vocab}`);
    }
    return { key, files: { tokens: new Uint8Array(tokens.buffer, tokens.byteOffset, tokens.byteLength) } };
  }

  failure(key: string, code: 'too-large' | 'bad-token', why: string): WebDatasetItem {
    return { key, stage: 'sample', error: new SourceError(code, key, `document ${key}: ${why}${this.where}`) };
  }
}

/** Document table: D + 1 ascending token starts from 0 to N. */
async function readTable(bytes: ByteReader, header: TokenShardHeader, where: string): Promise<Uint32Array> {
  const documents = header.documents ?? 0;
  const table = new Uint32Array(documents + 1);
  const raw = new Uint8Array(table.buffer);
  if ((await bytes.readInto(raw)) < raw.length)
    throw new SourceError('truncated', 'table', `token shard truncated in its document table${where}`);
  const view = new DataView(table.buffer);
  for (let d = 0; d <= documents; d++) table[d] = view.getUint32(d * 4, true);
  const corrupt = (why: string) => new SourceError('corrupt', 'table', `token shard document table: ${why}${where}`);
  if (table[0] !== 0) throw corrupt(`starts at ${table[0]}, not 0`);
  for (let d = 1, previous = 0; d <= documents; d++) {
    const start = table[d] ?? 0;
    if (start <= previous) throw corrupt(`start ${d} (${start}) is not after start ${d - 1} (${previous})`);
    previous = start;
  }
  if (table[documents] !== header.tokens) throw corrupt(`ends at ${table[documents]}, not at the token count ${header.tokens}`);
  return table;
}

/**
 * Yields a token shard's documents in order as `{ key, files: { tokens } }` (key: the document
 * number; tokens: its ids as u32 little-endian bytes, see documentTokens). A document with an id
 * at or over the vocabulary size, or longer than maxDocumentTokens, is a failure
 * `{ key, stage: 'sample', error }` and the shard goes on. A bad header or table, a stream that
 * ends early or has bytes after its tokens throws a SourceError after the whole documents before it.
 */
export async function* tokenShardSamples(
  stream: ReadableStream<Uint8Array>,
  options: TokenShardReadOptions = {},
): AsyncGenerator<WebDatasetItem> {
  const limits = tokenShardLimits(options);
  const where = options.shardName ? ` in ${options.shardName}` : '';
  const reader = stream.getReader();
  const bytes = new ByteReader(reader);
  try {
    const head = new Uint8Array(TOKEN_SHARD_HEADER_BYTES);
    const got = await bytes.readInto(head);
    if (got < head.length) throw new SourceError('truncated', 'header', `token shard truncated in its header (${got} bytes)${where}`);
    const header = parseTokenShardHeader(head, limits, where);
    const tokens = new TokenReader(bytes, header, where);
    if (header.format === 'tandem') {
      const table = await readTable(bytes, header, where);
      for (let d = 0; d < table.length - 1; d++)
        yield await tokens.document(d, (table[d + 1] ?? 0) - (table[d] ?? 0), limits.maxDocumentTokens);
    } else if (limits.documentStart === undefined) {
      if (header.tokens > 0) yield await tokens.document(0, header.tokens, limits.maxDocumentTokens);
    } else {
      yield* splitAtDelimiter(tokens, header, limits.documentStart, limits.maxDocumentTokens);
    }
    if ((await bytes.skip(1)) > 0)
      throw new SourceError('corrupt', 'end', `token shard has bytes after its ${header.tokens} tokens${where}`);
  } finally {
    // Early exit (break, a thrown error, a pipeline stopping) must not leave a fetch body open.
    if (!bytes.done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** llm.c shards: documents open at each `start` id; ids before the first one form document 0. */
async function* splitAtDelimiter(
  tokens: TokenReader,
  header: TokenShardHeader,
  start: number,
  maxTokens: number,
): AsyncGenerator<WebDatasetItem> {
  const chunk = new Uint32Array(Math.min(CHUNK_TOKENS, header.tokens));
  let doc = new Uint32Array(Math.min(1024, maxTokens));
  let length = 0;
  let tooLong = 0; // tokens past maxTokens: the document fails, its tokens are not kept
  let d = 0;
  const complete = (): WebDatasetItem => {
    const key = String(d++);
    const item =
      tooLong > 0
        ? tokens.failure(key, 'too-large', `over ${maxTokens} tokens (maxDocumentTokens)`)
        : tokens.finish(key, doc.slice(0, length));
    length = 0;
    tooLong = 0;
    return item;
  };
  for (let read = 0; read < header.tokens; read += chunk.length) {
    const count = Math.min(chunk.length, header.tokens - read);
    await tokens.into(chunk, 0, count, String(d));
    for (let i = 0; i < count; i++) {
      const id = chunk[i] ?? 0;
      if (id === start && length + tooLong > 0) yield complete();
      if (length === maxTokens) tooLong++;
      else {
        if (length === doc.length) {
          const grown = new Uint32Array(Math.min(doc.length * 2, maxTokens));
          grown.set(doc);
          doc = grown;
        }
        doc[length++] = id;
      }
    }
  }
  if (length + tooLong > 0) yield complete();
}
