// Training data streamed from WebDataset tar shards (as `tandem shards` writes them: `<key>.<image
// ext>` + `<key>.cls`, and a shards.json manifest), local or over HTTP, split across ranks by
// ShardStream. The session sees one byte source per sample and never holds the dataset.
import { TrainingError } from './errors.ts';
import { isFailure, ShardStream, SourceError, type ShardManifest, type ShardStreamOptions } from '../sources/index.ts';
import type { LabelledSource, LabelledData } from './sources.ts';

const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'bmp', 'gif'];

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
  return {
    train: [],
    held,
    classes: manifest.classes,
    stream: {
      count,
      open: (seed, epochs) => samples(new ShardStream(shards, { bufferSize: 256, ...streamOptions, seed, epochs })),
    },
  };
}

async function* samples(stream: ShardStream): AsyncGenerator<LabelledSource> {
  for await (const item of stream) {
    const key = `${item.shard}#${item.key}`;
    if (isFailure(item)) {
      // Lost samples travel on as sources that fail when read: the loader reports them by key.
      const error = item.error;
      yield { key, label: -1, read: () => Promise.reject(error) };
      continue;
    }
    const ext = IMAGE_EXTENSIONS.find((e) => item.files[e] !== undefined);
    const cls = item.files.cls;
    const label = cls ? Number(new TextDecoder().decode(cls).trim()) : Number.NaN;
    if (ext === undefined || !Number.isInteger(label) || label < 0) {
      const why = new SourceError(
        'unsupported-type',
        key,
        `${key}: a sample needs an image member (${IMAGE_EXTENSIONS.join('/')}) and a numeric .cls`,
      );
      yield { key, label: -1, read: () => Promise.reject(why) };
      continue;
    }
    const bytes = item.files[ext]!;
    yield { key, label, read: () => Promise.resolve(bytes) };
  }
}
