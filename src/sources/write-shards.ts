// Turns labelled files into WebDataset tar shards of a chosen size: one file at a time is read and
// streamed into the current shard, so memory holds one sample however large the dataset.
import { createFileWriter, makeDir, readFile, writeFileAtomic, type FileWriter } from '../runtime/index.ts';
import { listImageFolder, type LabelledFile } from './folder.ts';
import { shuffledEpoch } from './sampling.ts';
import { TAR_END_BYTES, tarMemberBytes, TarWriter } from './tar-writer.ts';

export interface ShardWriteOptions {
  /** Output folder; shards are named `${prefix}-000000.tar` ... */
  out: string;
  prefix?: string;
  /** Start a new shard before it would exceed this many bytes (a single larger sample gets a shard of its own). */
  shardBytes?: number;
  /** At most this many samples per shard. */
  perShard?: number;
  onShard?: (shard: ShardInfo) => void;
}

export interface ShardInfo {
  name: string;
  samples: number;
  bytes: number;
}

export interface ShardManifest {
  format: 'webdataset';
  classes: string[];
  samples: number;
  shards: ShardInfo[];
}

/** The member extension for a file: its lower-cased extension, "jpeg" kept as written. */
const extensionOf = (path: string) => /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? 'bin';

/**
 * Writes `files` (in the order given) as shards: sample i is `${key}.${ext}` (the file's bytes)
 * and `${key}.cls` (its label as decimal text), with key = i zero-padded to 9 digits.
 */
export async function writeShards(
  files: Iterable<LabelledFile> | AsyncIterable<LabelledFile>,
  options: ShardWriteOptions,
): Promise<ShardInfo[]> {
  const { out, prefix = 'shard', shardBytes = Infinity, perShard = Infinity } = options;
  if (!(shardBytes > 0) || !(perShard >= 1)) throw new RangeError('shardBytes must be positive and perShard at least 1');
  await makeDir(out);
  const shards: ShardInfo[] = [];
  let writer: FileWriter | undefined;
  let tar: TarWriter | undefined;
  let current: ShardInfo | undefined;
  const close = async () => {
    if (!writer || !tar || !current) return;
    await tar.end();
    await writer.close();
    current.bytes = tar.bytesWritten;
    shards.push(current);
    options.onShard?.(current);
    writer = tar = current = undefined;
  };
  let index = 0;
  try {
    for await (const file of files) {
      const key = String(index++).padStart(9, '0');
      const data = await readFile(file.path);
      const label = new TextEncoder().encode(String(file.label));
      const image = `${key}.${extensionOf(file.path)}`;
      const sampleBytes = tarMemberBytes(image, data.length) + tarMemberBytes(`${key}.cls`, label.length);
      if (tar && current && (current.samples >= perShard || tar.bytesWritten + sampleBytes + TAR_END_BYTES > shardBytes)) await close();
      if (!tar) {
        current = { name: `${prefix}-${String(shards.length).padStart(6, '0')}.tar`, samples: 0, bytes: 0 };
        const opened = await createFileWriter(`${out}/${current.name}`);
        writer = opened;
        tar = new TarWriter((chunk) => opened.write(chunk));
      }
      await tar.add(image, data);
      await tar.add(`${key}.cls`, label);
      current!.samples++;
    }
    await close();
  } catch (error) {
    await writer?.abort().catch(() => undefined);
    throw error;
  }
  return shards;
}

/**
 * An ImageNet-style folder (one subfolder per class) as shards, samples in a seeded shuffled order
 * so that each shard mixes the classes, plus `shards.json` (classes, sample count, shard list).
 */
export async function writeFolderShards(
  data: string,
  options: ShardWriteOptions & { seed?: number; shuffle?: boolean },
): Promise<ShardManifest> {
  const { files, classes } = await listImageFolder(data);
  const order = options.shuffle === false ? files : shuffledEpoch(files, options.seed ?? 0, 0);
  const shards = await writeShards(order, options);
  const manifest: ShardManifest = { format: 'webdataset', classes, samples: files.length, shards };
  await writeFileAtomic(`${options.out}/shards.json`, new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`));
  return manifest;
}
