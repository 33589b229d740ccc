// Token shards, one shard at a time: the writer's bytes against the format's definition, round
// trips at both widths, llm.c shards split at their delimiter, and every kind of bad input as a
// typed error (a bad document fails alone; a bad header, table or a cut stream throws). Shared by
// the Node and Deno tiers; the shards here are built in memory, some by hand from the definition.
import { OptionError } from '../../src/errors/index.ts';
import { hash3 } from '../../src/random/index.ts';
import {
  documentTokens,
  encodeTokenShard,
  isFailure,
  ShardStream,
  SourceError,
  tokenShardSamples,
  type TokenShardReadOptions,
  type WebDatasetItem,
} from '../../src/sources/index.ts';
import { assertEqual, check, rejectsWith, within } from './assert.ts';
import { collect } from './async.ts';
import { streamOf } from './tar-helpers.ts';

/** `count` seeded documents of 1 to `maxLength` ids below `vocab`. */
export function seededDocs(seed: number, count: number, vocab: number, maxLength = 120): number[][] {
  return Array.from({ length: count }, (_, d) =>
    Array.from({ length: 1 + (hash3(seed, d, 1) % maxLength) }, (_, i) => hash3(seed, d, i + 2) % vocab),
  );
}

/** A shard built word by word from the format's definition, independent of the writer. */
export function handShard(fields: {
  magic?: number;
  version?: number;
  bytesPerToken?: number;
  vocab: number;
  starts: number[];
  tokens: number[];
  documents?: number;
  tokenCount?: number;
  reserved?: number;
}): Uint8Array {
  // A bad width in the header still lays the ids out at a real one.
  const width = fields.bytesPerToken === 4 ? 4 : 2;
  const out = new Uint8Array(1024 + fields.starts.length * 4 + fields.tokens.length * width);
  const view = new DataView(out.buffer);
  const header = [
    fields.magic ?? 0x4b544454,
    fields.version ?? 1,
    fields.bytesPerToken ?? 2,
    fields.vocab,
    fields.documents ?? fields.starts.length - 1,
    fields.tokenCount ?? fields.tokens.length,
  ];
  header.forEach((word, i) => {
    view.setUint32(i * 4, word, true);
  });
  if (fields.reserved !== undefined) view.setUint32(200 * 4, fields.reserved, true);
  fields.starts.forEach((start, d) => {
    view.setUint32(1024 + d * 4, start, true);
  });
  const at = 1024 + fields.starts.length * 4;
  fields.tokens.forEach((id, i) => {
    if (width === 2) view.setUint16(at + i * 2, id, true);
    else view.setUint32(at + i * 4, id, true);
  });
  return out;
}

/** An llm.c shard: header [20240520, 1, N] (or Llama 3's [20240801, 7, N] with u32 ids), then the ids. */
export function llmcShard(tokens: number[], wide = false): Uint8Array {
  const width = wide ? 4 : 2;
  const out = new Uint8Array(1024 + tokens.length * width);
  const view = new DataView(out.buffer);
  view.setUint32(0, wide ? 20240801 : 20240520, true);
  view.setUint32(4, wide ? 7 : 1, true);
  view.setUint32(8, tokens.length, true);
  tokens.forEach((id, i) => {
    if (wide) view.setUint32(1024 + i * 4, id, true);
    else view.setUint16(1024 + i * 2, id, true);
  });
  return out;
}

/** Each item as its ids, or `!code` for a failure. */
const read = async (bytes: Uint8Array, options: TokenShardReadOptions = {}, chunk = 4096) =>
  (await collect(tokenShardSamples(streamOf(bytes, chunk), options))).map((item: WebDatasetItem) =>
    isFailure(item) ? `${item.key}!${item.error.code}` : Array.from(documentTokens(item.files)),
  );

const sourceError = (code: string) => (error: unknown) => error instanceof SourceError && error.code === code;

/** Reads until the shard throws; returns what came before and the error. */
async function readUntilThrow(bytes: Uint8Array, code: string, what: string): Promise<Array<number[] | string>> {
  const items: Array<number[] | string> = [];
  await within(
    rejectsWith(
      (async () => {
        for await (const item of tokenShardSamples(streamOf(bytes, 300)))
          items.push(isFailure(item) ? `${item.key}!${item.error.code}` : Array.from(documentTokens(item.files)));
      })(),
      sourceError(code),
      what,
    ),
    5000,
    what,
  );
  return items;
}

export const tokenShardScenarios: Record<string, () => Promise<void>> = {
  async 'the writer writes the format as defined: header words, document table, little-endian ids'() {
    const docs = [[1, 2, 3], [65535], [7, 0]];
    const bytes = encodeTokenShard(docs, { vocabSize: 65536 });
    const expected = handShard({ vocab: 65536, starts: [0, 3, 4, 6], tokens: docs.flat() });
    check(bytes.length === 1024 + 4 * 4 + 6 * 2, `size ${bytes.length}`);
    check(new TextDecoder().decode(bytes.subarray(0, 4)) === 'TDTK', 'magic spells TDTK');
    assertEqual(Array.from(bytes), Array.from(expected), 'bytes equal the hand-built shard');
    const wide = encodeTokenShard([[70000, 1]], { vocabSize: 100_000 });
    assertEqual(Array.from(wide), Array.from(handShard({ bytesPerToken: 4, vocab: 100_000, starts: [0, 2], tokens: [70000, 1] })), 'u32');
  },

  async 'round trip: u16 and u32 shards give back every document token by token, in any chunking'() {
    for (const [vocab, bytesPerToken] of [
      [50257, undefined],
      [200_000, undefined],
      [1000, 4],
    ] as const) {
      const docs = seededDocs(vocab, 40, vocab);
      const bytes = encodeTokenShard(docs, { vocabSize: vocab, ...(bytesPerToken ? { bytesPerToken } : {}) });
      const width = bytesPerToken ?? (vocab <= 65536 ? 2 : 4);
      check(bytes.length === 1024 + 41 * 4 + docs.flat().length * width, `vocab ${vocab}: ${bytes.length} bytes`);
      for (const chunk of [7, 100_000]) assertEqual(await read(bytes, {}, chunk), docs, `vocab ${vocab}, chunks of ${chunk}`);
      const keys = (await collect(tokenShardSamples(streamOf(bytes)))).map((item) => item.key);
      assertEqual(
        keys,
        docs.map((_, d) => String(d)),
        'keys are document numbers',
      );
    }
    // A document longer than the reader's 65536-id scratch buffer is widened in pieces.
    const long = Array.from({ length: 70_001 }, (_, i) => (i * 7) % 50000);
    assertEqual(await read(encodeTokenShard([[5], long, [6]], { vocabSize: 50000 }), {}, 65_000), [[5], long, [6]], 'long document');
  },

  async 'llm.c shards: documents open at documentStart; without it the shard is one document'() {
    const eot = 50256;
    const tokens = [eot, 1, 2, 3, eot, 4, 5, eot, 6];
    assertEqual(
      await read(llmcShard(tokens), { documentStart: eot }),
      [
        [eot, 1, 2, 3],
        [eot, 4, 5],
        [eot, 6],
      ],
      'split at EOT',
    );
    assertEqual(await read(llmcShard(tokens)), [tokens], 'one document');
    assertEqual(
      await read(llmcShard([7, 8, eot, 9]), { documentStart: eot }),
      [
        [7, 8],
        [eot, 9],
      ],
      'ids before the first EOT',
    );
    assertEqual(await read(llmcShard([eot, 60000, eot, 3]), { documentStart: eot, vocabSize: 50257 }), ['0!bad-token', [eot, 3]], 'vocab');
    assertEqual(
      await read(llmcShard([1, 2, 3, 9, 4], true), { documentStart: 9 }, 5),
      [
        [1, 2, 3],
        [9, 4],
      ],
      'Llama 3 u32 shard',
    );
    const big = [eot, ...Array.from({ length: 70_000 }, (_, i) => i % 50000), eot, 1];
    const split = await read(llmcShard(big), { documentStart: eot, maxDocumentTokens: 1000 });
    assertEqual(split, ['0!too-large', [eot, 1]], 'an over-long document fails alone');
    const whole = await read(llmcShard(big), { documentStart: eot });
    check(JSON.stringify(whole[0]) === JSON.stringify(big.slice(0, 70_001)), 'a document across read chunks');
  },

  async 'bad headers and tables throw typed errors before anything is allocated'() {
    const ok = { vocab: 100, starts: [0, 2, 3], tokens: [1, 2, 3] };
    const cases: Array<[string, Uint8Array, string]> = [
      ['wrong magic', handShard({ ...ok, magic: 0x12345678 }), 'bad-header'],
      ['version 2', handShard({ ...ok, version: 2 }), 'bad-header'],
      ['dtype 3', handShard({ ...ok, bytesPerToken: 3 }), 'bad-header'],
      ['u16 with a vocabulary over 65536', handShard({ ...ok, vocab: 70000 }), 'bad-header'],
      ['more documents than tokens', handShard({ ...ok, documents: 4 }), 'bad-header'],
      ['a reserved word set', handShard({ ...ok, reserved: 1 }), 'bad-header'],
      ['4 billion documents', handShard({ ...ok, documents: 0xfffffff0, tokenCount: 0xfffffff0 }), 'too-large'],
      ['D larger than the bytes', handShard({ ...ok, documents: 1000, tokenCount: 5000 }), 'truncated'],
      ['starts not ascending', handShard({ ...ok, starts: [0, 2, 2] }), 'corrupt'],
      ['starts not from 0', handShard({ ...ok, starts: [1, 2, 3] }), 'corrupt'],
      ['starts not ending at N', handShard({ ...ok, starts: [0, 1, 2] }), 'corrupt'],
      ['a header cut short', handShard(ok).subarray(0, 700), 'truncated'],
    ];
    for (const [what, bytes, code] of cases) assertEqual(await readUntilThrow(bytes, code, what), [], `${what}: nothing before`);
  },

  async 'bad documents fail alone; a cut or overlong stream throws after the documents before it'() {
    const docs = seededDocs(3, 6, 100);
    const tokens = docs.flat();
    const starts = docs.reduce((s, d) => [...s, (s.at(-1) ?? 0) + d.length], [0]);
    const bad = tokens.slice();
    bad[starts[2]! + 0] = 100; // document 2 holds an id equal to the vocabulary size
    assertEqual(await read(handShard({ vocab: 100, starts, tokens: bad })), [docs[0], docs[1], '2!bad-token', ...docs.slice(3)], 'bad id');
    const limit = docs[1]!.length - 1;
    const limited = await read(encodeTokenShard(docs, { vocabSize: 100 }), { maxDocumentTokens: limit });
    const expected = docs.map((doc, d) => (doc.length > limit ? `${d}!too-large` : doc));
    check(expected.some((e) => typeof e === 'string') && expected.some((e) => typeof e !== 'string'), 'both kinds');
    assertEqual(limited, expected, `documents over ${limit} tokens fail alone`);
    const whole = encodeTokenShard(docs, { vocabSize: 100 });
    // Cut inside document 4: documents 0-3 arrive, then 'truncated'.
    const cut = whole.subarray(0, 1024 + 7 * 4 + (starts[4]! + 1) * 2);
    assertEqual(await readUntilThrow(cut, 'truncated', 'cut in document 4'), docs.slice(0, 4), 'before the cut');
    const short = handShard({ vocab: 100, starts: [0, 2, 1000], tokens: [1, 2, 3], tokenCount: 1000 });
    assertEqual(await readUntilThrow(short, 'truncated', 'N larger than the bytes'), [[1, 2]], 'N larger than the bytes');
    const trailing = new Uint8Array(whole.length + 3);
    trailing.set(whole);
    assertEqual(await readUntilThrow(trailing, 'corrupt', 'bytes after the tokens'), docs, 'every document, then corrupt');
    assertEqual(await read(encodeTokenShard([], { vocabSize: 10 })), [], 'an empty shard');
  },

  async 'bad options are OptionErrors where they are given'() {
    const option = (field: string) => (error: unknown) => error instanceof OptionError && error.field === field;
    const throws = (fn: () => unknown, field: string, what: string) =>
      rejectsWith(
        (async () => {
          fn();
        })(),
        option(field),
        what,
      );
    await throws(() => encodeTokenShard([[1, 10]], { vocabSize: 10 }), 'docs[0][1]', 'an id equal to the vocabulary');
    await throws(() => encodeTokenShard([[1.5]], { vocabSize: 10 }), 'docs[0][0]', 'a fraction');
    await throws(() => encodeTokenShard([[1], []], { vocabSize: 10 }), 'docs[1]', 'an empty document');
    await throws(() => encodeTokenShard([[1]], { vocabSize: 70000, bytesPerToken: 2 }), 'bytesPerToken', 'u16 over 65536');
    await throws(() => encodeTokenShard([[1]], { vocabSize: 0 }), 'vocabSize', 'no vocabulary');
    await throws(() => new ShardStream([], { format: 'tar' as 'tokens' }), 'format', 'an unknown format');
    await throws(() => new ShardStream([], { format: 'tokens', tokenShards: { documentStart: -1 } }), 'documentStart', 'a negative id');
    await rejectsWith(collect(tokenShardSamples(streamOf(new Uint8Array(0)), { maxDocuments: 0 })), option('maxDocuments'), 'reader');
  },
};
