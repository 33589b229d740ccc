// Documents → fixed-length rows. A row holds `seqLen + 1` tokens: the inputs are the first seqLen,
// the labels the last seqLen (shifted by one), so a row's last token is only a label. Three rules:
// - concat:   one stream of every document's tokens cut into windows; a window starts on the token
//             the previous one ended with (stride seqLen), so every token is a label once;
// - best-fit: every row starts at a document; a document longer than a row opens an empty row, else
//             the largest waiting document that still fits goes in next, the rest of the row is
//             padding (a window of `fitWindow` documents to choose from);
// - pad:      one document per row, the rest padding.
// A document longer than a row is split, never dropped: its next piece starts on the token the
// previous piece ended with. The packer is a pure function of the document sequence, so its state
// (which documents are still waiting, and from which token) is a few numbers per document.
import { OptionError } from '../errors/index.ts';

export type PackMode = 'concat' | 'best-fit' | 'pad';

/** One document's tokens still waiting to be packed, from `start`. */
export interface Piece {
  /** The document's number in the source's order (its stream position). */
  readonly index: number;
  readonly key: string;
  readonly tokens: Uint32Array;
  start: number;
}

/** Where the packer stands: documents before `next` are packed except `pending` ([index, start, key]). */
export interface PackerSnapshot {
  next: number;
  pending: Array<[index: number, start: number, key: string]>;
}

/** The four arrays a batch's rows are written into (each `rows × seqLen`). */
export interface RowTarget {
  inputs: Int32Array;
  labels: Int32Array;
  docIds: Int32Array;
  positions: Int32Array;
}

export interface PackerOptions {
  mode: PackMode;
  seqLen: number;
  /** The id written at padding positions (their label is −1, their document −1). */
  padId: number;
  /** best-fit: documents waiting to be chosen from (default 64). */
  fitWindow: number;
}

/** Documents older than this many windows are placed first (best-fit), so none waits unboundedly. */
const MAX_AGE_WINDOWS = 8;

export class Packer {
  readonly #o: PackerOptions;
  readonly #rowTokens: number;
  /** concat and pad: in stream order; best-fit: the window, in stream order. */
  #pieces: Piece[] = [];
  #buffered = 0;
  #next = 0;
  /** While restoring a snapshot: the pieces to take back and from where; rows wait until it is done. */
  #restoring: Map<number, [start: number, key: string]> | undefined;
  /** Documents before this one were packed before the snapshot (but the waiting ones). */
  #restoreEnd = 0;
  /** Scratch for one row: the piece of each content position (reused). */
  readonly #rowPiece: Int32Array;

  constructor(options: PackerOptions, from?: PackerSnapshot) {
    this.#o = options;
    this.#rowTokens = options.seqLen + 1;
    this.#rowPiece = new Int32Array(this.#rowTokens);
    if (from) {
      this.#restoring = new Map(from.pending.map(([index, start, key]) => [index, [start, key]]));
      this.#restoreEnd = from.next;
      this.#next = from.next;
      if (this.#restoring.size === 0) this.#restoring = undefined;
    }
  }

  /** The first document number a resumed source must deliver again. */
  static resumeAt(s: PackerSnapshot): number {
    let at = s.next;
    for (const [index] of s.pending) at = Math.min(at, index);
    return at;
  }

  snapshot(): PackerSnapshot {
    const pending: Array<[number, number, string]> = this.#pieces.map((p) => [p.index, p.start, p.key]);
    if (this.#restoring) for (const [index, [start, key]] of this.#restoring) pending.push([index, start, key]);
    pending.sort((a, b) => a[0] - b[0]);
    return { next: this.#next, pending };
  }

  /** Whether documents are still waiting (a flush would make rows). */
  get empty(): boolean {
    return this.#pieces.length === 0;
  }

  /**
   * Takes document `index`. While restoring, documents packed before the snapshot are skipped and
   * waiting ones come back from where they stood.
   */
  push(index: number, key: string, tokens: Uint32Array): void {
    if (index < this.#restoreEnd) {
      // Packed before the snapshot, unless it is one of the waiting ones.
      const restoring = this.#restoring;
      const saved = restoring?.get(index);
      if (restoring === undefined || saved === undefined) return;
      const [start, savedKey] = saved;
      // The state was taken over other documents (a file edited or renamed, another tokenizer): a
      // piece past its document's end would never be placed, another document's tokens spliced in.
      if (savedKey !== key || start >= tokens.length)
        throw new OptionError(
          'textLoader',
          'resumeFrom',
          `document ${index}`,
          `a state of the same documents: document ${index} was ${savedKey}, waiting from token ${start}; it is now ${key} of ${tokens.length} tokens`,
        );
      restoring.delete(index);
      if (restoring.size === 0) this.#restoring = undefined;
      this.#insert({ index, key, tokens, start });
      return;
    }
    // A document past the snapshot (or one that failed again) ends the restore.
    this.#restoring = undefined;
    this.#next = Math.max(this.#next, index + 1);
    if (tokens.length === 0) return;
    this.#insert({ index, key, tokens, start: 0 });
  }

  #insert(piece: Piece): void {
    this.#buffered += piece.tokens.length - piece.start;
    const pieces = this.#pieces;
    let at = pieces.length;
    while (at > 0 && (pieces[at - 1]?.index ?? -1) > piece.index) at--;
    pieces.splice(at, 0, piece);
  }

  /** Whether a row can be made now, the same whatever arrives next. */
  ready(): boolean {
    if (this.#restoring) return false;
    switch (this.#o.mode) {
      case 'concat':
        return this.#buffered >= this.#rowTokens;
      case 'best-fit':
        return this.#pieces.length >= this.#o.fitWindow;
      case 'pad':
        return this.#pieces.length > 0;
    }
  }

  /**
   * Writes one row at `row` of `out` (input end: also when not ready). Returns the padding
   * positions written, or −1 when there was nothing to make a row of. `began` gets the keys of
   * documents whose first token is in this row.
   */
  fillRow(out: RowTarget, row: number, began: string[]): number {
    this.#restoring = undefined;
    if (this.#pieces.length === 0) return -1;
    const placed = this.#o.mode === 'concat' ? this.#concatRow(out, row, began) : this.#fitRow(out, row, began);
    return placed < 0 ? -1 : this.#o.seqLen - Math.min(placed, this.#o.seqLen);
  }

  #concatRow(out: RowTarget, row: number, began: string[]): number {
    const L = this.#rowTokens;
    const base = row * this.#o.seqLen;
    let n = 0;
    let doc = -1;
    for (const p of this.#pieces) {
      if (n >= L) break;
      if (p.start === 0 && n < this.#o.seqLen) began.push(p.key);
      doc++;
      const take = Math.min(p.tokens.length - p.start, L - n);
      for (let k = 0; k < take; k++) this.#put(out, base, n + k, p.tokens[p.start + k] ?? 0, doc);
      n += take;
    }
    // The input's end: a lone token left was already a label.
    if (n < 2) {
      this.#pieces = [];
      this.#buffered = 0;
      return -1;
    }
    this.#finishRow(out, base, n);
    this.#advance(n < L ? n : L - 1);
    return n;
  }

  /** Drops `count` tokens from the front of the stream (concat). */
  #advance(count: number): void {
    let left = count;
    for (let p = this.#pieces[0]; left > 0 && p !== undefined; p = this.#pieces[0]) {
      const take = Math.min(p.tokens.length - p.start, left);
      p.start += take;
      left -= take;
      this.#buffered -= take;
      if (p.start >= p.tokens.length) this.#pieces.shift();
    }
  }

  #fitRow(out: RowTarget, row: number, began: string[]): number {
    const L = this.#rowTokens;
    const base = row * this.#o.seqLen;
    const pieces = this.#pieces;
    let n = 0;
    let doc = 0;
    const place = (at: number, count: number) => {
      const p = pieces[at];
      if (p === undefined) return;
      if (p.start === 0 && n < this.#o.seqLen) began.push(p.key);
      for (let k = 0; k < count; k++) this.#put(out, base, n + k, p.tokens[p.start + k] ?? 0, doc);
      n += count;
      doc++;
      if (p.start + count >= p.tokens.length) {
        pieces.splice(at, 1);
        this.#buffered -= count;
      } else {
        p.start += count - 1; // the next piece starts on the token this one ended with
        this.#buffered -= count - 1;
      }
    };
    const first = pieces[0];
    if (first === undefined) return 0;
    const stale = this.#o.mode === 'best-fit' && first.index < this.#next - MAX_AGE_WINDOWS * this.#o.fitWindow;
    if (this.#o.mode === 'pad' || stale) place(0, Math.min(first.tokens.length - first.start, L));
    else if (this.#o.mode === 'best-fit') {
      // A piece longer than a row never fits a gap: it opens an empty row, oldest first, so such
      // pieces do not sit in the window and leave only short documents to choose from.
      const long = pieces.findIndex((p) => p.tokens.length - p.start > L);
      if (long >= 0) place(long, L);
    }
    if (this.#o.mode === 'best-fit' && n < L) {
      for (;;) {
        let best = -1;
        let bestLength = 0;
        for (const [i, p] of pieces.entries()) {
          const length = p.tokens.length - p.start;
          if (length <= L - n && length > bestLength) {
            best = i;
            bestLength = length;
          }
        }
        if (best < 0) break;
        place(best, bestLength);
        if (n >= L || pieces.length === 0) break;
      }
    }
    this.#finishRow(out, base, n);
    return n;
  }

  #put(out: RowTarget, base: number, t: number, token: number, doc: number): void {
    if (t < this.#o.seqLen) {
      out.inputs[base + t] = token;
      out.docIds[base + t] = doc;
    }
    if (t > 0) out.labels[base + t - 1] = token;
    this.#rowPiece[t] = doc;
  }

  /** Labels past the content, padding, and each position's place within its document. */
  #finishRow(out: RowTarget, base: number, n: number): void {
    const T = this.#o.seqLen;
    const docOf = this.#rowPiece;
    for (let t = Math.max(n - 1, 0); t < T; t++) out.labels[base + t] = -1;
    for (let t = n; t < T; t++) {
      out.inputs[base + t] = this.#o.padId;
      out.docIds[base + t] = -1;
      out.positions[base + t] = 0;
    }
    let begin = 0;
    for (let t = 0; t < Math.min(n, T); t++) {
      if (t > 0 && docOf[t] !== docOf[t - 1]) begin = t;
      out.positions[base + t] = t - begin;
    }
  }
}
