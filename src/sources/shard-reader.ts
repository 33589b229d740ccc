// One shard's samples, recovering from a connection cut mid-shard: the shard is reopened and the
// samples already delivered are skipped, so a dropped body costs a re-read, not the shard's tail.
import { OptionError, TandemError } from '../errors/index.ts';
import { openFileStream } from '../runtime/index.ts';
import { webDatasetSamples, type WebDatasetItem, type WebDatasetOptions } from './shards.ts';
import { tokenShardLimits, tokenShardSamples, type TokenShardOptions } from './token-shards.ts';
import { fetchStream, type FetchOptions } from './urls.ts';

export type ShardOpener = (shard: string, signal: AbortSignal | undefined) => Promise<ReadableStream<Uint8Array>>;

/**
 * A shard read by its own reader instead of as a byte stream (a Parquet row group, read by byte
 * ranges): its samples from number `skip` on. Throwing ends the shard, as a cut stream does.
 */
export type ShardSampleReader = (shard: string, skip: number, signal: AbortSignal | undefined) => AsyncIterable<WebDatasetItem>;

const isUrl = (name: string) => /^(https?|blob|data|file):/i.test(name);

/** The default opener: URLs through fetchStream (retries, timeouts), anything else as a local file. */
export function defaultOpener(fetchOptions: FetchOptions = {}): ShardOpener {
  return (shard, signal) =>
    isUrl(shard)
      ? fetchStream(shard, { timeoutMs: 30_000, ...fetchOptions, signal: signal ?? fetchOptions.signal })
      : openFileStream(shard);
}

/** Which step of reading a shard failed: opening it, or reading its bytes (cut, corrupt tar). */
export type ShardStage = 'open' | 'read';

/** A shard that could not be read to its end; `samplesRead` of its samples were delivered first. */
export class ShardError extends TandemError {
  override readonly name = 'ShardError';
  /** 'shard-open': the shard could not be opened; 'shard-read': its bytes stopped or went bad. */
  readonly code: 'shard-open' | 'shard-read';
  constructor(
    readonly shard: string,
    readonly stage: ShardStage,
    readonly samplesRead: number,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(
      `shard ${shard}: ${stage} failed after ${samplesRead} sample(s), ${attempts} attempt(s): ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
    this.code = stage === 'open' ? 'shard-open' : 'shard-read';
  }
}

/** How one shard's bytes are parsed: WebDataset tar (the default) or token shards (token-shards.ts). */
export type ShardFormat = 'webdataset' | 'tokens';

/** The parse hook's options: everything else about reading shards is the same for every format. */
export interface ShardFormatOptions {
  format?: ShardFormat;
  /** For `format: 'tokens'`: llm.c's document delimiter, vocabulary size and the size limits. */
  tokenShards?: TokenShardOptions;
}

/** Refuses an unknown format where it is given, rather than reading tar shards by mistake. */
export function checkShardFormat(options: ShardFormatOptions, where: string): void {
  const format = options.format;
  if (format !== undefined && format !== 'webdataset' && format !== 'tokens')
    throw new OptionError(where, 'format', format, "'webdataset' or 'tokens'");
  if (format === 'tokens') tokenShardLimits(options.tokenShards, `${where}.tokenShards`);
}

export interface ShardReadOptions extends WebDatasetOptions, ShardFormatOptions {
  open: ShardOpener;
  /** Reads each shard's samples itself (open and format are then unused). */
  reader?: ShardSampleReader;
  /** Reopens after a failure mid-shard (default 2). Opening itself retries inside fetchStream. */
  reopenRetries?: number;
  signal?: AbortSignal;
}

/**
 * Yields the samples of `shard` from sample number `skip` on (earlier ones are read and dropped).
 * Ends by throwing a ShardError when the shard cannot be read to its end.
 */
export async function* readShard(shard: string, skip: number, options: ShardReadOptions): AsyncGenerator<WebDatasetItem> {
  checkShardFormat(options, 'readShard options');
  if (options.reader) {
    let delivered = skip;
    try {
      for await (const item of options.reader(shard, skip, options.signal)) {
        delivered++;
        yield item;
      }
    } catch (cause) {
      if (options.signal?.aborted) throw cause;
      throw new ShardError(shard, delivered === skip ? 'open' : 'read', delivered, 1, { cause });
    }
    return;
  }
  const retries = options.reopenRetries ?? 2;
  const shardName = options.shardName ?? shard;
  const parse = (stream: ReadableStream<Uint8Array>) =>
    options.format === 'tokens'
      ? tokenShardSamples(stream, { ...options.tokenShards, shardName })
      : webDatasetSamples(stream, { maxMemberBytes: options.maxMemberBytes, shardName });
  let delivered = skip;
  for (let attempt = 1; ; attempt++) {
    let stage: ShardStage = 'open';
    try {
      const stream = await options.open(shard, options.signal);
      stage = 'read';
      let index = 0;
      for await (const item of parse(stream)) {
        if (index++ < delivered) continue;
        delivered++;
        yield item;
      }
      return;
    } catch (cause) {
      if (options.signal?.aborted) throw cause;
      // A failed open already went through fetchStream's retries; a cut body gets reopened.
      if (stage === 'open' || attempt > retries) throw new ShardError(shard, stage, delivered, attempt, { cause });
    }
  }
}
