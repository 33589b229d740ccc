// JSON Lines files (`.jsonl`): each non-blank line is one document, keyed `file#line` (lines counted
// from 1, as editors count them), so shuffling, rank shares, resume and failures work per document,
// not per file. A line is a `.json` document: its string at `textField` is tokenised.
//
// When the loader opens, each file is read once to index where its lines start and end. Local
// files (a folder or a path given as a string) are streamed for that and each document is then
// read alone by a ranged read, so memory holds the index, not the file. Other items (URLs, browser
// files, lists of items) are read whole once and their lines are views into those bytes.
import type { LabelledSource } from '../loader/internal.ts';
import { openFileRange, openFileStream } from '../runtime/index.ts';
import { TextError } from './errors.ts';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export const isJsonl = (key: string): boolean => /\.jsonl$/i.test(key);

/** A list item, with the local path it reads when it is a local file. */
export type ListedText = LabelledSource & { readonly path?: string };

/** Where each line's bytes start and end in its file: two growing arrays, no object per line. */
class LineIndex {
  starts: number[] = [];
  ends: number[] = [];
  /** Numbers of the lines kept (1-based), parallel to starts/ends. */
  lines: number[] = [];
  #line = 1;
  #lineStart = 0;
  #blank = true;
  #lastByte = -1;

  /** Feeds `chunk`, which starts at file offset `at`. */
  feed(chunk: Uint8Array, at: number): void {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] ?? 0;
      if (byte === NEWLINE) {
        this.#close(at + i, this.#lastByte === CARRIAGE_RETURN);
        this.#lineStart = at + i + 1;
        this.#blank = true;
      } else if (this.#blank && byte !== 0x20 && byte !== 0x09 && byte !== CARRIAGE_RETURN) this.#blank = false;
      this.#lastByte = byte;
    }
  }

  /** Closes the last line (a file need not end with a newline). */
  finish(size: number): this {
    this.#close(size, this.#lastByte === CARRIAGE_RETURN);
    return this;
  }

  #close(end: number, crlf: boolean): void {
    if (!this.#blank) {
      this.starts.push(this.#lineStart);
      this.ends.push(crlf ? end - 1 : end);
      this.lines.push(this.#line);
    }
    this.#line++;
  }
}

export function tooLarge(key: string, bytes: number, max: number): TextError {
  return new TextError('too-large', `${key}: ${bytes} bytes, more than maxDocumentBytes ${max}`);
}

async function indexLocal(path: string): Promise<LineIndex> {
  const index = new LineIndex();
  const reader = (await openFileStream(path)).getReader();
  let at = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      index.feed(value, at);
      at += value.length;
    }
  } finally {
    reader.releaseLock();
  }
  return index.finish(at);
}

/**
 * The lines of `index` as list items keyed `file#line`, each read by `readRange`; a line longer
 * than `maxDocumentBytes` fails before it is read, not after.
 */
function lineItems(
  item: ListedText,
  index: LineIndex,
  maxDocumentBytes: number,
  readRange: (start: number, length: number) => Promise<Uint8Array>,
): LabelledSource[] {
  return index.starts.map((start, i) => {
    const key = `${item.key}#${index.lines[i]}`;
    const length = (index.ends[i] ?? start) - start;
    const read = () => (length > maxDocumentBytes ? Promise.reject(tooLarge(key, length, maxDocumentBytes)) : readRange(start, length));
    return { key, label: item.label, read };
  });
}

/** A local file's lines, each read alone when the pipeline asks for it. */
async function localLines(item: ListedText, path: string, maxDocumentBytes: number): Promise<LabelledSource[]> {
  return lineItems(item, await indexLocal(path), maxDocumentBytes, async (start, length) => {
    const file = await openFileRange(path);
    try {
      return await file.read(start, length);
    } finally {
      await file.close();
    }
  });
}

/** Any other item's lines: its bytes read once, each line a view into them. */
async function heldLines(item: ListedText, maxDocumentBytes: number): Promise<LabelledSource[]> {
  const bytes = await item.read();
  const index = new LineIndex();
  index.feed(bytes, 0);
  return lineItems(item, index.finish(bytes.length), maxDocumentBytes, (start, length) =>
    Promise.resolve(bytes.subarray(start, start + length)),
  );
}

/**
 * The list with every `.jsonl` item replaced by its lines, in place and in line order. A file that
 * cannot be read stays one item, whose read fails with that error: it is reported under the file's
 * key like any unreadable document, and the other files are read.
 */
export async function expandJsonl(list: readonly ListedText[], maxDocumentBytes: number): Promise<LabelledSource[]> {
  if (!list.some((item) => isJsonl(item.key))) return list as LabelledSource[];
  const out: LabelledSource[] = [];
  for (const item of list) {
    if (!isJsonl(item.key)) {
      out.push(item);
      continue;
    }
    try {
      const lines = item.path !== undefined ? await localLines(item, item.path, maxDocumentBytes) : await heldLines(item, maxDocumentBytes);
      for (const line of lines) out.push(line);
    } catch (error) {
      out.push({ key: item.key, label: item.label, read: () => Promise.reject(error) });
    }
  }
  return out;
}

/** The extension a document is tokenised by: a JSON Lines document (`file.jsonl#7`) is JSON. */
export function jsonlExt(key: string): string | undefined {
  return /\.jsonl#\d+$/i.test(key) ? 'json' : undefined;
}
