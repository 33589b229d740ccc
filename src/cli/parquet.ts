// `tandem parquet`: an ImageNet-style folder (or a folder of text files) → Hub-shaped Parquet
// shards, `OUT/<config>/<split>/NNNN.parquet`, which loader({ parquet }) and textLoader read.
import { writeParquet, type ParquetCompression, type ParquetRow } from '../parquet/index.ts';
import { listDir, readFile } from '../runtime/index.ts';
import { listImageFolder } from '../sources/index.ts';
import { UsageError } from './args.ts';

export const PARQUET_HELP = `usage: tandem parquet --data DIR --out DIR [--text] [--rows-per-group N] [--rows-per-file N] [--compression snappy|gzip|brotli|zstd|none] [--config NAME] [--split NAME]

  Writes an ImageNet-style folder (one subfolder per class, classes sorted by name) as Parquet
  files laid out as the Hugging Face Hub's conversion: OUT/<config>/<split>/0000.parquet, … with
  an image column (the Hub's Image struct { bytes, path }: the file's bytes and its path) and a
  label column (a ClassLabel: its names in the files' huggingface metadata). With --text, every
  .txt/.md file under DIR is one row of a text column. Rows go in the folder's order; a loader
  shuffles them. Defaults: config default, split train, 256 rows a row group (text 1000), 8192
  rows a file, snappy (zstd where the runtime compresses it).`;

function positiveInt(flags: Map<string, string>, name: string): number | undefined {
  const raw = flags.get(name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive integer, got ${raw}`);
  return value;
}

async function* imageRows(files: { path: string; label: number }[], root: string): AsyncGenerator<ParquetRow> {
  for (const f of files) yield { key: f.path.slice(root.length + 1), bytes: await readFile(f.path), label: f.label };
}

async function* textRows(root: string): AsyncGenerator<ParquetRow> {
  const walk = async function* (dir: string): AsyncGenerator<string> {
    for (const e of (await listDir(dir)).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.isDirectory) yield* walk(`${dir}/${e.name}`);
      else if (/\.(txt|md|text)$/i.test(e.name)) yield `${dir}/${e.name}`;
    }
  };
  const decoder = new TextDecoder();
  for await (const path of walk(root)) yield { key: path.slice(root.length + 1), text: decoder.decode(await readFile(path)) };
}

/** Runs the subcommand; returns the exit code (2 for usage errors). */
export async function runParquet(flags: Map<string, string>, log: (line: string) => void): Promise<number> {
  if (flags.has('help')) {
    log(PARQUET_HELP);
    return 0;
  }
  const data = flags.get('data')?.replace(/\/+$/, '');
  const out = flags.get('out');
  let rowsPerGroup: number | undefined;
  let rowsPerFile: number | undefined;
  const compression = (flags.get('compression') ?? 'snappy') as ParquetCompression;
  try {
    if (!data || data === 'true' || !out || out === 'true') throw new UsageError('--data DIR and --out DIR are required');
    rowsPerGroup = positiveInt(flags, 'rows-per-group');
    rowsPerFile = positiveInt(flags, 'rows-per-file');
    if (!['snappy', 'gzip', 'brotli', 'zstd', 'none'].includes(compression))
      throw new UsageError(`--compression takes snappy, gzip, brotli, zstd or none, got ${JSON.stringify(compression)}`);
  } catch (error) {
    log(`tandem parquet: ${error instanceof Error ? error.message : String(error)}\n\n${PARQUET_HELP}`);
    return 2;
  }
  const started = performance.now();
  const text = flags.has('text');
  const folder = text ? undefined : await listImageFolder(data);
  const written = await writeParquet(text ? textRows(data) : imageRows(folder?.files ?? [], data), {
    out,
    ...(folder ? { classes: folder.classes } : {}),
    ...(flags.has('config') ? { config: flags.get('config') } : {}),
    ...(flags.has('split') ? { split: flags.get('split') } : {}),
    ...(rowsPerGroup === undefined ? {} : { rowsPerGroup }),
    ...(rowsPerFile === undefined ? {} : { rowsPerFile }),
    compression,
    onFile: (f) => log(`${f.path}: ${f.rows} rows, ${(f.bytes / 1024 ** 2).toFixed(1)} MiB`),
  });
  if (written.rows === 0) {
    log(`tandem parquet: no ${text ? 'text files' : 'images'} under ${data}`);
    return 1;
  }
  const classes = folder ? `, ${folder.classes.length} classes` : '';
  log(`${written.rows} rows${classes} → ${written.files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}
