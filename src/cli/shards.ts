// `tandem shards`: an ImageNet-style folder → WebDataset tar shards for streaming (from disk or a URL).
import { writeFolderShards } from '../sources/index.ts';
import { UsageError } from './args.ts';

export const SHARDS_HELP = `usage: tandem shards --data DIR --out DIR [--shard-size BYTES] [--per-shard N] [--seed N] [--no-shuffle] [--prefix NAME]

  Writes the images of an ImageNet-style folder (one subfolder per class) as WebDataset tar
  shards: sample i is 000000i.<ext> (the file's bytes) + 000000i.cls (its label, classes sorted
  by name). Samples go in a seeded shuffled order so every shard mixes the classes. A shard is
  closed before it would exceed --shard-size bytes (suffixes k, M, G allowed; default 256M) or
  holds --per-shard samples. Also writes OUT/shards.json (classes, sample count, shards).`;

/** "256M" → 268435456; plain numbers are bytes. */
export function parseBytes(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kKmMgG]?)i?[bB]?$/.exec(text.trim());
  if (!match) throw new UsageError(`not a size in bytes: ${JSON.stringify(text)} (e.g. 100000, 64M, 1G)`);
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.floor(Number(match[1]) * scale);
}

const human = (bytes: number) =>
  bytes < 1024 ** 2
    ? `${(bytes / 1024).toFixed(1)} KiB`
    : bytes < 1024 ** 3
      ? `${(bytes / 1024 ** 2).toFixed(1)} MiB`
      : `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

function positiveInt(flags: Map<string, string>, name: string): number | undefined {
  const raw = flags.get(name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (name === 'seed' ? 0 : 1))
    throw new UsageError(`--${name} must be a ${name === 'seed' ? 'non-negative' : 'positive'} integer, got ${raw}`);
  return value;
}

/** Runs the subcommand; returns the exit code (2 for usage errors). */
export async function runShards(flags: Map<string, string>, log: (line: string) => void): Promise<number> {
  if (flags.has('help')) {
    log(SHARDS_HELP);
    return 0;
  }
  const data = flags.get('data');
  const out = flags.get('out');
  let shardBytes: number | undefined;
  let perShard: number | undefined;
  let seed: number | undefined;
  try {
    if (!data || data === 'true' || !out || out === 'true') throw new UsageError('--data DIR and --out DIR are required');
    const size = flags.get('shard-size');
    shardBytes = size === undefined ? (flags.has('per-shard') ? undefined : parseBytes('256M')) : parseBytes(size);
    perShard = positiveInt(flags, 'per-shard');
    seed = positiveInt(flags, 'seed');
  } catch (error) {
    log(`tandem shards: ${error instanceof Error ? error.message : String(error)}\n\n${SHARDS_HELP}`);
    return 2;
  }
  const started = performance.now();
  const manifest = await writeFolderShards(data, {
    out,
    prefix: flags.get('prefix') ?? 'shard',
    shardBytes,
    perShard,
    seed,
    shuffle: !flags.has('no-shuffle'),
    onShard: (s) => log(`${out}/${s.name}: ${s.samples} samples, ${human(s.bytes)}`),
  });
  const total = manifest.shards.reduce((n, s) => n + s.bytes, 0);
  log(
    `${manifest.samples} samples in ${manifest.classes.length} classes → ${manifest.shards.length} shards (${human(total)}) in ${((performance.now() - started) / 1000).toFixed(1)} s; manifest ${out}/shards.json`,
  );
  return 0;
}
