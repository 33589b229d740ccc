// bench/parquet.ts's Parquet files, written once into the cache with hyparquet-writer (as
// test/shared/parquet-loader-scenarios.ts's hubImageFile() writes them, row group by row group
// here so a file of gigabytes never sits in memory): Hub-shaped images (an `image` struct
// `{ bytes, path }`, an INT64 ClassLabel `label` whose names are in the `huggingface` key-value
// metadata, snappy as the Hub's conversion has it) and one `text` column of documents. A file's
// name is a hash of what went into it; it is written beside its final name and renamed, so a run
// cut short leaves no half file to be taken for a whole one.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import process from 'node:process';
import { fileWriter, ParquetWriter } from 'hyparquet-writer';

export interface ImageRow {
  path: string;
  label: number;
}

export interface WrittenFile {
  path: string;
  bytes: number;
  rows: number;
  rowGroups: number;
  /** Whether it was in the cache already. */
  cached: boolean;
  seconds: number;
}

const IMAGE_SCHEMA = [
  { name: 'root', num_children: 2 },
  { name: 'image', repetition_type: 'OPTIONAL' as const, num_children: 2 },
  { name: 'bytes', type: 'BYTE_ARRAY' as const, repetition_type: 'OPTIONAL' as const },
  { name: 'path', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
  { name: 'label', type: 'INT64' as const, repetition_type: 'REQUIRED' as const },
];

/** The `huggingface` metadata of an Image + ClassLabel dataset, as the Hub writes it. */
export const hubFeatures = (classes: readonly string[]): string =>
  JSON.stringify({ info: { features: { image: { _type: 'Image' }, label: { _type: 'ClassLabel', names: classes } } } });

function cached(path: string, rows: number, rowGroups: number): WrittenFile | undefined {
  return existsSync(path) ? { path, bytes: statSync(path).size, rows, rowGroups, cached: true, seconds: 0 } : undefined;
}

/**
 * `rows` (images of a folder, in its listing order, labels as listed) as a Hub-shaped Parquet file
 * in `dir`, `rowGroupRows` rows per row group; `repeat` times over (the rows again, keys and all:
 * a large file from a small corpus). Paths in the `image.path` field are relative to `root`.
 */
export function writeImageParquet(
  dir: string,
  root: string,
  rows: readonly ImageRow[],
  classes: readonly string[],
  rowGroupRows: number,
  repeat = 1,
): WrittenFile {
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 1, root, rowGroupRows, repeat, classes }))
    .update(rows.map((r) => `${r.path}\u0000${r.label}\u0000${statSync(r.path).size}`).join('\u0001'))
    .digest('hex')
    .slice(0, 16);
  const total = rows.length * repeat;
  const groups = Math.ceil(total / rowGroupRows);
  const path = `${dir}/images-${total}r-${rowGroupRows}g-${key}.parquet`;
  const hit = cached(path, total, groups);
  if (hit) return hit;
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const staging = `${path}.tmp-${process.pid}`;
  try {
    const writer = new ParquetWriter({
      writer: fileWriter(staging),
      schema: IMAGE_SCHEMA,
      kvMetadata: [{ key: 'huggingface', value: hubFeatures(classes) }],
    });
    for (let g = 0; g < groups; g++) {
      const picked: ImageRow[] = [];
      for (let r = g * rowGroupRows; r < Math.min(total, (g + 1) * rowGroupRows); r++) picked.push(rows[r % rows.length] as ImageRow);
      writer.write({
        columnData: [
          {
            name: 'image',
            data: picked.map((r) => ({ bytes: new Uint8Array(readFileSync(r.path)), path: r.path.slice(root.length + 1) })),
            statistics: false, // no min/max of JPEG bytes in the footer
          },
          { name: 'label', data: picked.map((r) => BigInt(r.label)) },
        ],
        rowGroupSize: picked.length,
      });
    }
    writer.finish();
    renameSync(staging, path);
  } finally {
    rmSync(staging, { force: true });
  }
  return { path, bytes: statSync(path).size, rows: total, rowGroups: groups, cached: false, seconds: (performance.now() - t0) / 1000 };
}

/** `documents` as a Parquet file with one `text` (UTF8) column, `rowGroupRows` rows per row group. */
export function writeTextParquet(dir: string, documents: readonly string[], rowGroupRows: number): WrittenFile {
  const key = createHash('sha256')
    .update(JSON.stringify({ v: 1, rowGroupRows }))
    .update(documents.join('\u0001'))
    .digest('hex')
    .slice(0, 16);
  const groups = Math.ceil(documents.length / rowGroupRows);
  const path = `${dir}/text-${documents.length}r-${rowGroupRows}g-${key}.parquet`;
  const hit = cached(path, documents.length, groups);
  if (hit) return hit;
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const staging = `${path}.tmp-${process.pid}`;
  try {
    const writer = new ParquetWriter({
      writer: fileWriter(staging),
      schema: [
        { name: 'root', num_children: 1 },
        { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      ],
    });
    for (let g = 0; g < groups; g++) {
      const data = documents.slice(g * rowGroupRows, (g + 1) * rowGroupRows);
      writer.write({ columnData: [{ name: 'text', data, statistics: false }], rowGroupSize: data.length });
    }
    writer.finish();
    renameSync(staging, path);
  } finally {
    rmSync(staging, { force: true });
  }
  return {
    path,
    bytes: statSync(path).size,
    rows: documents.length,
    rowGroups: groups,
    cached: false,
    seconds: (performance.now() - t0) / 1000,
  };
}
