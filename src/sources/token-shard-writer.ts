// Writing documents of token ids as Tandem token shards (format in token-shards.ts): one shard's
// tokens are gathered at their stored width, then written as header + document table + tokens, so
// memory holds one shard however many documents come in.
import { OptionChecker, OptionError } from '../errors/index.ts';
import { createFileWriter, makeDir, writeFileAtomic } from '../runtime/index.ts';
import { TOKEN_SHARD_HEADER_BYTES, TOKEN_SHARD_MAGIC, TOKEN_SHARD_VERSION } from './token-shards.ts';
import type { ShardInfo } from './write-shards.ts';

export interface TokenShardEncodeOptions {
  /** Every id must be below it. */
  vocabSize: number;
  /** Stored width; default 2 when vocabSize ≤ 65536, else 4. */
  bytesPerToken?: 2 | 4;
}

export interface TokenShardWriteOptions extends TokenShardEncodeOptions {
  /** Output folder: shards `${prefix}-000000.bin` … and `shards.json`. */
  dir: string;
  /** Default "tokens". */
  prefix?: string;
  /** A shard is closed before it would exceed this many tokens; a longer document gets a shard of its own. */
  tokensPerShard: number;
  onShard?: (shard: TokenShardInfo) => void;
}

/** `samples` counts the shard's documents (what regroupShardStates' `shardSamples` wants). */
export interface TokenShardInfo extends ShardInfo {
  tokens: number;
}

export interface TokenShardManifest {
  format: 'tokens';
  vocabSize: number;
  bytesPerToken: 2 | 4;
  /** Documents in all shards. */
  samples: number;
  tokens: number;
  shards: TokenShardInfo[];
}

const MAX_SHARD_TOKENS = 0xffffffff;

function encodeOptions(where: string, options: unknown, extra: readonly string[]): { vocabSize: number; bytesPerToken: 2 | 4 } {
  const check = new OptionChecker(where, options, ['vocabSize', 'bytesPerToken', ...extra]);
  const vocabSize = check.integer('vocabSize', Number.NaN, 1, 2 ** 32);
  const width = check.raw('bytesPerToken') ?? (vocabSize <= 65536 ? 2 : 4);
  if (width !== 2 && width !== 4) return check.fail('bytesPerToken', '2 or 4');
  if (width === 2 && vocabSize > 65536) check.fail('bytesPerToken', '4 for a vocabulary over 65536 ids');
  return { vocabSize, bytesPerToken: width };
}

/** One shard's documents, at the stored width, growing by doubling. */
class ShardBuilder {
  private tokens: Uint16Array | Uint32Array;
  private starts: Uint32Array = new Uint32Array(64);
  documents = 0;
  tokenCount = 0;

  constructor(
    private readonly vocabSize: number,
    private readonly bytesPerToken: 2 | 4,
    private readonly where: string,
  ) {
    this.tokens = bytesPerToken === 2 ? new Uint16Array(1024) : new Uint32Array(1024);
  }

  /** Checks every id before anything of the document is kept. */
  add(doc: ArrayLike<number>, index: number): void {
    if (doc.length === 0) throw new OptionError(this.where, `docs[${index}]`, doc, 'a document of at least one token');
    for (let i = 0; i < doc.length; i++) {
      const id = doc[i];
      if (id === undefined || !Number.isInteger(id) || id < 0 || id >= this.vocabSize)
        throw new OptionError(this.where, `docs[${index}][${i}]`, id, `an integer in [0, ${this.vocabSize})`);
    }
    if (this.tokenCount + doc.length > MAX_SHARD_TOKENS)
      throw new OptionError(this.where, `docs[${index}]`, doc, `at most ${MAX_SHARD_TOKENS} tokens in one shard`);
    const needed = this.tokenCount + doc.length;
    if (needed > this.tokens.length) {
      const grown =
        this.bytesPerToken === 2
          ? new Uint16Array(Math.max(needed, this.tokens.length * 2))
          : new Uint32Array(Math.max(needed, this.tokens.length * 2));
      grown.set(this.tokens.subarray(0, this.tokenCount));
      this.tokens = grown;
    }
    this.tokens.set(doc, this.tokenCount);
    if (this.documents + 2 > this.starts.length) {
      const grown = new Uint32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.tokenCount = needed;
    this.starts[++this.documents] = needed;
  }

  /** Header and document table (little-endian), then the tokens' bytes: no copy of the tokens. */
  parts(): [Uint8Array, Uint8Array] {
    const head = new Uint8Array(TOKEN_SHARD_HEADER_BYTES + (this.documents + 1) * 4);
    const view = new DataView(head.buffer);
    const words = [TOKEN_SHARD_MAGIC, TOKEN_SHARD_VERSION, this.bytesPerToken, this.vocabSize, this.documents, this.tokenCount];
    for (const [i, word] of words.entries()) view.setUint32(i * 4, word, true);
    for (let d = 0; d <= this.documents; d++) view.setUint32(TOKEN_SHARD_HEADER_BYTES + d * 4, this.starts[d] ?? 0, true);
    const body = this.tokens.subarray(0, this.tokenCount);
    // Typed arrays are little-endian on every platform with WebGPU, so the ids' memory is the format.
    return [head, new Uint8Array(body.buffer, body.byteOffset, body.byteLength)];
  }
}

/** Documents as one token shard in memory (tests, small corpora; writeTokenShards for large ones). */
export function encodeTokenShard(docs: readonly ArrayLike<number>[], options: TokenShardEncodeOptions): Uint8Array {
  const where = 'encodeTokenShard options';
  const { vocabSize, bytesPerToken } = encodeOptions(where, options, []);
  const builder = new ShardBuilder(vocabSize, bytesPerToken, where);
  for (const [i, doc] of docs.entries()) builder.add(doc, i);
  const [head, body] = builder.parts();
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/**
 * Writes documents (in the order given) as numbered token shards of at most `tokensPerShard`
 * tokens each, plus `shards.json` (the manifest returned). Document numbers restart at 0 in every
 * shard. Node and Deno; each shard appears under its final name only once it is complete.
 */
export async function writeTokenShards(
  docs: Iterable<ArrayLike<number>> | AsyncIterable<ArrayLike<number>>,
  options: TokenShardWriteOptions,
): Promise<TokenShardManifest> {
  const where = 'writeTokenShards options';
  const { vocabSize, bytesPerToken } = encodeOptions(where, options, ['dir', 'prefix', 'tokensPerShard', 'onShard']);
  const check = new OptionChecker(where, options, ['vocabSize', 'bytesPerToken', 'dir', 'prefix', 'tokensPerShard', 'onShard']);
  const tokensPerShard = check.integer('tokensPerShard', Number.NaN, 1, MAX_SHARD_TOKENS);
  const { dir, prefix = 'tokens' } = options;
  if (typeof dir !== 'string' || dir === '') check.fail('dir', 'a folder path');
  if (typeof prefix !== 'string' || prefix === '' || /[\\/]/.test(prefix)) check.fail('prefix', 'a file name prefix without slashes');
  await makeDir(dir);
  const manifest: TokenShardManifest = { format: 'tokens', vocabSize, bytesPerToken, samples: 0, tokens: 0, shards: [] };
  let builder = new ShardBuilder(vocabSize, bytesPerToken, where);
  const flush = async () => {
    if (builder.documents === 0) return;
    const info: TokenShardInfo = {
      name: `${prefix}-${String(manifest.shards.length).padStart(6, '0')}.bin`,
      samples: builder.documents,
      tokens: builder.tokenCount,
      bytes: 0,
    };
    const writer = await createFileWriter(`${dir}/${info.name}`);
    try {
      for (const part of builder.parts()) {
        await writer.write(part);
        info.bytes += part.length;
      }
      await writer.close();
    } catch (error) {
      await writer.abort().catch(() => undefined);
      throw error;
    }
    manifest.shards.push(info);
    manifest.samples += info.samples;
    manifest.tokens += info.tokens;
    options.onShard?.(info);
    builder = new ShardBuilder(vocabSize, bytesPerToken, where);
  };
  let index = 0;
  for await (const doc of docs) {
    if (builder.documents > 0 && builder.tokenCount + doc.length > tokensPerShard) await flush();
    builder.add(doc, index++);
  }
  await flush();
  await writeFileAtomic(`${dir}/shards.json`, new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`));
  return manifest;
}
