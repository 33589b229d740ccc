// Training data streamed from WebDataset tar shards (as `tandem shards` writes them: `<key>.<image
// ext>` + `<key>.cls`, and a shards.json manifest), local or over HTTP, split across ranks by
// ShardStream. The session sees one byte source per sample and never holds the dataset.
import { CheckpointError, keysHash } from './checkpoint.ts';
import { shardSamples } from '../loader/index.ts';
import { PARQUET_LAYOUT, parquetStreamOptions, type ParquetShards } from '../loader/internal.ts';
import { TrainingError } from './errors.ts';
import { resolvePartition, ShardStream, type ShardManifest, type ShardStreamOptions, type ShardStreamState } from '../sources/index.ts';
import type { LabelledSource, LabelledData, PositionedStream } from './sources.ts';

export interface ShardDataOptions extends Omit<ShardStreamOptions, 'seed' | 'epochs'> {
  /** Held-out sources, evaluated after every epoch (default none). */
  held?: readonly LabelledSource[];
}

/**
 * `manifest` is the parsed shards.json; `base` the directory or URL it came from (shard names are
 * relative to it). The shuffle buffer defaults to 256 samples.
 */
export function shardData(manifest: ShardManifest, base: string, options: ShardDataOptions = {}): LabelledData {
  if (manifest.format !== 'webdataset' || !Array.isArray(manifest.shards))
    throw new TrainingError('bad-manifest', `${base}: not a shards.json written by tandem shards`);
  const root = base.replace(/\/+$/, '');
  const shards = manifest.shards.map((s) => `${root}/${s.name}`);
  const samplesOf = new Map(manifest.shards.map((s) => [`${root}/${s.name}`, s.samples]));
  const { held = [], ...streamOptions } = options;
  const probe = new ShardStream(shards, { ...streamOptions, epochs: 1 });
  const count = probe.shardsFor(0).reduce((sum, shard) => sum + (samplesOf.get(shard) ?? 0), 0);
  const dataKey = keysHash(manifest.shards.map((s) => `${s.name}:${s.samples}`));
  const open = (seed: number, epochs: number, from?: unknown): PositionedStream => {
    const defaults = { bufferSize: 256, ...streamOptions, epochs };
    const stream = from === undefined ? new ShardStream(shards, { ...defaults, seed }) : resumeStream(shards, from, seed, defaults);
    return Object.assign(shardSamples(stream), { stateAfter: (n: number) => stream.stateAt(n) });
  };
  return { train: [], held, classes: manifest.classes, stream: { count, dataKey, open } };
}

/**
 * Training data streamed from a Parquet or Hub source's row groups (loader/parquet.ts opened them):
 * the same shard stream, each row group a shard, rows keyed `file#row`. `close` the returned
 * `parquet` when training ends.
 */
export function parquetData(parquet: ParquetShards, options: ShardDataOptions = {}): LabelledData {
  const { held = [], ...rest } = options;
  const streamOptions: ShardStreamOptions = { ...rest, ...parquetStreamOptions(parquet) };
  const rowsOf = new Map(parquet.shards.map((name, i) => [name, parquet.rows[i] ?? 0]));
  const probe = new ShardStream(parquet.shards, { ...streamOptions, epochs: 1 });
  const count = probe.shardsFor(0).reduce((sum, shard) => sum + (rowsOf.get(shard) ?? 0), 0);
  const open = (seed: number, epochs: number, from?: unknown): PositionedStream => {
    const defaults = { bufferSize: parquet.shuffleBuffer ?? 256, ...streamOptions, epochs };
    const stream =
      from === undefined ? new ShardStream(parquet.shards, { ...defaults, seed }) : resumeStream(parquet.shards, from, seed, defaults);
    return Object.assign(shardSamples(stream, PARQUET_LAYOUT), { stateAfter: (n: number) => stream.stateAt(n) });
  };
  return { train: [], held, classes: parquet.classes, stream: { count, dataKey: keysHash([parquet.fingerprint]), open } };
}

/** A stream continuing from a saved position, which must be this rank's of the same shards and seed. */
function resumeStream(shards: readonly string[], from: unknown, seed: number, options: ShardStreamOptions): ShardStream {
  const state = from as Partial<ShardStreamState> | null;
  if (state?.kind !== 'tandem.shards') throw new CheckpointError('malformed', "the checkpoint's data position is not a shard stream's");
  const here = resolvePartition(options);
  const differences = [
    state.shardCount !== shards.length && `shards ${state.shardCount} → ${shards.length}`,
    state.seed !== seed && `seed ${state.seed} → ${seed}`,
    (state.consumer !== here.consumer || state.consumers !== here.consumers) &&
      `consumer ${state.consumer} of ${state.consumers} → ${here.consumer} of ${here.consumers} ` +
        "(to resume with another world size, regroup every rank's position with regroupShardStates)",
  ].filter(Boolean);
  if (differences.length > 0) throw new CheckpointError('mismatch', `the data position is another stream's: ${differences.join('; ')}`);
  return ShardStream.fromState(shards, state as ShardStreamState, options);
}
