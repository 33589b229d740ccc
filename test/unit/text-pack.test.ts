// The packer against plain reference implementations written here from the definitions in
// docs/text.md, token by token, and its snapshot: a packer restored from any row boundary makes the
// same rows as one that never stopped.
import { describe, expect, it } from 'vitest';
import { Packer, type PackMode, type RowTarget } from '../../src/text/pack.ts';
import { seededFloats } from '../../src/random/index.ts';

interface Row {
  inputs: number[];
  labels: number[];
  docIds: number[];
  positions: number[];
}

const PAD = 999;

function documents(seed: number, count: number, maxLength: number): Uint32Array[] {
  const random = seededFloats(seed);
  return Array.from({ length: count }, (_, d) => {
    const length = random() < 0.1 ? 0 : 1 + Math.floor(random() * maxLength);
    return Uint32Array.from({ length }, (_, k) => d * 1000 + k);
  });
}

/** Turns a row's content (tokens with their document) into the four arrays, by the definition. */
function rowOf(content: Array<{ token: number; doc: number }>, T: number): Row {
  const row: Row = { inputs: [], labels: [], docIds: [], positions: [] };
  let local = -1;
  let begin = 0;
  for (let t = 0; t < T; t++) {
    const here = content[t];
    if (here === undefined) {
      row.inputs.push(PAD);
      row.docIds.push(-1);
      row.positions.push(0);
      row.labels.push(-1);
      continue;
    }
    if (t === 0 || here.doc !== content[t - 1]!.doc) {
      local++;
      begin = t;
    }
    row.inputs.push(here.token);
    row.docIds.push(local);
    row.positions.push(t - begin);
    row.labels.push(content[t + 1]?.token ?? -1);
  }
  return row;
}

/** concat: the stream of all tokens, windows of T + 1 starting every T tokens, while ≥ 2 remain. */
function referenceConcat(docs: Uint32Array[], T: number): Row[] {
  const stream: Array<{ token: number; doc: number }> = [];
  docs.forEach((d, i) => {
    for (const token of d) stream.push({ token, doc: i });
  });
  const rows: Row[] = [];
  for (let start = 0; stream.length - start >= 2; start += T) rows.push(rowOf(stream.slice(start, start + T + 1), T));
  return rows;
}

/**
 * best-fit and pad: before each row the window is topped up to `window` documents (pad: 1). A
 * best-fit row starts with the oldest piece longer than a whole row if there is one (its first
 * T + 1 tokens; it waits on from its last one), else takes the largest waiting piece that fits
 * what is left, first in arrival order on a tie, until none fits. A piece that arrived more than 8
 * windows of documents ago goes first.
 */
function referenceFit(docs: Uint32Array[], T: number, window: number, pad: boolean): Row[] {
  const L = T + 1;
  const waiting: Array<{ doc: number; from: number }> = [];
  let taken = 0;
  const rows: Row[] = [];
  const left = (w: { doc: number; from: number }) => docs[w.doc]!.length - w.from;
  for (;;) {
    while (waiting.length < (pad ? 1 : window) && taken < docs.length) {
      if (docs[taken]!.length > 0) waiting.push({ doc: taken, from: 0 });
      taken++;
    }
    if (waiting.length === 0) return rows;
    const content: Array<{ token: number; doc: number }> = [];
    const take = (i: number, count: number) => {
      const w = waiting[i]!;
      for (let k = 0; k < count; k++) content.push({ token: docs[w.doc]![w.from + k]!, doc: rows.length * 10_000 + content.length });
      // The same document's tokens share one id within the row.
      for (let k = content.length - count; k < content.length; k++) content[k]!.doc = w.doc;
      if (count >= left(w)) waiting.splice(i, 1);
      else w.from += count - 1;
    };
    if (pad || waiting[0]!.doc < taken - 8 * window) take(0, Math.min(left(waiting[0]!), L));
    else {
      const long = waiting.findIndex((w) => left(w) > L);
      if (long >= 0) take(long, L);
    }
    while (!pad && content.length < L && waiting.length > 0) {
      let best = -1;
      for (let i = 0; i < waiting.length; i++)
        if (left(waiting[i]!) <= L - content.length && (best < 0 || left(waiting[i]!) > left(waiting[best]!))) best = i;
      if (best < 0) break;
      take(best, left(waiting[best]!));
    }
    rows.push(rowOf(content, T));
  }
}

function target(rows: number, T: number): RowTarget {
  return {
    inputs: new Int32Array(rows * T),
    labels: new Int32Array(rows * T),
    docIds: new Int32Array(rows * T),
    positions: new Int32Array(rows * T),
  };
}

function read(out: RowTarget, row: number, T: number): Row {
  const part = (a: Int32Array) => Array.from(a.subarray(row * T, row * T + T));
  return { inputs: part(out.inputs), labels: part(out.labels), docIds: part(out.docIds), positions: part(out.positions) };
}

/** Streams docs into a packer (from `from`), making rows whenever it is ready and at the end. */
function packAll(packer: Packer, docs: Uint32Array[], T: number, from = 0, stopAfter = Infinity): { rows: Row[]; packer: Packer } {
  const out = target(1, T);
  const rows: Row[] = [];
  const began: string[] = [];
  const make = () => {
    while (rows.length < stopAfter && packer.ready() && packer.fillRow(out, 0, began) >= 0) rows.push(read(out, 0, T));
  };
  for (let i = from; i < docs.length && rows.length < stopAfter; i++) {
    packer.push(i, `doc${i}`, docs[i]!);
    make();
  }
  while (rows.length < stopAfter && !packer.empty && packer.fillRow(out, 0, began) >= 0) rows.push(read(out, 0, T));
  return { rows, packer };
}

const cases: Array<{ seed: number; T: number; maxLength: number }> = [
  { seed: 1, T: 8, maxLength: 5 },
  { seed: 2, T: 8, maxLength: 30 },
  { seed: 3, T: 16, maxLength: 16 },
  { seed: 4, T: 5, maxLength: 12 },
];

describe('packing, token by token against the reference', () => {
  for (const mode of ['concat', 'best-fit', 'pad'] as PackMode[]) {
    for (const c of cases) {
      it(`${mode}: seqLen ${c.T}, documents of 0..${c.maxLength} tokens (seed ${c.seed})`, () => {
        const docs = documents(c.seed, 120, c.maxLength);
        const window = 4;
        const expected = mode === 'concat' ? referenceConcat(docs, c.T) : referenceFit(docs, c.T, window, mode === 'pad');
        const { rows } = packAll(new Packer({ mode, seqLen: c.T, padId: PAD, fitWindow: window }), docs, c.T);
        expect(rows.length).toBe(expected.length);
        for (let r = 0; r < rows.length; r++) expect(rows[r], `row ${r}`).toEqual(expected[r]);
        // Nothing lost: every token of every document is an input or a label somewhere.
        const seen = new Set<number>();
        for (const row of rows) for (const v of [...row.inputs, ...row.labels]) seen.add(v);
        for (const d of docs) for (const token of d) expect(seen.has(token)).toBe(true);
      });
    }
  }

  it('best-fit pads less than pad on the same documents, and concat not at all before the end', () => {
    const docs = documents(7, 300, 20);
    const share = (mode: PackMode) => {
      const { rows } = packAll(new Packer({ mode, seqLen: 24, padId: PAD, fitWindow: 32 }), docs, 24);
      const pads = rows.flatMap((r) => r.docIds).filter((d) => d === -1).length;
      return pads / (rows.length * 24);
    };
    expect(share('best-fit')).toBeLessThan(share('pad'));
    expect(share('concat')).toBeLessThan(1 / 24 / 10);
  });

  it('best-fit with documents longer than a row: they open rows, so the window keeps short ones to fill gaps', () => {
    const docs = documents(8, 600, 70);
    const share = (mode: PackMode) => {
      const { rows } = packAll(new Packer({ mode, seqLen: 24, padId: PAD, fitWindow: 32 }), docs, 24);
      return rows.flatMap((r) => r.docIds).filter((d) => d === -1).length / (rows.length * 24);
    };
    const [fit, pad] = [share('best-fit'), share('pad')];
    expect(fit, `best-fit ${(100 * fit).toFixed(1)}%, pad ${(100 * pad).toFixed(1)}%`).toBeLessThan(pad / 4);
  });
});

describe('packer snapshot', () => {
  for (const mode of ['concat', 'best-fit', 'pad'] as PackMode[]) {
    it(`${mode}: restored at every row boundary, the rows that follow are the same`, () => {
      const T = 7;
      const docs = documents(11, 60, 18);
      const options = { mode, seqLen: T, padId: PAD, fitWindow: 5 };
      const whole = packAll(new Packer(options), docs, T).rows;
      for (let cut = 1; cut < whole.length; cut += 3) {
        const first = packAll(new Packer(options), docs, T, 0, cut);
        const snapshot = JSON.parse(JSON.stringify(first.packer.snapshot()));
        const from = Packer.resumeAt(snapshot);
        const rest = packAll(new Packer(options, snapshot), docs, T, from).rows;
        expect([...first.rows, ...rest], `cut after row ${cut}`).toEqual(whole);
      }
    });
  }
});
