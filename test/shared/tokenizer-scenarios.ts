/**
 * The text loader's tokenizer stage (src/text/tokenizer.ts) as plain async functions that throw on
 * failure, run by vitest (Node), Deno.test and the Chromium tier. The reference is always
 * tokenizers.js run directly on the same text, or the corpus' own id definition.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { OptionError, WorkerError } from '../../src/errors/index.ts';
import { CORPUS_BOS, CORPUS_EOS, CORPUS_VOCAB_SIZE, corpusDocuments, corpusIds, corpusTokenizerJson } from '../../src/synthetic/index.ts';
import { byteLevelBpe as fastByteLevelBpe, librarySplitPattern } from '../../src/text/byte-level-bpe.js';
import { TextError, type TextErrorCode } from '../../src/text/errors.ts';
import { type TextDocumentBytes, TokenizerPool } from '../../src/text/tokenizer.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';
import { trainByteLevelBpe } from './bpe-trainer.ts';
import { metaspaceRoadMatchesTokenizersJs, NAMES_SECOND_TEXT } from './tokenizer-metaspace-scenarios.ts';
import { LLAMA3_SPLIT, NON_ASCII, randomTexts, TRICKY, UNSEEN } from './tokenizer-texts.ts';

const utf8 = new TextEncoder();
const limits = { maxDocumentBytes: 4096, maxDocumentTokens: 2048 };

let bpe: { json: object; endOfText: number; direct: Tokenizer } | undefined;
/** The byte-level BPE with merges, trained once per run on the corpus and the non-ASCII texts. */
function byteLevelBpe(): { json: object; endOfText: number; direct: Tokenizer } {
  if (bpe === undefined) {
    const json = trainByteLevelBpe([...corpusDocuments(3, 150), ...NON_ASCII, ...NON_ASCII], 300);
    const direct = new Tokenizer(json, {});
    bpe = { json, endOfText: direct.token_to_id('<|endoftext|>')!, direct };
  }
  return bpe;
}

const textDoc = (key: string, text: string): TextDocumentBytes => ({ key, bytes: utf8.encode(text), ext: 'txt' });
const directIds = (t: Tokenizer, text: string) => t.encode(text, { add_special_tokens: false }).ids;

function textErrorOf(result: PromiseSettledResult<unknown>, code: TextErrorCode, key: string): void {
  check(result.status === 'rejected', `${key}: expected TextError '${code}', it resolved`);
  const e: unknown = result.reason;
  check(
    e instanceof TextError && e.code === code && e.message.includes(key),
    `${key}: expected TextError '${code}' naming the key, got ${String(e)}`,
  );
}

/** In workers, ids equal tokenizers.js's own for ASCII, non-ASCII and JSON documents, BOS/EOS added. */
export async function workerIdsMatchDirect(): Promise<void> {
  const { json, endOfText, direct } = byteLevelBpe();
  const texts = [...corpusDocuments(11, 6), ...NON_ASCII, ...UNSEEN];
  const docs = texts.map((t, i) => textDoc(`doc${i}`, t));
  docs.push({ key: 'meta.json', bytes: utf8.encode(JSON.stringify({ text: UNSEEN[0], other: 1 })), ext: 'json' });
  const expected = [...texts, UNSEEN[0]!].map((t) => [endOfText, ...directIds(direct, t), endOfText]);
  const withTemplate = direct.encode(UNSEEN[0]!).ids;
  check(
    withTemplate[0] === endOfText && withTemplate.length === directIds(direct, UNSEEN[0]!).length + 1,
    'the tokenizer adds its own token when let',
  );
  check(directIds(direct, NON_ASCII[0]!).length < utf8.encode(NON_ASCII[0]!).length / 2, 'merges apply to the non-ASCII text');

  await using pool = await TokenizerPool.open({ json }, { ...limits, workers: 2, bos: endOfText, eos: endOfText });
  assertEqual(pool.concurrency, 128, 'two groups of 32 documents in flight per worker');
  const out = await Promise.all(docs.map((d) => pool.encode(d)));
  assertEqual(
    out.map((d) => [...d.tokens]),
    expected,
    'ids as tokenizers.js gives them, between BOS and EOS',
  );
  check(
    out.every((d, i) => d.key === docs[i]!.key && d.tokens instanceof Uint32Array),
    'keys kept, Uint32Array tokens',
  );
  const bodyPool = await TokenizerPool.open({ json: JSON.stringify(json) }, { ...limits, workers: 1, textField: 'body' });
  const body = await bodyPool.encode({ key: 'body.json', bytes: utf8.encode(JSON.stringify({ body: NON_ASCII[1] })), ext: '.json' });
  await bodyPool.close();
  assertEqual([...body.tokens], directIds(direct, NON_ASCII[1]!), 'a JSON text given as a string; textField; no BOS/EOS unless set');
  check(docs[0]!.bytes.byteLength > 0, "the caller's bytes are not detached");
}

/** The corpus tokenizer is the corpus' id definition, directly and through workers read from a URL. */
export async function corpusTokenizerIsCorpusIds(): Promise<void> {
  const documents = corpusDocuments(5, 300);
  const direct = new Tokenizer(corpusTokenizerJson(), {});
  const mismatch = documents.findIndex((d) => JSON.stringify(direct.encode(d).ids) !== JSON.stringify([...corpusIds(d)]));
  check(mismatch < 0, `document ${mismatch}: tokenizers.js's ids differ from corpusIds`);

  const url = `data:application/json,${encodeURIComponent(JSON.stringify(corpusTokenizerJson()))}`;
  const options = { ...limits, workers: 2, bos: CORPUS_BOS, eos: CORPUS_EOS, vocabSize: CORPUS_VOCAB_SIZE };
  await using pool = await TokenizerPool.open({ url }, options);
  const out = await Promise.all(documents.slice(0, 40).map((d, i) => pool.encode(textDoc(`c${i}`, d))));
  const wrong = out.findIndex(
    (d, i) => JSON.stringify([...d.tokens]) !== JSON.stringify([CORPUS_BOS, ...corpusIds(documents[i]!), CORPUS_EOS]),
  );
  check(wrong < 0, `document ${wrong}: the pool's tokens are not BOS + corpusIds + EOS`);

  await using small = await TokenizerPool.open({ json: corpusTokenizerJson() }, { ...limits, workers: 1, vocabSize: 10 });
  const [low, high] = await Promise.allSettled([small.encode(textDoc('low', ' . a')), small.encode(textDoc('high', 'cat'))]);
  assertEqual(low.status === 'fulfilled' ? [...low.value.tokens] : low.reason, [2, 3, 2, 4], 'ids under the vocabulary size pass');
  textErrorOf(high, 'token-out-of-range', 'high');
}

/** Each bad document fails alone, typed, and the documents around it come back right. */
export async function badDocumentsFailAlone(): Promise<void> {
  const { json, direct } = byteLevelBpe();
  const good = (i: number) => textDoc(`good${i}`, `${NON_ASCII[i % 3]} ${i}`);
  const invalidUtf8 = Uint8Array.of(0x68, 0x69, 0xc3, 0x28, 0x20, 0xff);
  const docs: TextDocumentBytes[] = [
    good(0),
    { key: 'broken.txt', bytes: invalidUtf8, ext: 'txt' },
    good(1),
    { key: 'cut.json', bytes: utf8.encode('{"text": "unterminated'), ext: 'json' },
    good(2),
    { key: 'number.json', bytes: utf8.encode('{"text": 7}'), ext: 'json' },
    good(3),
    // Too many bytes, and not UTF-8 either: 'too-large' shows the size was checked before decoding.
    { key: 'huge.txt', bytes: new Uint8Array(201).fill(0xff), ext: 'txt' },
    { key: 'long.txt', bytes: utf8.encode('日本 '.repeat(60)), ext: 'txt' },
    good(4),
  ];
  const expect = (result: PromiseSettledResult<{ tokens: Uint32Array }>, i: number) => {
    check(result.status === 'fulfilled', `good${i} failed: ${result.status === 'rejected' ? String(result.reason) : ''}`);
    assertEqual([...result.value.tokens], directIds(direct, `${NON_ASCII[i % 3]} ${i}`), `good${i} is right`);
  };
  const options = { maxDocumentBytes: 200, maxDocumentTokens: 100 };
  const check_ = (results: PromiseSettledResult<{ tokens: Uint32Array }>[]) => {
    for (const [slot, i] of [0, 2, 4, 6, 9].entries()) expect(results[i]!, slot);
    textErrorOf(results[1]!, 'bad-utf8', 'broken.txt');
    textErrorOf(results[3]!, 'bad-json', 'cut.json');
    textErrorOf(results[5]!, 'bad-json', 'number.json');
    textErrorOf(results[7]!, 'too-large', 'huge.txt');
    textErrorOf(results[8]!, 'too-large', 'long.txt');
  };
  // One worker: every failure went through the worker the good documents after it needed.
  await using pool = await TokenizerPool.open({ json }, { ...options, workers: 1 });
  check_(await Promise.allSettled(docs.map((d) => pool.encode(d))));
  // The inline road reads documents by the same rules, here with tokenizers.js's own object.
  await using inline = await TokenizerPool.open(direct, options);
  check_(await Promise.allSettled(docs.map((d) => inline.encode(d))));
}

/**
 * Documents go to the workers many to a message: across several groups (more than 32 documents,
 * one over 64 KiB alone), each bad document fails alone, one aborted by its own signal rejects
 * with its reason, and every other document of their groups comes back with tokenizers.js's ids.
 */
export async function groupedDocumentsSettleAlone(): Promise<void> {
  const { json, direct } = byteLevelBpe();
  const texts = corpusDocuments(13, 90);
  texts[40] = 'long '.repeat(14_000);
  const docs = texts.map((t, i) => textDoc(`g${i}`, t));
  for (let i = 5; i < docs.length; i += 17) docs[i] = { key: `bad${i}.txt`, bytes: Uint8Array.of(0x61, 0xff), ext: 'txt' };
  docs[12] = { key: 'bad12.json', bytes: utf8.encode('{"body": "x"}'), ext: 'json' };
  await using pool = await TokenizerPool.open({ json }, { maxDocumentBytes: 1 << 20, maxDocumentTokens: 1 << 20, workers: 2 });
  const aborting = new AbortController();
  const pending = docs.map((d, i) => pool.encode(d, i === 30 ? aborting.signal : undefined));
  aborting.abort(new Error('stop g30'));
  const results = await Promise.allSettled(pending);
  let good = 0;
  for (const [i, r] of results.entries()) {
    const key = docs[i]!.key;
    if (key.startsWith('bad')) textErrorOf(r, key.endsWith('json') ? 'bad-json' : 'bad-utf8', key);
    else if (i === 30)
      check(r.status === 'rejected' && (r.reason as Error).message === 'stop g30', 'the aborted document rejects with its reason');
    else {
      check(r.status === 'fulfilled', `${key} failed: ${r.status === 'rejected' ? String(r.reason) : ''}`);
      assertEqual([...r.value.tokens], directIds(direct, texts[i]!), `${key} is right`);
      good++;
    }
  }
  assertEqual(good, 90 - 7, 'every other document came back');
}

/** A tokenizer that throws fails the document as 'tokenizer-failed'; one that cannot be built, open(). */
export async function throwingTokenizerFails(): Promise<void> {
  const encoder = {
    encode(text: string): number[] {
      if (text.includes('boom')) throw new RangeError('boom refused');
      return text === 'negative' ? [3, -1] : [...text].map((c) => c.charCodeAt(0));
    },
  };
  await using pool = await TokenizerPool.open(encoder, { ...limits, bos: 1, eos: 2 });
  const results = await Promise.allSettled(['ab', 'a boom', 'negative', 'c'].map((t, i) => pool.encode(textDoc(`t${i}`, t))));
  assertEqual(results[0]!.status === 'fulfilled' ? [...results[0]!.value.tokens] : [], [1, 97, 98, 2], 'inline encoder, BOS and EOS');
  textErrorOf(results[1]!, 'tokenizer-failed', 't1');
  textErrorOf(results[2]!, 'token-out-of-range', 't2');
  assertEqual(results[3]!.status === 'fulfilled' ? [...results[3]!.value.tokens] : [], [1, 99, 2], 'the encoder goes on after a throw');

  // tokenizers.js throws on every encode with a template naming a second sequence for single texts.
  const broken = { ...(corpusTokenizerJson() as Record<string, unknown>) };
  broken.post_processor = NAMES_SECOND_TEXT;
  await using throwing = await TokenizerPool.open({ json: broken }, { ...limits, workers: 1 });
  const [first, second] = await Promise.allSettled([throwing.encode(textDoc('w0', 'cat')), throwing.encode(textDoc('w1', 'dog'))]);
  textErrorOf(first, 'tokenizer-failed', 'w0');
  textErrorOf(second, 'tokenizer-failed', 'w1');

  // A piece the tokenizer has no id for (a WordPiece whose unknown token is not in its vocabulary):
  // Hugging Face's tokenizers fails; tokenizers.js gives no id, which must not become id 0.
  const wordPiece = {
    version: '1.0',
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { a: 0, b: 1 } },
  };
  await using unnamed = await TokenizerPool.open({ json: wordPiece }, { ...limits, workers: 1 });
  const [known, unknown] = await Promise.allSettled([unnamed.encode(textDoc('ab', 'a b')), unnamed.encode(textDoc('ac', 'a c'))]);
  assertEqual(known.status === 'fulfilled' ? [...known.value.tokens] : [], [0, 1], 'the known pieces');
  textErrorOf(unknown, 'tokenizer-failed', 'ac');
  // A Unigram model's byte_fallback, which tokenizers.js does not have: refused, not other ids.
  const unigram = {
    ...wordPiece,
    pre_tokenizer: null,
    model: {
      type: 'Unigram',
      unk_id: 0,
      byte_fallback: true,
      vocab: [
        ['<unk>', 0],
        ['a', -1],
        ['<0x63>', -2],
      ],
    },
  };
  await rejectsWith(
    TokenizerPool.open({ json: unigram }, { ...limits, workers: 1 }),
    (e) => e instanceof TextError && e.code === 'tokenizer-failed' && /byte_fallback/.test(e.message),
    'a Unigram model with byte_fallback',
  );

  const unknownModel = { ...(corpusTokenizerJson() as Record<string, unknown>), model: { type: 'NoSuchModel' } };
  await rejectsWith(
    TokenizerPool.open({ json: unknownModel }, { ...limits, workers: 1 }),
    (e) => e instanceof TextError && e.code === 'tokenizer-failed' && /NoSuchModel/.test(e.message),
    'a tokenizer.json tokenizers.js refuses fails open()',
  );
}

/** close() terminates every worker; documents in flight and after it reject. */
export async function closeStopsWorkers(): Promise<void> {
  const pool = await TokenizerPool.open({ json: corpusTokenizerJson() }, { ...limits, workers: 2 });
  const documents = corpusDocuments(7, 8).map((d, i) => textDoc(`d${i}`, d));
  await Promise.all(documents.map((d) => pool.encode(d)));
  assertEqual(pool.workers, 2, 'both workers started');
  const inFlight = Promise.allSettled(documents.map((d) => pool.encode(d)));
  await pool.close();
  assertEqual(pool.workers, 0, 'no worker left after close()');
  check(
    (await inFlight).every((r) => r.status === 'rejected'),
    'documents in flight at close() reject',
  );
  await rejectsWith(pool.encode(documents[0]!), (e) => e instanceof WorkerError && e.code === 'pool-closed', 'encode after close()');
}

/** Options are checked before anything starts: required limits, the tokenizer's form, ids in range. */
export async function optionsAreChecked(): Promise<void> {
  const encoder = { encode: (text: string) => [text.length] };
  const refused = (options: object, spec: object = encoder) =>
    TokenizerPool.open(spec as typeof encoder, options as typeof limits).then(
      () => 'opened',
      (e: unknown) => (e instanceof OptionError ? e.field : String(e)),
    );
  assertEqual(
    await Promise.all([
      refused({ maxDocumentTokens: 10 }),
      refused({ ...limits, vocabSize: 10, eos: 10 }),
      refused({ ...limits, workers: 0 }),
      refused({ ...limits, textField: '' }),
      refused({ ...limits, stride: 2 }),
      refused(limits, { path: 'tokenizer.json' }),
      refused(limits, { json: {}, fast: 'yes' }),
    ]),
    ['maxDocumentBytes', 'eos', 'workers', 'textField', 'stride', 'spec', 'spec.fast'],
    'each wrong option named',
  );
}

/**
 * Tandem's byte-level BPE road (src/text/byte-level-bpe.js) gives tokenizers.js's ids on every text,
 * for the trained tokenizer.json and for each setting it covers; it covers every such text itself
 * (no silent hand-back); it hands back a text holding an added token's text and one whose bytes
 * the vocabulary lacks, and refuses the shapes it does not cover. Through the workers, `fast: false`
 * (tokenizers.js only) and the default give the same ids.
 */
export async function fastRoadMatchesTokenizersJs(): Promise<void> {
  const { json } = byteLevelBpe();
  const base = json as { pre_tokenizer: object; model: { merges: [string, string][]; vocab: Record<string, number> } };
  const pre = base.pre_tokenizer;
  const split = (regex: string, behavior = 'Isolated', invert = false) => ({
    ...json,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: regex }, behavior, invert },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
  });
  const llama3 = split(LLAMA3_SPLIT);
  const variants: [string, object][] = [
    ['as trained (NFC, ByteLevel)', json],
    ['no normalizer', { ...json, normalizer: null }],
    ['NFKC', { ...json, normalizer: { type: 'NFKC' } }],
    ['NFD', { ...json, normalizer: { type: 'NFD' } }],
    ['add_prefix_space', { ...json, pre_tokenizer: { ...pre, add_prefix_space: true } }],
    ['no regex split', { ...json, pre_tokenizer: { ...pre, use_regex: false } }],
    ['a Sequence of one ByteLevel', { ...json, pre_tokenizer: { type: 'Sequence', pretokenizers: [pre] } }],
    ["merges as 'a b' strings", { ...json, model: { ...base.model, merges: base.model.merges.map((m) => m.join(' ')) } }],
    ['ignore_merges', { ...json, model: { ...base.model, ignore_merges: true } }],
    // Listed again last, the first merge takes the last rank (Hugging Face's tokenizers and tokenizers.js keep the later one).
    ['a merge listed twice', { ...json, model: { ...base.model, merges: [...base.model.merges, base.model.merges[0]!] } }],
    ["a Split (Llama 3's regex, in the Rust dialect) then ByteLevel", llama3],
    ['a Split isolating digit runs (text between matches kept) then ByteLevel', split('\\p{N}+')],
    // GPT-4o's shape: the pattern names the pieces to keep, and the text between them is dropped.
    ['an inverted Split removing what it does not match (digit runs kept, the rest dropped)', split('\\p{N}+', 'Removed', true)],
  ];
  const texts = [...corpusDocuments(7, 30), ...NON_ASCII, ...UNSEEN, ...TRICKY, ...randomTexts(300, 17)];
  for (const [name, variant] of variants) {
    const direct = new Tokenizer(variant, {});
    const fast = fastByteLevelBpe(variant, {}, librarySplitPattern(direct));
    check(fast !== undefined, `${name}: the fast road takes it`);
    for (const [i, text] of texts.entries()) {
      const got = fast.encode(text);
      check(got !== undefined, `${name}: text ${i} ${JSON.stringify(text)} was handed back`);
      assertEqual([...got], directIds(direct, text), `${name}: text ${i} ${JSON.stringify(text)}`);
    }
  }
  const fast = fastByteLevelBpe(json)!;
  const direct = new Tokenizer(json, {});
  // Added tokens written in a text (normalized: false) are cut out as tokenizers.js does, the text between encoded alone.
  for (const text of ['before <|endoftext|> after', '<|endoftext|>', '<|endoftext|><|endoftext|>x', ' <|endoftext|> ', 'a <|endoftext|'])
    assertEqual([...(fast.encode(text) ?? [-1])], directIds(direct, text), `a text holding an added token: ${JSON.stringify(text)}`);
  const vocab = { ...base.model.vocab };
  delete vocab[String.fromCharCode(289)]; // the symbol of byte 0x7f (DEL), which the training text never held
  const lacking = fastByteLevelBpe({ ...json, model: { ...base.model, vocab } });
  check(lacking?.encode('a\u007fb') === undefined && lacking?.encode('a b') !== undefined, 'a byte the vocabulary lacks is handed back');
  const refused = [
    ['a character-level BPE with no pre-tokenizer', corpusTokenizerJson()],
    ['Metaspace', { ...json, pre_tokenizer: { type: 'Metaspace', replacement: '▁' } }],
    ['a Lowercase normalizer', { ...json, normalizer: { type: 'Lowercase' } }],
    ['dropout', { ...json, model: { ...base.model, dropout: 0.1 } }],
    ['WordPiece', { ...json, model: { type: 'WordPiece', vocab: base.model.vocab } }],
    ['a post-processor naming the second text', { ...json, post_processor: NAMES_SECOND_TEXT }],
  ] as const;
  for (const [name, variant] of refused) check(fastByteLevelBpe(variant) === undefined, `${name}: refused`);
  const removed = split('\\s+', 'Removed');
  check(fastByteLevelBpe(llama3) === undefined, 'a Split without the RegExp tokenizers.js compiled: refused');
  check(
    fastByteLevelBpe(removed, {}, librarySplitPattern(new Tokenizer(removed, {}))) === undefined,
    'a Split that removes its matches: refused',
  );
  check(fastByteLevelBpe(json, { remove_space: true }) === undefined, 'a config that removes spaces: refused');

  const docs = [...texts.slice(0, 80), 'with <|endoftext|> inside'].map((t, i) => textDoc(`d${i}`, t));
  for (const [name, variant] of [
    ['GPT-2 shape', json],
    ['Llama 3 shape', llama3],
  ] as const) {
    await using library = await TokenizerPool.open({ json: variant, fast: false }, { ...limits, workers: 1 });
    await using road = await TokenizerPool.open({ json: variant }, { ...limits, workers: 2 });
    const [a, b] = await Promise.all([library, road].map((pool) => Promise.all(docs.map((d) => pool.encode(d)))));
    assertEqual(
      b!.map((d) => [...d.tokens]),
      a!.map((d) => [...d.tokens]),
      `${name}: through the workers, the default road gives the ids of fast: false`,
    );
    const [onLibrary, onRoad] = [library.roads(), road.roads()];
    check(
      onLibrary.road === 'tokenizers.js' && onLibrary.documents['tokenizers.js'] === docs.length,
      `${name}: fast: false reports tokenizers.js for every document (${JSON.stringify(onLibrary)})`,
    );
    check(
      onRoad.road === 'byte-level-bpe' && onRoad.documents['byte-level-bpe'] === docs.length,
      `${name}: the default reports the byte-level road for every document (${JSON.stringify(onRoad)})`,
    );
  }
}

export const scenarios = {
  optionsAreChecked,
  fastRoadMatchesTokenizersJs,
  metaspaceRoadMatchesTokenizersJs,
  workerIdsMatchDirect,
  corpusTokenizerIsCorpusIds,
  badDocumentsFailAlone,
  groupedDocumentsSettleAlone,
  throwingTokenizerFails,
  closeStopsWorkers,
};
