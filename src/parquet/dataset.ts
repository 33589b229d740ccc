// A Parquet dataset: files (local, remote, browser) opened together, their footers read once, and
// every row group of every file listed in file order, to be read by number, some columns at a time.
// Row groups are the unit of random access and of sharding: a loader picks groups, not rows.
import { snappyUncompress } from './snappy.ts';
import type { Compressors } from 'hyparquet';
import { asError, invariant, OptionChecker, OptionError } from '../errors/index.ts';
import type { FetchOptions } from '../sources/index.ts';
import { type ByteSource, displayName, openByteSource, type ParquetInput } from './bytes.ts';
import { ParquetError } from './errors.ts';
import { type HubFeature, hubFeatures } from './features.ts';
import type { Footer } from './footer.ts';
import { type CellValue, type ColumnKind, columnKinds, convertColumn } from './schema.ts';

export type { ParquetInput } from './bytes.ts';
export type { ColumnKind } from './schema.ts';

export interface ParquetDatasetOptions {
  /** Headers (Authorization for gated sets), timeouts, retries and signal for remote files. */
  fetch?: FetchOptions;
  /** The largest footer read; checked against the file's footer length before reading it. Default 32 MiB. */
  maxFooterBytes?: number;
  /**
   * The largest column chunk read, compressed or decompressed, and the largest page decompressed;
   * a row group's chunk over it fails `limit` before any of its bytes are read. Default 512 MiB.
   */
  maxColumnChunkBytes?: number;
}

export interface RowGroupRef {
  /** Index into `files`. */
  readonly file: number;
  /** The row group's index within its file. */
  readonly group: number;
  readonly rows: number;
  /** The row number of its first row within its file. */
  readonly firstRow: number;
}

export interface RowGroupData {
  readonly rows: number;
  /**
   * One value per row: Uint8Array for binary columns and for an image struct's bytes, string,
   * number (integers within 2^53), boolean, or null. Only the columns that were read.
   */
  column(name: string): readonly CellValue[];
}

export interface ParquetDataset extends AsyncDisposable {
  /** Display names: the path or URL as given, or the File's name. */
  readonly files: readonly string[];
  /** Every row group of every file, in file order. */
  readonly rowGroups: readonly RowGroupRef[];
  readonly rows: number;
  /** The top-level columns of the first file's schema. */
  readonly columns: ReadonlyMap<string, ColumnKind>;
  /** The first file's Hugging Face features (`huggingface` metadata), if it has them. */
  readonly features: Record<string, HubFeature> | undefined;
  /** Reads row group `index` of `rowGroups`: only `columns`' byte ranges, decoded. */
  readRowGroup(index: number, columns: readonly string[], options?: { signal?: AbortSignal }): Promise<RowGroupData>;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
/** The end of a file read when it is opened: the footer, for most files, in the same request. */
const TAIL_BYTES = 64 * 1024;
/** Files whose footers are read at once. */
const OPEN_CONCURRENCY = 8;

/**
 * The parts over hyparquet, loaded when a dataset is opened: `import 'tandem'` (whose door names
 * ParquetError) then needs no Parquet package, as a page with an import map may not have one.
 */
let readerLoaded: Promise<typeof import('./footer.ts') & typeof import('./read.ts')> | undefined;
function parquetReader() {
  readerLoaded ??= Promise.all([import('./footer.ts'), import('./read.ts')]).then(([footer, read]) => ({ ...footer, ...read }));
  return readerLoaded;
}

let compressorsLoaded: Promise<Compressors> | undefined;

/** hyparquet-compressors, loaded on first use (it instantiates a wasm snappy when imported). */
function loadCompressors(): Promise<Compressors> {
  compressorsLoaded ??= import('hyparquet-compressors').then(({ compressors, decompressZstd }) => ({
    ...compressors,
    // Literal-heavy pages (images) decode as memcpys here (snappy.ts says why).
    SNAPPY: snappyUncompress,
    // fzstd sizes its output from the frame header when given no buffer; the page header's size
    // (checked against the limit) is the one to trust.
    ZSTD: (input: Uint8Array, length: number) => decompressZstd(input, new Uint8Array(length)),
  }));
  return compressorsLoaded;
}

interface OpenFile {
  source: ByteSource;
  footer: Footer;
  kinds: Map<string, ColumnKind>;
}

async function openFiles(inputs: readonly ParquetInput[], options: ParquetDatasetOptions, maxFooterBytes: number): Promise<OpenFile[]> {
  const opened: (OpenFile | undefined)[] = new Array(inputs.length);
  const sources: ByteSource[] = [];
  let next = 0;
  let failed: { error: unknown; name: string } | undefined;
  const worker = async () => {
    while (failed === undefined && next < inputs.length) {
      const index = next++;
      const input = inputs[index];
      if (input === undefined) break;
      try {
        const source = await openByteSource(input, index, options.fetch ?? {}, Math.min(TAIL_BYTES, maxFooterBytes + 8));
        sources.push(source);
        const { readFooter } = await parquetReader();
        const footer = await readFooter(source, maxFooterBytes, options.fetch?.signal);
        opened[index] = { source, footer, kinds: columnKinds(footer.schema) };
      } catch (error) {
        failed ??= { error, name: displayName(input, index) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, inputs.length) }, worker));
  if (failed !== undefined) {
    await Promise.all(sources.map((s) => s.close().catch(() => undefined)));
    const signal = options.fetch?.signal;
    if (signal?.aborted) throw signal.reason;
    const { error, name } = failed;
    if (error instanceof ParquetError) throw error;
    // Only a bug can get here: every open and footer failure is a ParquetError already.
    throw new ParquetError('open', name, `cannot open: ${asError(error).message}`, { cause: error });
  }
  return opened as OpenFile[];
}

function checkInputs(inputs: unknown): readonly ParquetInput[] {
  const isInput = (i: unknown) => (typeof i === 'string' && i !== '') || (typeof Blob !== 'undefined' && i instanceof Blob);
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every(isInput))
    throw new OptionError('openParquetDataset', 'inputs', inputs, 'a non-empty array of paths, URLs or Files');
  return inputs as ParquetInput[];
}

/** Opens Parquet files as one dataset: reads every footer (once), lists every row group. */
export async function openParquetDataset(inputs: readonly ParquetInput[], options: ParquetDatasetOptions = {}): Promise<ParquetDataset> {
  const files = checkInputs(inputs);
  const checked = new OptionChecker('openParquetDataset options', options, ['fetch', 'maxFooterBytes', 'maxColumnChunkBytes']);
  const maxFooterBytes = checked.integer('maxFooterBytes', 32 * MiB);
  const maxChunkBytes = checked.integer('maxColumnChunkBytes', 512 * MiB);
  const fetchOptions = checked.raw('fetch');
  if (fetchOptions !== undefined && (typeof fetchOptions !== 'object' || fetchOptions === null)) checked.fail('fetch', 'FetchOptions');

  const opened = await openFiles(files, options, maxFooterBytes);
  const rowGroups: RowGroupRef[] = [];
  for (const [file, { footer }] of opened.entries()) {
    let firstRow = 0;
    for (const [group, rows] of footer.groupRows.entries()) {
      rowGroups.push(Object.freeze({ file, group, rows, firstRow }));
      firstRow += rows;
    }
  }
  const [first] = opened;
  invariant(first, 'an opened dataset has a first file');
  const columns = first.kinds;
  let closed = false;

  const readRowGroup = async (
    index: number,
    asked: readonly string[],
    readOptions: { signal?: AbortSignal } = {},
  ): Promise<RowGroupData> => {
    const ref = rowGroups[index];
    if (!Number.isInteger(index) || !ref)
      throw new OptionError('readRowGroup', 'index', index, `a row group number in [0, ${rowGroups.length})`);
    if (!Array.isArray(asked) || asked.length === 0 || !asked.every((c) => typeof c === 'string') || new Set(asked).size !== asked.length)
      throw new OptionError('readRowGroup', 'columns', asked, 'a non-empty array of distinct column names');
    const file = opened[ref.file];
    invariant(file, 'every row group belongs to an opened file');
    const { source, footer, kinds } = file;
    const lost = { rowGroup: ref.group, rows: ref.rows };
    if (closed) throw new ParquetError('open', source.name, 'the dataset is closed', lost);
    const askedKinds: [string, ColumnKind][] = [];
    for (const column of asked) {
      const kind = columns.get(column);
      if (kind === undefined) throw new ParquetError('column', source.name, `no column '${column}' in the dataset's schema`, lost);
      if (kind === 'other') throw new ParquetError('column', source.name, `column '${column}' is of a type Tandem does not read`, lost);
      if (kinds.get(column) !== kind)
        throw new ParquetError(
          'column',
          source.name,
          `column '${column}' is ${kinds.get(column) ?? 'missing'} here, ${kind} in ${first.source.name}`,
          lost,
        );
      askedKinds.push([column, kind]);
    }
    const signal =
      readOptions.signal && options.fetch?.signal
        ? AbortSignal.any([readOptions.signal, options.fetch.signal])
        : (readOptions.signal ?? options.fetch?.signal);
    const { readGroupColumns } = await parquetReader();
    const values = await readGroupColumns({
      source,
      footer,
      group: ref.group,
      firstRow: ref.firstRow,
      rows: ref.rows,
      columns: asked,
      maxChunkBytes,
      compressors: await loadCompressors(),
      signal,
    }).catch((error: unknown) => {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof ParquetError) throw error;
      throw new ParquetError('page', source.name, asError(error).message, { ...lost, cause: error });
    });
    const data = new Map<string, readonly CellValue[]>();
    for (const [column, kind] of askedKinds) {
      const converted = convertColumn(kind, values.get(column) ?? []);
      if ('error' in converted)
        throw new ParquetError('column', source.name, `column '${column}', row ${ref.firstRow + converted.row}: ${converted.error}`, lost);
      data.set(column, converted);
    }
    return {
      rows: ref.rows,
      column(name) {
        const got = data.get(name);
        if (!got) throw new ParquetError('column', source.name, `column '${name}' was not read (read: ${asked.join(', ')})`, lost);
        return got;
      },
    };
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all(opened.map(({ source }) => source.close().catch(() => undefined)));
  };

  return {
    files: Object.freeze(files.map((input, i) => displayName(input, i))),
    rowGroups: Object.freeze(rowGroups),
    rows: rowGroups.reduce((n, g) => n + g.rows, 0),
    columns,
    features: hubFeatures(first.footer.huggingface),
    readRowGroup,
    close,
    [Symbol.asyncDispose]: close,
  };
}
