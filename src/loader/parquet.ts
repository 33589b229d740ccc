// Parquet as a source of every loader: `{ parquet: [files], image?, label?, text? }` or a dataset
// on the Hugging Face Hub, `{ hf: 'owner/name', split, config?, revision? }`. Each row group is a
// shard of the shard stream (src/sources/shard-stream.ts), so rows get what shards' samples have:
// a seeded row-group order per epoch, this rank's share of row groups, a seeded shuffle buffer of
// rows, an exact resumable state and elastic regrouping. One row group's asked columns are read
// (by byte ranges) and decoded at a time; its rows become samples keyed `file#row`.
import { OptionError } from '../errors/index.ts';
import {
  classLabelNames,
  hfPathToUrl,
  openParquetDataset,
  resolveHubDataset,
  type ColumnKind,
  type ParquetDataset,
  type ParquetInput,
  type RowGroupData,
} from '../parquet/index.ts';
import { env } from '../runtime/index.ts';
import { isParquetSource, ROW_DATA, type HubSource, type ParquetSource } from './parquet-source.ts';
import type { LabelledSource } from './labelled-source.ts';
import { SourceError, type FetchOptions, type ShardSampleReader, type WebDatasetItem } from '../sources/index.ts';

/** A Parquet dataset opened as shards: one per row group, with the reader the shard stream calls. */
export interface ParquetShards {
  dataset: ParquetDataset;
  /** One name per row group, `file#rowgroup=N`. */
  shards: readonly string[];
  /** Rows in each row group (for regroupShardStates' balance). */
  rows: readonly number[];
  reader: ShardSampleReader;
  /** The shard stream's hint of the row group it reads next: read ahead, one row group at most. */
  prefetch: (shard: string) => void;
  /** Stops reads ahead and closes the files. */
  close(): Promise<void>;
  /** Class names by label, from the ClassLabel metadata or the sorted string labels; [] without labels. */
  classes: readonly string[];
  /** The columns read, by role. */
  columns: { data: string; label: string | undefined };
  /** What a saved state must match: the files and the columns. */
  fingerprint: string;
  shuffleBuffer: number | undefined;
}

const ROW_TEXT = 'txt';
const ROW_LABEL = 'cls';

/** The first of `names` that is a column of one of `kinds`. */
const named = (columns: ReadonlyMap<string, ColumnKind>, kinds: ColumnKind[], names: string[]) =>
  names.find((n) => kinds.includes(columns.get(n) ?? 'other') && columns.has(n));

/** The one column of `kinds`, when the file has exactly one (two would be a guess between them). */
function lone(columns: ReadonlyMap<string, ColumnKind>, kinds: ColumnKind[]): string | undefined {
  const fitting = [...columns].filter(([, kind]) => kinds.includes(kind));
  return fitting.length === 1 ? fitting[0]?.[0] : undefined;
}

/** What a row holds for each loader: an image, a video (both the Hub's `{ bytes, path }` struct, or bytes) or a text. */
type Role = 'image' | 'video' | 'text';

/** The columns a source's rows are read from, and the label ids of string labels. */
interface PickedColumns {
  data: string;
  label: string | undefined;
  classes: readonly string[];
  labelIds: Map<string, number> | undefined;
  /** String labels: each row group's label column, read once to name the classes. */
  labelColumns?: ReadonlyArray<ReturnType<RowGroupData['column']>>;
}

/** Opens the files of a Parquet or Hub source (every footer, once); closes them again if `use` fails. */
async function withDataset<T>(
  source: ParquetSource | HubSource,
  fetch: FetchOptions,
  where: string,
  use: (dataset: ParquetDataset) => Promise<T>,
): Promise<T> {
  const { inputs, headers } = await parquetInputs(source, fetch, where);
  const dataset = await openParquetDataset(inputs, { fetch: { ...fetch, headers: { ...fetch.headers, ...headers } } });
  try {
    return await use(dataset);
  } catch (error) {
    await dataset.close();
    throw error;
  }
}

/**
 * The data column for `role` (the one named, else the Hub feature of that type, else a column of a
 * fitting type and name) and, for images and videos, the label column with its class names.
 */
async function pickColumns(dataset: ParquetDataset, source: ParquetSource | HubSource, role: Role, where: string): Promise<PickedColumns> {
  const features = dataset.features;
  const featureNames = (type: string) => (features ? Object.keys(features).filter((k) => features[k]?._type === type) : []);
  const field = role === 'text' ? 'text' : role;
  const given = role === 'text' ? source.text : role === 'image' ? source.image : source.video;
  const columns = dataset.columns;
  const data =
    given ??
    (role === 'text'
      ? (named(columns, ['string'], ['text', 'content']) ?? lone(columns, ['string']))
      : (named(columns, ['image'], featureNames(role === 'image' ? 'Image' : 'Video')) ??
        named(columns, ['image', 'binary'], role === 'image' ? ['image', 'img', 'bytes'] : ['video', 'bytes']) ??
        lone(columns, ['image', 'binary'])));
  if (data === undefined)
    throw new OptionError(
      where,
      `source.${field}`,
      undefined,
      `the name of the ${role} column (none found among ${[...dataset.columns.keys()].join(', ')})`,
    );
  checkColumn(dataset, data, role === 'text' ? ['string', 'binary'] : ['image', 'binary'], where, field);
  if (role === 'text') return { data, label: undefined, classes: [], labelIds: undefined };
  // Only a label by name or by its ClassLabel feature: any other integer or string column (an id, a
  // caption) taken as the label would make every value a class.
  const label = source.label ?? named(columns, ['integer', 'string'], [...featureNames('ClassLabel'), 'label', 'labels', 'class']);
  if (label === undefined) return { data, label, classes: [], labelIds: undefined };
  if (checkColumn(dataset, label, ['integer', 'string'], where, 'label') === 'integer')
    return { data, label, classes: (features && classLabelNames(features, label)) ?? [], labelIds: undefined };
  // String labels become ids in sorted order, as a folder's class names do: one pass over the label column.
  const names = new Set<string>();
  const labelColumns = [];
  for (let g = 0; g < dataset.rowGroups.length; g++) {
    const column = (await dataset.readRowGroup(g, [label])).column(label);
    labelColumns.push(column);
    for (const v of column) if (typeof v === 'string') names.add(v);
  }
  const classes = [...names].sort();
  return { data, label, classes, labelIds: new Map(classes.map((n, i) => [n, i])), labelColumns };
}

/**
 * Opens the files of a Parquet or Hub source (every footer, once) and picks the columns: `role`
 * 'image' reads an image column and a label column, 'text' a text column.
 */
export async function openParquetShards(
  source: ParquetSource | HubSource,
  role: 'image' | 'text',
  fetch: FetchOptions,
  where: string,
): Promise<ParquetShards> {
  const shuffleBuffer = source.shuffleBuffer;
  if (shuffleBuffer !== undefined && (!Number.isInteger(shuffleBuffer) || shuffleBuffer < 1))
    throw new OptionError(where, 'source.shuffleBuffer', shuffleBuffer, 'a positive integer');
  return withDataset(source, fetch, where, async (dataset) => {
    const { data, label, classes, labelIds } = await pickColumns(dataset, source, role, where);
    const columns = label === undefined ? [data] : [data, label];
    const shards = dataset.rowGroups.map((g) => `${dataset.files[g.file]}#rowgroup=${g.group}`);
    const index = new Map(shards.map((name, i) => [name, i]));
    const member = role === 'image' ? ROW_DATA : ROW_TEXT;
    const ahead = new ReadAhead((group, signal) => dataset.readRowGroup(group, columns, { signal }));
    const reader: ShardSampleReader = (shard, skip, signal) =>
      readRows(dataset, index.get(shard), ahead, { shard, skip, signal, columns, labelIds, member });
    return {
      dataset,
      shards,
      rows: dataset.rowGroups.map((g) => g.rows),
      reader,
      prefetch: (shard) => {
        const group = index.get(shard);
        if (group !== undefined) ahead.prefetch(group);
      },
      close: async () => {
        ahead.close();
        await dataset.close();
      },
      classes,
      columns: { data, label },
      fingerprint: JSON.stringify({ files: dataset.files, columns, rowGroups: dataset.rowGroups.map((g) => g.rows) }),
      shuffleBuffer,
    };
  });
}

/** A Parquet source's rows as a list (videos: each row is one item, shuffled and shared by rank as files are). */
export interface ParquetRows {
  list: readonly LabelledSource[];
  classes: readonly string[];
  close(): Promise<void>;
}

/** Row groups whose data column is held for the rows still to be read from them. */
const HELD_ROW_GROUPS = 2;

/**
 * The rows of a Parquet or Hub source as random-access items, for the video loader: labels are
 * read up front (the label column only), and a row's bytes when the loader reads it, from its row
 * group's data column. The last HELD_ROW_GROUPS row groups read are kept, so rows read in file
 * order cost one read per row group; a shuffled order may read a row group once per row (keep
 * video row groups small: `writeParquet`'s `rowsPerGroup`).
 */
export async function openParquetRows(source: ParquetSource | HubSource, fetch: FetchOptions, where: string): Promise<ParquetRows> {
  return withDataset(source, fetch, where, async (dataset) => {
    const { data, label, classes, labelIds, labelColumns } = await pickColumns(dataset, source, 'video', where);
    const held = new Map<number, Promise<RowGroupData>>();
    const groupData = (group: number): Promise<RowGroupData> => {
      let read = held.get(group);
      if (read) held.delete(group);
      else {
        read = dataset.readRowGroup(group, [data]);
        // A failed read is not kept: the next row of the group tries again.
        read.catch(() => held.delete(group));
      }
      held.set(group, read); // the most recent last
      for (const oldest of held.keys()) if (held.size > HELD_ROW_GROUPS) held.delete(oldest);
      return read;
    };
    const list: LabelledSource[] = [];
    for (let g = 0; g < dataset.rowGroups.length; g++) {
      const ref = dataset.rowGroups[g];
      if (!ref) continue;
      // String labels were read once already, to name the classes.
      const labels = label === undefined ? undefined : (labelColumns?.[g] ?? (await dataset.readRowGroup(g, [label])).column(label));
      const file = dataset.files[ref.file] ?? `file ${ref.file}`;
      for (let i = 0; i < ref.rows; i++) {
        const key = `${file}#${ref.firstRow + i}`;
        list.push({
          key,
          // An unlabelled row (null, or not a class) is -1, as an unlabelled file is.
          label: classId(labels?.[i], labelIds) ?? -1,
          read: async () => {
            const value = (await groupData(g)).column(data)[i];
            if (value instanceof Uint8Array) return value;
            throw new SourceError('unsupported-type', key, `${key}: ${data} is ${value === null ? 'null' : typeof value}`);
          },
        });
      }
    }
    return {
      list,
      classes,
      close: async () => {
        held.clear();
        await dataset.close();
      },
    };
  });
}

function checkColumn(dataset: ParquetDataset, name: string, kinds: ColumnKind[], where: string, role: string): ColumnKind {
  const kind = dataset.columns.get(name);
  if (kind === undefined || !kinds.includes(kind))
    throw new OptionError(
      where,
      `source.${role}`,
      name,
      `a ${kinds.join(' or ')} column of the files (${kind === undefined ? 'no such column' : `it is ${kind}`}; columns: ${[...dataset.columns.keys()].join(', ')})`,
    );
  return kind;
}

/**
 * One row group read ahead of the one being consumed, so that its reading (a remote file's round
 * trips) overlaps the rows before it. Memory: at most one more row group's columns. A hint that is
 * not taken (a restore read other groups) is aborted when the next hint comes, and close() aborts all.
 */
class ReadAhead {
  readonly #pending = new Map<number, { data: Promise<RowGroupData>; stop: AbortController }>();
  #closed = false;

  constructor(private readonly read: (group: number, signal: AbortSignal) => Promise<RowGroupData>) {}

  prefetch(group: number): void {
    if (this.#closed || this.#pending.has(group)) return;
    for (const [other, entry] of this.#pending) {
      entry.stop.abort();
      this.#pending.delete(other);
    }
    const stop = new AbortController();
    const data = this.read(group, stop.signal);
    // Taken later, or dropped: either way its failure is not an unhandled rejection here.
    data.catch(() => {});
    this.#pending.set(group, { data, stop });
  }

  /** The row group, from the read ahead when there is one, else read now. */
  take(group: number, signal: AbortSignal | undefined): Promise<RowGroupData> {
    const entry = this.#pending.get(group);
    if (entry) {
      this.#pending.delete(group);
      if (signal) {
        // The stream's stop ends the read ahead too; the listener goes once the read settles.
        const stop = () => entry.stop.abort();
        if (signal.aborted) stop();
        else {
          signal.addEventListener('abort', stop, { once: true });
          void entry.data.finally(() => signal.removeEventListener('abort', stop)).catch(() => {});
        }
      }
      return entry.data;
    }
    return this.read(group, signal ?? new AbortController().signal);
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#pending.values()) entry.stop.abort();
    this.#pending.clear();
  }
}

/** A row without a class: a null label, or a negative integer (the Hub's test splits mark theirs -1). */
const unlabelled = (raw: unknown) => raw === null || raw === undefined || (typeof raw === 'number' && Number.isInteger(raw) && raw < 0);

/** A row's class: an integer label ≥ 0, or a string label's id; undefined when it is neither. */
function classId(raw: unknown, labelIds: ReadonlyMap<string, number> | undefined): number | undefined {
  const id = typeof raw === 'string' ? labelIds?.get(raw) : raw;
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 ? id : undefined;
}

/**
 * The rows of one row group from number `skip` on, as samples: the data's bytes and the label as
 * text; an unlabelled row (no label column, a null or negative label) has no label member.
 */
async function* readRows(
  dataset: ParquetDataset,
  group: number | undefined,
  ahead: ReadAhead,
  read: {
    shard: string;
    skip: number;
    signal: AbortSignal | undefined;
    columns: readonly string[];
    labelIds: Map<string, number> | undefined;
    member: string;
  },
): AsyncGenerator<WebDatasetItem> {
  const { shard, skip, signal, columns, labelIds, member } = read;
  const ref = group === undefined ? undefined : dataset.rowGroups[group];
  const [dataColumn, labelColumn] = columns;
  if (group === undefined || ref === undefined || dataColumn === undefined)
    throw new SourceError('truncated', shard, `${shard}: not a row group of this dataset`);
  const rows = await ahead.take(group, signal);
  const values = rows.column(dataColumn);
  const labels = labelColumn === undefined ? undefined : rows.column(labelColumn);
  const file = dataset.files[ref.file] ?? shard;
  const encoder = new TextEncoder();
  for (let i = skip; i < rows.rows; i++) {
    const key = String(ref.firstRow + i);
    const value = values[i];
    const data = value instanceof Uint8Array ? value : typeof value === 'string' ? encoder.encode(value) : undefined;
    const raw = labels?.[i];
    const label = classId(raw, labelIds);
    if (data === undefined) {
      yield {
        key,
        stage: 'sample',
        error: new SourceError(
          'unsupported-type',
          `${file}#${key}`,
          `${file}#${key}: ${dataColumn} is ${value === null ? 'null' : typeof value}`,
        ),
      };
      continue;
    }
    if (labels !== undefined && label === undefined && !unlabelled(raw)) {
      yield {
        key,
        stage: 'sample',
        error: new SourceError('unsupported-type', `${file}#${key}`, `${file}#${key}: label ${String(raw)} is not a class`),
      };
      continue;
    }
    yield { key, files: label === undefined ? { [member]: data } : { [member]: data, [ROW_LABEL]: encoder.encode(String(label)) } };
  }
}

/** The files a source names: its own list, an hf:// path, or a Hub dataset's Parquet conversion. */
async function parquetInputs(
  source: ParquetSource | HubSource,
  fetch: FetchOptions,
  where: string,
): Promise<{ inputs: readonly ParquetInput[]; headers: Record<string, string> }> {
  if (isParquetSource(source)) {
    if (source.parquet.length === 0) throw new OptionError(where, 'source.parquet', source.parquet, 'a non-empty list of Parquet files');
    return { inputs: source.parquet, headers: {} };
  }
  const options = {
    ...(source.endpoint === undefined ? {} : { endpoint: source.endpoint }),
    ...(source.token === undefined ? {} : { token: source.token }),
    fetch,
  };
  if (source.hf.startsWith('hf://')) {
    const token = source.token ?? env('HF_TOKEN');
    return { inputs: [hfPathToUrl(source.hf, options)], headers: token ? { Authorization: `Bearer ${token}` } : {} };
  }
  if (source.split === undefined) throw new OptionError(where, 'source.split', undefined, "the split to read ('train', 'test', …)");
  const listed = await resolveHubDataset(
    {
      hf: source.hf,
      split: source.split,
      ...(source.config === undefined ? {} : { config: source.config }),
      ...(source.revision === undefined ? {} : { revision: source.revision }),
    },
    options,
  );
  return { inputs: listed.urls, headers: listed.headers };
}
