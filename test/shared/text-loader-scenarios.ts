// textLoader() end to end on the CPU, for Node and Deno: what it packs equals a plain reference
// over the same documents in the same order; a resumed loader (from state() as JSON, or a second
// `for await` after a break) gives exactly the batches of a run that never stopped; token shards are
// shared between ranks with every document once; bad documents are typed failures under their keys
// and nothing else is lost.
import { encodeTokenShard } from '../../src/sources/index.ts';
import { llmcShard } from './token-shard-scenarios.ts';
import { makeDir, writeFileAtomic } from '../../src/runtime/index.ts';
import { textLoader, TextError, type TextLoaderOptions, type TextSource, type TokenBatch } from '../../src/text/index.ts';
import { assertEqual, check } from './assert.ts';
import { checkBatchEnds } from './batch-ends.ts';

/** A tokenizer a test can reason about: one id per UTF-16 unit, offset past the specials. */
export const charEncoder = { encode: (text: string) => Array.from(text, (c) => c.charCodeAt(0) + 2) };

export interface Plain {
  inputs: number[];
  labels: number[];
  docIds: number[];
  positions: number[];
  count: number;
  keys: string[];
}

function plain(b: TokenBatch): Plain {
  return {
    inputs: [...b.inputs],
    labels: [...b.labels],
    docIds: [...b.docIds],
    positions: [...b.positions],
    count: b.count,
    keys: [...b.keys],
  };
}

/** Every batch of a loader's pass (or the first `take`), copied out and released. */
export async function collect(
  source: TextSource,
  options: TextLoaderOptions,
  take = Infinity,
): Promise<{ batches: Plain[]; state: unknown }> {
  const data = textLoader(source, options);
  const batches: Plain[] = [];
  try {
    for await (const b of data) {
      batches.push(plain(b as TokenBatch));
      (b as TokenBatch).release();
      if (batches.length >= take) break;
    }
    return { batches, state: JSON.parse(JSON.stringify(data.state())) };
  } finally {
    await data.close();
  }
}

export function sentences(count: number): string[] {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length: 1 + ((i * 7) % 13) }, (_, k) => words[(i + k * 3) % words.length]).join(' '),
  );
}

/** concat by its definition: every document as BOS + ids + EOS, one stream, windows of T + 1 every T. */
export async function packsLikeTheReference(): Promise<void> {
  const texts = sentences(30);
  const T = 16;
  const B = 4;
  const { batches } = await collect({ texts }, { tokenizer: charEncoder, seqLen: T, batchSize: B, bos: 0, eos: 1, pack: 'concat' });
  const stream: Array<{ token: number; doc: number }> = [];
  texts.forEach((t, d) => {
    for (const token of [0, ...charEncoder.encode(t), 1]) stream.push({ token, doc: d });
  });
  const rows: Plain[] = [];
  let r = 0;
  for (let start = 0; stream.length - start >= 2; start += T, r++) {
    const content = stream.slice(start, start + T + 1);
    const row =
      rows[Math.floor(r / B)] ?? (rows[Math.floor(r / B)] = { inputs: [], labels: [], docIds: [], positions: [], count: 0, keys: [] });
    row.count++;
    let local = -1;
    let begin = 0;
    for (let t = 0; t < T; t++) {
      const c = content[t];
      if (!c) {
        row.inputs.push(1);
        row.labels.push(-1);
        row.docIds.push(-1);
        row.positions.push(0);
        continue;
      }
      if (t === 0 || c.doc !== content[t - 1]!.doc) {
        local++;
        begin = t;
        if (t === 0 ? start === 0 || stream[start - 1]!.doc !== c.doc : true) row.keys.push(`text/${c.doc}`);
      }
      row.inputs.push(c.token);
      row.labels.push(content[t + 1]?.token ?? -1);
      row.docIds.push(local);
      row.positions.push(t - begin);
    }
  }
  const last = rows.at(-1)!;
  for (let pad = last.count; pad < B; pad++)
    for (let t = 0; t < T; t++) {
      last.inputs.push(1);
      last.labels.push(-1);
      last.docIds.push(-1);
      last.positions.push(0);
    }
  check(batches.length === rows.length, `batches: ${batches.length}, reference ${rows.length}`);
  for (let i = 0; i < rows.length; i++) assertEqual(batches[i], rows[i], `batch ${i}`);
}

const BAD_UTF8 = new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x21]);

function itemsWithABadOne(): Array<{ bytes: Uint8Array; key: string }> {
  const encoder = new TextEncoder();
  const items = sentences(40).map((t, i) => ({ bytes: encoder.encode(t), key: `doc${i}` }));
  items.splice(13, 0, { bytes: BAD_UTF8, key: 'bad-utf8' });
  return items;
}

/** Stop after `cut` batches, resume from the JSON state: the rows equal an uninterrupted run's. */
export async function resumesExactly(pack: 'concat' | 'best-fit' | 'pad'): Promise<void> {
  const items = itemsWithABadOne();
  const options: TextLoaderOptions = {
    tokenizer: charEncoder,
    seqLen: 12,
    batchSize: 3,
    bos: 0,
    eos: 1,
    pack,
    fitWindow: 6,
    shuffle: true,
    seed: 3,
    epochs: 2,
  };
  const whole = (await collect(items, options)).batches;
  check(whole.length > 8, `a run long enough to cut (${whole.length} batches)`);
  for (const cut of [1, 4, whole.length - 2]) {
    const first = await collect(items, options, cut);
    const rest = await collect(items, { ...options, resumeFrom: first.state as TextLoaderOptions['resumeFrom'] });
    assertEqual(
      [...first.batches, ...rest.batches].map((b) => b.inputs.join(',') + '|' + b.labels.join(',') + '|' + b.docIds.join(',')),
      whole.map((b) => b.inputs.join(',') + '|' + b.labels.join(',') + '|' + b.docIds.join(',')),
      `${pack}: cut after ${cut}`,
    );
  }
  // The same loader, a second `for await` after a break, continues where the consumer stood.
  const data = textLoader(items, options);
  const seen: Plain[] = [];
  try {
    for await (const b of data) {
      seen.push(plain(b as TokenBatch));
      (b as TokenBatch).release();
      if (seen.length === 3) break;
    }
    for await (const b of data) {
      seen.push(plain(b as TokenBatch));
      (b as TokenBatch).release();
    }
  } finally {
    await data.close();
  }
  assertEqual(
    seen.map((b) => b.inputs.join(',')),
    whole.map((b) => b.inputs.join(',')),
    `${pack}: a break, then a second pass`,
  );
}

/** Bad documents fail typed under their keys, once each per epoch; every other document is packed. */
export async function badTextIsTyped(): Promise<void> {
  const encoder = new TextEncoder();
  const items = [
    ...itemsWithABadOne(),
    { bytes: encoder.encode('x'.repeat(5000)), key: 'huge' },
    { bytes: encoder.encode('{"title": "no text field"}'), key: 'no-field.json' },
    { bytes: encoder.encode('{"text": "a json document"}'), key: 'good.json' },
  ];
  const data = textLoader(items, { tokenizer: charEncoder, seqLen: 64, batchSize: 2, pack: 'pad', maxDocumentBytes: 4096 });
  const keys = new Set<string>();
  try {
    for await (const b of data) {
      for (const k of (b as TokenBatch).keys) keys.add(k);
      (b as TokenBatch).release();
    }
    const failures = data.failures();
    const byKey = new Map(failures.map((f) => [f.key, f]));
    for (const [key, code] of [
      ['bad-utf8', 'bad-utf8'],
      ['huge', 'too-large'],
      ['no-field.json', 'bad-json'],
    ] as const) {
      const f = byKey.get(key);
      check(f !== undefined, `${key} is reported (failures: ${failures.map((x) => x.key).join(', ')})`);
      check(
        f.error instanceof TextError && f.error.code === code,
        `${key}: a TextError '${code}' (got ${f.error.name} ${(f.error as TextError).code}: ${f.error.message})`,
      );
      check(f.stage === 'tokenize', `${key}: failed in 'tokenize' (got ${f.stage})`);
    }
    check(failures.length === 3, `three failures (got ${failures.map((f) => f.key).join(', ')})`);
    for (const item of items) check(keys.has(item.key) || byKey.has(item.key), `${item.key} is delivered or reported`);
  } finally {
    await data.close();
  }
  // The failure budget applies: past `maxFailures`, the pass stops with a typed error.
  const strict = textLoader(items, {
    tokenizer: charEncoder,
    seqLen: 64,
    batchSize: 2,
    pack: 'pad',
    maxDocumentBytes: 4096,
    failureBudget: { maxFailures: 2 },
  });
  let stopped: unknown;
  try {
    for await (const b of strict) (b as TokenBatch).release();
  } catch (error) {
    stopped = error;
  } finally {
    await strict.close();
  }
  check(
    (stopped as { code?: string } | undefined)?.code === 'failure-budget',
    `a third failure past maxFailures 2 stops the pass (got ${String(stopped)})`,
  );
}

/** Token shards shared by two ranks: each document once per epoch, its ids as written. */
export async function tokenShardsAcrossRanks(dir: string): Promise<void> {
  await makeDir(dir);
  const docs: Uint32Array[] = [];
  const paths: string[] = [];
  for (let s = 0; s < 4; s++) {
    const shardDocs = Array.from({ length: 9 + s }, (_, d) =>
      Uint32Array.from({ length: 3 + ((d * 5 + s) % 17) }, (_, k) => (s * 100 + d * 7 + k) % 500),
    );
    docs.push(...shardDocs);
    const path = `${dir}/t-${s}.bin`;
    await writeFileAtomic(path, encodeTokenShard(shardDocs, { vocabSize: 500 }));
    paths.push(path);
  }
  const seen = new Map<string, string>();
  for (const rank of [0, 1]) {
    const { batches } = await collect(
      { tokens: paths, shuffleBuffer: 8 },
      { seqLen: 32, batchSize: 4, pack: 'pad', shuffle: true, seed: 9, epochs: 2, rank, worldSize: 2 },
    );
    for (const b of batches)
      for (let r = 0; r < b.count; r++) {
        const ids = b.inputs.slice(r * 32, r * 32 + 32).filter((_, t) => b.docIds[r * 32 + t] !== -1);
        const key = `${b.keys[r]}`;
        const epochKey = `${key}@${seen.has(`${key}@0`) ? 1 : 0}`;
        check(!seen.has(epochKey), `${epochKey} delivered once`);
        seen.set(epochKey, ids.join(','));
      }
  }
  check(seen.size === docs.length * 2, `every document in both epochs across the ranks (${seen.size} of ${docs.length * 2})`);
  for (let s = 0; s < 4; s++)
    for (let d = 0; d < 9 + s; d++) {
      const want = docs.slice(0, s === 0 ? 0 : [9, 19, 30][s - 1]).length;
      const ids = seen.get(`${paths[s]}#${d}@0`);
      check(ids === [...docs[want + d]!].join(','), `${paths[s]}#${d}: the ids as written`);
    }
}

/** llm.c shards through textLoader: `tokenShards.documentStart` splits each into its documents, the delimiter opening each. */
export async function llmcShardsSplitIntoDocuments(dir: string): Promise<void> {
  await makeDir(dir);
  const path = `${dir}/llmc-0.bin`;
  const ids = [7, 50256, 1, 2, 3, 50256, 4, 5, 50256, 6];
  await writeFileAtomic(path, llmcShard(ids));
  const rows = async (source: TextSource) => {
    const { batches } = await collect(source, { seqLen: 8, batchSize: 8, pack: 'pad' });
    return batches.flatMap((b) =>
      Array.from({ length: b.count }, (_, r) =>
        b.inputs
          .slice(r * 8, r * 8 + 8)
          .filter((_, t) => b.docIds[r * 8 + t] !== -1)
          .join(','),
      ),
    );
  };
  assertEqual(
    await rows({ tokens: [path], tokenShards: { documentStart: 50256 } }),
    ['7', '50256,1,2,3', '50256,4,5', '50256,6'],
    'each document opens at the delimiter; the ids before the first are document 0',
  );
  // Without it the shard is one document of 10 tokens: one row of 8 inputs and 9 tokens, then the
  // rest from the token that row ended with.
  assertEqual(await rows({ tokens: [path] }), ['7,50256,1,2,3,50256,4,5', '50256,6'], 'without documentStart the shard is one document');
}

/**
 * `to` a GPU: the four i32 buffers of every batch, read back, equal the CPU loader's arrays; the
 * ring's buffer sets all come back once the batches are released, and close() leaves none held.
 */
export async function deviceBatchesEqualCpu(): Promise<void> {
  const { acquireGpu, readBuffer } = await import('../../src/gpu/index.ts');
  const texts = sentences(25);
  const options: TextLoaderOptions = { tokenizer: charEncoder, seqLen: 16, batchSize: 3, bos: 0, eos: 1, pack: 'best-fit', fitWindow: 4 };
  const cpu = (await collect({ texts }, options)).batches;
  using gpu = await acquireGpu();
  const data = textLoader({ texts }, { ...options, to: gpu });
  let i = 0;
  try {
    for await (const b of data) {
      const want = cpu[i];
      check(want !== undefined, `no more than ${cpu.length} batches`);
      for (const field of ['inputs', 'labels', 'docIds', 'positions'] as const) {
        const got = [...new Int32Array(await readBuffer(gpu.device, b[field]))];
        assertEqual(got, want[field], `batch ${i} ${field}`);
      }
      check(b.count === want.count && b.keys.join() === want.keys.join(), `batch ${i}: count and keys`);
      checkBatchEnds('TokenDeviceBatch', b, (x) => x.inputs);
      i++;
    }
    check(i === cpu.length, `${i} device batches, ${cpu.length} on the CPU`);
    check(data.held() === 0, `every buffer set back in the ring (${data.held()} held)`);
  } finally {
    await data.close();
  }
}

/**
 * Two ranks stop mid-epoch (best-fit, documents split across rows), their states are regrouped for
 * three: every token of every document is an input or a label somewhere, and none is an input
 * twice. Each token's id names its document and place (document × 64 + position).
 */
export async function regroupsForThreeRanks(dir: string): Promise<void> {
  await regroupsAlong(dir, 'best-fit', [2, 3]);
}

/**
 * Token shards read by `sizes[0]` ranks that stop mid-epoch (each after its own number of
 * batches, the packers holding pieces), regrouped for `sizes[1]` ranks that stop again, and so on,
 * the last world size running to the end: no token is an input twice and every token is delivered,
 * as an input or a label, whatever the packing and the path (shrink, grow, both).
 */
export async function regroupsAlong(dir: string, pack: 'concat' | 'pad' | 'best-fit', sizes: readonly number[]): Promise<void> {
  const { regroupTextStates } = await import('../../src/text/index.ts');
  await makeDir(dir);
  const paths: string[] = [];
  const all: number[] = [];
  let g = 0;
  for (let s = 0; s < 5; s++) {
    const docs = Array.from({ length: 9 }, (_, d) => {
      const doc = Uint32Array.from({ length: 3 + ((d * 11 + s * 5) % 38) }, (_, k) => g * 64 + k);
      g++;
      return doc;
    });
    for (const doc of docs) all.push(...doc);
    const path = `${dir}/r-${s}.bin`;
    await writeFileAtomic(path, encodeTokenShard(docs, { vocabSize: 64 * 45 }));
    paths.push(path);
  }
  const options = { seqLen: 16, batchSize: 2, pack, ...(pack === 'best-fit' ? { fitWindow: 4 } : {}), shuffle: true, seed: 4 } as const;
  const inputs = new Map<number, number>();
  const labels = new Set<number>();
  const take = (b: Plain) => {
    for (let i = 0; i < b.inputs.length; i++) {
      if (b.docIds[i] !== -1) inputs.set(b.inputs[i] ?? -1, (inputs.get(b.inputs[i] ?? -1) ?? 0) + 1);
      if ((b.labels[i] ?? -1) >= 0) labels.add(b.labels[i] ?? -1);
    }
  };
  const source = { tokens: paths, shuffleBuffer: 4 };
  let states: (TextLoaderOptions['resumeFrom'] | undefined)[] = Array.from({ length: sizes[0] ?? 1 }, () => undefined);
  let carried = false;
  for (const [stage, worldSize] of sizes.entries()) {
    const last = stage === sizes.length - 1;
    const next: TextLoaderOptions['resumeFrom'][] = [];
    for (const [rank, resumeFrom] of states.entries()) {
      const r = await collect(source, { ...options, rank, worldSize, ...(resumeFrom ? { resumeFrom } : {}) }, last ? undefined : 2 + rank);
      r.batches.forEach(take);
      next.push(r.state as TextLoaderOptions['resumeFrom']);
    }
    if (last) break;
    const regrouped = regroupTextStates(next as never, sizes[stage + 1] ?? 1);
    carried ||= regrouped.some((s) => (s.carry?.length ?? 0) > 0);
    states = regrouped as TextLoaderOptions['resumeFrom'][];
  }
  if (pack !== 'pad') check(carried, 'the packers held pieces when they stopped (a regroup carried them)');
  const twice = [...inputs].filter(([, n]) => n > 1).map(([t]) => t);
  check(twice.length === 0, `${pack} ${sizes.join('→')}: no token is an input twice (${twice.slice(0, 5).join(', ')} …)`);
  const missing = all.filter((t) => !inputs.has(t) && !labels.has(t));
  check(
    missing.length === 0,
    `${pack} ${sizes.join('→')}: every token delivered (${missing.length} missing, e.g. ${missing.slice(0, 5).join(', ')})`,
  );
}

/**
 * The tokenizer stage inside the loader: @huggingface/tokenizers in worker threads (the corpus'
 * tokenizer.json) gives every document the ids the corpus defines, BOS and EOS added, in order.
 */
export async function tokenizesInWorkers(): Promise<void> {
  const { corpusDocuments, corpusIds, corpusTokenizerJson } = await import('../../src/synthetic/index.ts');
  const texts = corpusDocuments(5, 40);
  const T = 512;
  const { batches } = await collect(
    { texts },
    { tokenizer: { json: corpusTokenizerJson() }, tokenizerWorkers: 2, bos: 0, eos: 1, pack: 'pad', seqLen: T, batchSize: 8 },
  );
  let row = 0;
  for (const b of batches)
    for (let r = 0; r < b.count; r++, row++) {
      const want = [0, ...corpusIds(texts[row] ?? ''), 1];
      const got = b.inputs.slice(r * T, r * T + want.length);
      assertEqual(got, want, `document ${row}`);
      check(b.docIds[r * T + want.length] === -1, `document ${row} ends where its ids do`);
    }
  check(row === texts.length, `${row} documents of ${texts.length}`);
}

/** `to: tf`: four int32 tensors per batch, equal to the CPU batch; release() disposes them. */
export async function tensorsEqualCpu(): Promise<void> {
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-cpu');
  await tf.setBackend('cpu');
  const texts = sentences(12);
  const options: TextLoaderOptions = { tokenizer: charEncoder, seqLen: 8, batchSize: 2, bos: 0, eos: 1 };
  const cpu = (await collect({ texts }, options)).batches;
  const data = textLoader({ texts }, { ...options, to: tf });
  const before = tf.memory().numTensors;
  let i = 0;
  try {
    for await (const b of data) {
      const want = cpu[i];
      check(want !== undefined, `no more than ${cpu.length} batches`);
      for (const field of ['inputs', 'labels', 'docIds', 'positions'] as const) {
        const t = b[field] as import('@tensorflow/tfjs-core').Tensor;
        check(t.dtype === 'int32' && t.shape.join() === '2,8', `batch ${i} ${field}: int32 [2, 8] (got ${t.dtype} [${t.shape}])`);
        assertEqual([...(await t.data())], want[field], `batch ${i} ${field}`);
      }
      checkBatchEnds('TokenTensors', b, (x) => x.inputs);
      i++;
    }
  } finally {
    await data.close();
  }
  check(i === cpu.length, `${i} tensor batches, ${cpu.length} on the CPU`);
  check(tf.memory().numTensors <= before, `release() disposed every tensor (${tf.memory().numTensors - before} left)`);
}

/**
 * Text shards (`{ shards }`: WebDataset tars of `.txt`/`.json` members) and a folder of text files
 * give the same ids as `{ texts }` over the same documents; a sample with no text member is a
 * `no-text` failure under its key.
 */
export async function textShardsAndFolders(dir: string): Promise<void> {
  const { writeTar } = await import('./tar-helpers.ts');
  await makeDir(`${dir}/folder/sub`);
  const texts = sentences(9);
  const encoder = new TextEncoder();
  const entries = texts.map((t, i) => ({
    name: `${String(i).padStart(3, '0')}.${i % 3 === 0 ? 'json' : 'txt'}`,
    data: encoder.encode(i % 3 === 0 ? JSON.stringify({ text: t }) : t),
  }));
  entries.push({ name: '999.cls', data: encoder.encode('3') });
  await writeFileAtomic(`${dir}/docs.tar`, writeTar(entries));
  for (const [i, t] of texts.entries())
    await writeFileAtomic(`${dir}/folder/${i < 5 ? '' : 'sub/'}${String(i).padStart(3, '0')}.txt`, encoder.encode(t));
  await writeFileAtomic(`${dir}/folder/ignored.bin`, new Uint8Array([1, 2, 3]));
  const options: TextLoaderOptions = { tokenizer: charEncoder, seqLen: 128, batchSize: 4, pack: 'pad', bos: 0, eos: 1 };
  const rows = (batches: Plain[]) =>
    batches.flatMap((b) => Array.from({ length: b.count }, (_, r) => b.inputs.slice(r * 128, (r + 1) * 128).join()));
  const want = rows((await collect({ texts }, options)).batches);
  const data = textLoader({ shards: [`${dir}/docs.tar`] }, options);
  const fromShards: Plain[] = [];
  try {
    for await (const b of data) {
      fromShards.push(plain(b as TokenBatch));
      (b as TokenBatch).release();
    }
    const failures = data.failures();
    check(
      failures.length === 1 && failures[0]?.key === `${dir}/docs.tar#999` && (failures[0].error as TextError).code === 'no-text',
      `one no-text failure (got ${failures.map((f) => `${f.key} ${(f.error as TextError).code}`).join(', ')})`,
    );
  } finally {
    await data.close();
  }
  assertEqual(rows(fromShards), want, 'text shards');
  assertEqual(rows((await collect(`${dir}/folder`, options)).batches), want, 'a folder of text files, in path order');
}

/**
 * JSON Lines files: each non-blank line is a document keyed `file#line`, in a folder, as a single
 * path and in a list of paths (read whole, not ranged) alike, with the ids `{ texts }` gives for the
 * same documents in the same order; CRLF endings, blank lines (skipped, still counted) and a missing
 * final newline are read as a JSON Lines reader reads them. A bad line (`bad-json`), a line without the text field and a
 * line past `maxDocumentBytes` (`too-large`, refused before it is read) fail under their own keys;
 * with shuffle on, a state taken after two batches resumes to the batches of a run that never
 * stopped, and two ranks share the lines, each once.
 */
export async function jsonlLinesAreDocuments(dir: string): Promise<void> {
  await makeDir(`${dir}/jsonl/sub`);
  const texts = sentences(14);
  const encoder = new TextEncoder();
  const line = (t: string) => JSON.stringify({ text: t, id: t.length });
  // a.jsonl: lines 1-4 good (CRLF), 5 blank, 6 bad JSON, 7 good, 8 no text field, 9 too large, 10 good (no final newline).
  const a = [line(texts[0]!), line(texts[1]!), line(texts[2]!), line(texts[3]!), '  ', '{"text": "cut', line(texts[4]!), '{"title": 1}'];
  a.push(line('y'.repeat(600)), line(texts[5]!));
  await writeFileAtomic(`${dir}/jsonl/a.jsonl`, encoder.encode(a.slice(0, 4).join('\r\n') + '\r\n' + a.slice(4).join('\n')));
  await writeFileAtomic(`${dir}/jsonl/sub/b.jsonl`, encoder.encode(`${texts.slice(6).map(line).join('\n')}\n\n`));
  const good = [texts[0]!, texts[1]!, texts[2]!, texts[3]!, texts[4]!, texts[5]!, ...texts.slice(6)];
  const options: TextLoaderOptions = {
    tokenizer: charEncoder,
    seqLen: 96,
    batchSize: 3,
    pack: 'pad',
    bos: 0,
    eos: 1,
    maxDocumentBytes: 512,
  };
  const rows = (batches: Plain[]) =>
    batches.flatMap((b) => Array.from({ length: b.count }, (_, r) => b.inputs.slice(r * 96, (r + 1) * 96).join()));
  const want = rows((await collect({ texts: good }, options)).batches);
  const expectedFailures = [
    [`${dir}/jsonl/a.jsonl#6`, 'bad-json', 'tokenize'],
    [`${dir}/jsonl/a.jsonl#8`, 'bad-json', 'tokenize'],
    [`${dir}/jsonl/a.jsonl#9`, 'too-large', 'read'],
  ];
  for (const [name, source] of [
    ['a folder', `${dir}/jsonl`],
    ['a list of paths', [`${dir}/jsonl/a.jsonl`, `${dir}/jsonl/sub/b.jsonl`]],
  ] as const) {
    const data = textLoader(source as TextSource, options);
    const got: Plain[] = [];
    try {
      for await (const b of data) {
        got.push(plain(b as TokenBatch));
        (b as TokenBatch).release();
      }
      // A line past the limit fails in 'read', before its bytes are read, so before the bad JSON
      // reaches the tokenizer: sorted by key.
      const failures = data
        .failures()
        .map((f) => [f.key, (f.error as TextError).code, f.stage])
        .sort();
      assertEqual(failures, expectedFailures, `${name}: the bad lines, each under its own key`);
    } finally {
      await data.close();
    }
    assertEqual(rows(got), want, `${name}: the good lines, in file and line order`);
    const keys = got.flatMap((b) => b.keys);
    check(
      keys[0] === `${dir}/jsonl/a.jsonl#1` && keys.includes(`${dir}/jsonl/sub/b.jsonl#8`),
      `${name}: keys file#line (${keys.join(', ')})`,
    );
  }
  const shuffled: TextLoaderOptions = { ...options, shuffle: true, seed: 5, epochs: 2 };
  const whole = (await collect(`${dir}/jsonl`, shuffled)).batches;
  const first = await collect(`${dir}/jsonl`, shuffled, 2);
  const rest = await collect(`${dir}/jsonl`, { ...shuffled, resumeFrom: first.state as TextLoaderOptions['resumeFrom'] });
  assertEqual(rows([...first.batches, ...rest.batches]), rows(whole), 'shuffled, resumed after two batches');
  check(rows(whole).join('\n') !== [...want, ...want].join('\n'), 'the shuffle changes the order of lines');
  const delivered: string[] = [];
  const failed: string[] = [];
  for (const rank of [0, 1]) {
    const data = textLoader(`${dir}/jsonl`, { ...options, rank, worldSize: 2 });
    try {
      for await (const b of data) {
        delivered.push(...(b as TokenBatch).keys);
        (b as TokenBatch).release();
      }
      failed.push(...data.failures().map((f) => f.key));
    } finally {
      await data.close();
    }
  }
  assertEqual(
    [...delivered, ...failed].sort(),
    [...(await collect(`${dir}/jsonl`, options)).batches.flatMap((b) => b.keys), ...expectedFailures.map(([key]) => key!)].sort(),
    'two ranks: every line once, delivered or failed',
  );
}

/**
 * close() while the first `for await` is still opening the loader (what an aborted signal does):
 * the pass ends with no batch, no failure and no error. (Before, the pass built its pipeline after
 * close() had closed the tokenizer, and every document failed 'pool-closed' until the failure
 * budget stopped it.)
 */
export async function closedWhileOpening(): Promise<void> {
  const data = textLoader({ texts: sentences(40) }, { tokenizer: charEncoder, seqLen: 16, batchSize: 2 });
  const pass = data[Symbol.asyncIterator]();
  const first = pass.next();
  await data.close();
  const r = await first;
  check(r.done === true, `no batch after close() (got ${r.done ? 'the end' : 'a batch'})`);
  check(
    data.failures().length === 0,
    `no failure (got ${data
      .failures()
      .map((f) => `${f.key}: ${f.error.message}`)
      .join('; ')})`,
  );
}

/**
 * A state is refused, by name, by a loader that would give other rows from it: another `pack`,
 * another `seqLen`, or another tokenizer.json (one id moved); the same settings take it.
 */
export async function aStateOfAnotherLoaderIsRefused(): Promise<void> {
  const { OptionError } = await import('../../src/errors/index.ts');
  const { corpusDocuments, corpusTokenizerJson } = await import('../../src/synthetic/index.ts');
  const texts = corpusDocuments(3, 30);
  const json = corpusTokenizerJson();
  // A copy with two ids swapped: the same shape, other ids.
  const other = structuredClone(json) as { model: { vocab: Record<string, number> } };
  const [a, b] = Object.keys(other.model.vocab).slice(5, 7);
  if (a === undefined || b === undefined) throw new Error('the corpus tokenizer has a vocabulary');
  [other.model.vocab[a], other.model.vocab[b]] = [other.model.vocab[b] ?? 0, other.model.vocab[a] ?? 0];
  const base = { tokenizer: { json }, tokenizerWorkers: 1, seqLen: 16, batchSize: 2, pack: 'concat' } as const;
  const { state } = await collect({ texts }, base, 2);
  const resumeFrom = JSON.parse(JSON.stringify(state)) as TextLoaderOptions['resumeFrom'];
  const refused = async (options: TextLoaderOptions, what: string) => {
    let error: unknown;
    try {
      await collect({ texts }, { ...options, resumeFrom }, 1);
    } catch (e) {
      error = e;
    }
    check(
      error instanceof OptionError && error.field === 'resumeFrom' && error.message.includes(what),
      `a state resumed with another ${what}: ${error instanceof Error ? error.message : String(error)}`,
    );
  };
  await refused({ ...base, pack: 'best-fit' }, 'pack');
  await refused({ ...base, seqLen: 32 }, 'seqLen');
  await refused({ ...base, tokenizer: { json: JSON.stringify(other) } }, 'tokenizer');
  const same = await collect({ texts }, { ...base, resumeFrom }, 1);
  check(same.batches.length === 1, 'the same settings take the state');
  // Over other documents (renamed, or shorter than a waiting piece's start): refused by name, not
  // a packer that never places the piece or splices in another document's tokens.
  const waiting = (state as { packer: { pending: [number, number, string][] } }).packer.pending;
  check(
    waiting.some(([, start]) => start > 0),
    `the state holds a document split part-way (pending ${JSON.stringify(waiting)})`,
  );
  for (const [what, other] of [
    ['renamed', texts.map((text, i) => ({ text, key: `renamed/${i}` }))],
    ['shortened', texts.map((text) => text.slice(0, 1))],
  ] as const) {
    let error: unknown;
    try {
      await collect({ texts: [...other] }, { ...base, resumeFrom }, 3);
    } catch (e) {
      error = e;
    }
    check(
      error instanceof OptionError && error.field === 'resumeFrom' && error.message.includes('the same documents'),
      `a state resumed over ${what} documents: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // An in-memory text is text, whatever its key says.
  const keyed = await collect({ texts: [{ text: texts[0] ?? '', key: 'notes/item.json' }] }, { ...base, pack: 'pad' });
  check(keyed.batches.length > 0, 'a text keyed .json is tokenised as text, not parsed as JSON');
}
