// The Parquet room's one error class. A dataset made of many files fails per file and per row
// group, so the error says which file, which row group and how many rows were lost, whatever
// went wrong underneath (a footer, a page, a read): the cause keeps the original error.
import { CodedError } from '../errors/index.ts';

/**
 * Why a Parquet file or one of its row groups could not be used: `footer` (missing, truncated or
 * corrupt footer), `page` (a page or column chunk does not decompress or decode, or decodes to
 * another number of rows than the footer says), `column` (a missing column, a type Tandem does not
 * read, an integer over 2^53), `limit` (a size over a limit), `open` (the file cannot be opened or
 * read: the cause is the FetchError, FileError or HubError).
 */
export type ParquetErrorCode = 'footer' | 'page' | 'column' | 'limit' | 'open';

export interface ParquetErrorPlace {
  /** The row group's index within its file, when the failure is one row group's. */
  rowGroup?: number;
  /** The rows that cannot be read because of this failure. */
  rows?: number;
  cause?: unknown;
}

export class ParquetError extends CodedError<ParquetErrorCode> {
  override readonly name = 'ParquetError';
  readonly rowGroup: number | undefined;
  readonly rows: number | undefined;
  constructor(
    code: ParquetErrorCode,
    /** The file's display name (path, URL or File name). */
    readonly file: string,
    message: string,
    place: ParquetErrorPlace = {},
  ) {
    const where = place.rowGroup === undefined ? file : `${file}, row group ${place.rowGroup}`;
    super(code, `${where}: ${message}`, { cause: place.cause });
    this.rowGroup = place.rowGroup;
    this.rows = place.rows;
  }
}
