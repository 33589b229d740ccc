// Where `tandem train --text` gets its documents and how it reads their tokens: a text file or
// folder (tokenised by a tokenizer.json, or the generated corpus' tokenizer), token shards with
// their shards.json, or N documents of the generated corpus; each with a held-out split and a way
// to turn a prompt into ids and a completion back into text.
import { listDir, readFile } from '../runtime/index.ts';
import { CORPUS_BOS, CORPUS_EOS, CORPUS_VOCAB_SIZE, corpusDocuments, corpusIds, corpusText } from '../synthetic/index.ts';
import type { TextSource } from '../text/index.ts';
import type { TextTrainingLoaderOptions } from '../train/index.ts';
import { UsageError } from './args.ts';

export interface TextData {
  /** What the data is, for the first line of output. */
  description: string;
  train: TextSource;
  heldOut: TextSource | undefined;
  vocabSize: number;
  loader: TextTrainingLoaderOptions;
  /** Prompt text → ids (BOS first where the documents have one); undefined without a tokenizer. */
  encode: ((text: string) => number[]) | undefined;
  decode: (ids: readonly number[]) => string;
  eos: number | undefined;
}

interface HfTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): { ids: number[] };
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
}

const TEXT_FILE = /\.(txt|md|text)$/i;
const HELD_OUT_EVERY = 10;
const CORPUS_TRAIN_SEED = 1;
const CORPUS_HELD_OUT_SEED = 2;

const corpusEncoder = { encode: (text: string) => corpusIds(text) };
const corpusPrompt = (text: string) => [CORPUS_BOS, ...corpusIds(text)];
const corpusLoader: TextTrainingLoaderOptions = {
  tokenizer: corpusEncoder,
  bos: CORPUS_BOS,
  eos: CORPUS_EOS,
  vocabSize: CORPUS_VOCAB_SIZE,
};

/** `--generated N`: documents 0…N−1 of corpus seed 1 to train on, N/10 (at least 16) of seed 2 held out. */
export function generatedData(count: number): TextData {
  return {
    description: `${count} generated corpus documents (seed ${CORPUS_TRAIN_SEED}; held out: seed ${CORPUS_HELD_OUT_SEED})`,
    train: { texts: corpusDocuments(CORPUS_TRAIN_SEED, count) },
    heldOut: { texts: corpusDocuments(CORPUS_HELD_OUT_SEED, Math.max(16, Math.ceil(count / HELD_OUT_EVERY))) },
    vocabSize: CORPUS_VOCAB_SIZE,
    loader: corpusLoader,
    encode: corpusPrompt,
    decode: (ids) => corpusText(ids),
    eos: CORPUS_EOS,
  };
}

/**
 * `--text PATH`: a folder's text files (every 10th held out; the last of 2 to 9) or one file (its
 * last tenth held out); or Parquet files (`a.parquet,b.parquet`, paths or URLs: a row of the text
 * column a document; with several, the last held out).
 */
export async function textFileData(path: string, tokenizerPath: string | undefined): Promise<TextData> {
  if (/\.parquet$/i.test(path))
    return parquetTextData(
      path.split(',').filter((p) => p !== ''),
      tokenizerPath,
    );
  const files = await textFiles(path);
  if (files.length === 0) throw new UsageError(`--text ${path}: no .txt, .md or .text files`);
  let train: TextSource;
  let heldOut: TextSource;
  if (files.length > 1) {
    // Every 10th file; with fewer than 10, the last one.
    const held = (i: number) => (files.length < HELD_OUT_EVERY ? i === files.length - 1 : i % HELD_OUT_EVERY === HELD_OUT_EVERY - 1);
    train = files.filter((_, i) => !held(i));
    heldOut = files.filter((_, i) => held(i));
  } else {
    const text = new TextDecoder().decode(await argumentFile('--text', files[0] as string));
    const cut = cutAt(text, 0.9);
    train = { texts: [text.slice(0, cut)] };
    heldOut = { texts: [text.slice(cut)] };
  }
  const described = `${files.length} text file${files.length === 1 ? '' : 's'} in ${path}`;
  if (tokenizerPath === undefined)
    return {
      ...generatedData(0),
      description: `${described} (the generated corpus' tokenizer, its alphabet only: --tokenizer for other text)`,
      train,
      heldOut,
    };
  const tokenizer = await tokenizerData(tokenizerPath);
  return { ...tokenizer, description: `${described} (${tokenizerPath})`, train, heldOut };
}

async function parquetTextData(files: string[], tokenizerPath: string | undefined): Promise<TextData> {
  const train: TextSource = { parquet: files.length > 1 ? files.slice(0, -1) : files };
  const heldOut: TextSource | undefined = files.length > 1 ? { parquet: files.slice(-1) } : undefined;
  const described = `${files.length} Parquet file${files.length === 1 ? '' : 's'} (${files.join(', ')})`;
  if (tokenizerPath === undefined)
    return {
      ...generatedData(0),
      description: `${described} (the generated corpus' tokenizer: --tokenizer for other text)`,
      train,
      heldOut,
    };
  return { ...(await tokenizerData(tokenizerPath)), description: `${described} (${tokenizerPath})`, train, heldOut };
}

/** `--tokens DIR`: token shards and their shards.json (writeTokenShards); the last shard held out when there are several. */
export async function tokenShardData(dir: string, tokenizerPath: string | undefined): Promise<TextData> {
  let manifest: { format?: string; vocabSize?: number; shards?: { name: string }[] };
  try {
    manifest = JSON.parse(new TextDecoder().decode(await argumentFile('--tokens', `${dir}/shards.json`)));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--tokens ${dir}: shards.json is not JSON`);
  }
  const names = manifest.shards?.map((s) => `${dir}/${s.name}`) ?? [];
  const vocabSize = manifest.vocabSize;
  if (manifest.format !== 'tokens' || names.length === 0 || typeof vocabSize !== 'number')
    throw new UsageError(`--tokens ${dir}: shards.json is not a token shard manifest (writeTokenShards)`);
  const heldOut = names.length > 1 ? { tokens: names.slice(-1) } : undefined;
  const train = { tokens: names.length > 1 ? names.slice(0, -1) : names };
  const description = `${names.length} token shard${names.length === 1 ? '' : 's'} in ${dir}, vocabulary ${vocabSize}`;
  if (tokenizerPath !== undefined) {
    const t = await tokenizerData(tokenizerPath);
    return { ...t, description, train, heldOut, vocabSize, loader: { ...withoutTokenizer(t.loader), vocabSize } };
  }
  if (vocabSize === CORPUS_VOCAB_SIZE) {
    const loader = withoutTokenizer(corpusLoader);
    return { ...generatedData(0), description: `${description} (read as the generated corpus' ids)`, train, heldOut, loader };
  }
  return {
    description,
    train,
    heldOut,
    vocabSize,
    loader: { vocabSize },
    encode: undefined,
    decode: (ids) => ids.join(' '),
    eos: undefined,
  };
}

/** Token shards hold ids already: the tokenizer is only for the prompt. */
function withoutTokenizer(o: TextTrainingLoaderOptions): TextTrainingLoaderOptions {
  const copy = { ...o };
  delete copy.tokenizer;
  return copy;
}

async function tokenizerData(path: string): Promise<Omit<TextData, 'description' | 'train' | 'heldOut'>> {
  const text = new TextDecoder().decode(await argumentFile('--tokenizer', path));
  let json: {
    model?: { vocab?: Record<string, number> | [string, number][] };
    added_tokens?: { id: number; content: string }[];
    decoder?: unknown;
  };
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--tokenizer ${path}: not JSON`);
  }
  const vocab = json.model?.vocab;
  const ids = [
    ...(Array.isArray(vocab) ? vocab.map((_, i) => i) : Object.values(vocab ?? {})),
    ...(json.added_tokens ?? []).map((t) => t.id),
  ];
  if (ids.length === 0) throw new UsageError(`--tokenizer ${path}: no vocabulary (model.vocab)`);
  const special = (names: string[]) => json.added_tokens?.find((t) => names.includes(t.content))?.id;
  const bos = special(['<|bos|>', '<s>', '<|begin_of_text|>', '[CLS]']);
  const eos = special(['<|eos|>', '</s>', '<|endoftext|>', '<|end_of_text|>', '[SEP]']);
  const { Tokenizer } = (await import('@huggingface/tokenizers')) as unknown as {
    Tokenizer: new (json: object, config: object) => HfTokenizer;
  };
  const tokenizer = new Tokenizer(json, {});
  // Without a decoder tokenizers.js joins tokens with spaces; a character-level vocabulary reads back by concatenation.
  const tokenOf = new Map<number, string>(
    Array.isArray(vocab) ? vocab.map(([t], i) => [i, t]) : Object.entries(vocab ?? {}).map(([t, i]) => [i, t]),
  );
  const specials = new Set((json.added_tokens ?? []).map((t) => t.id));
  const joined = (out: readonly number[]) => out.map((id) => (specials.has(id) ? '' : (tokenOf.get(id) ?? '\uFFFD'))).join('');
  // A loop, not Math.max(...ids): 128k arguments and more (Llama 3, Gemma 3) overflow the stack.
  let vocabSize = 0;
  for (const id of ids) if (id >= vocabSize) vocabSize = id + 1;
  return {
    vocabSize,
    loader: {
      tokenizer: { json: text },
      vocabSize,
      ...(bos === undefined ? {} : { bos }),
      ...(eos === undefined ? {} : { eos }),
    },
    encode: (prompt) => [...(bos === undefined ? [] : [bos]), ...tokenizer.encode(prompt, { add_special_tokens: false }).ids],
    decode: (out) => (json.decoder ? tokenizer.decode([...out], { skip_special_tokens: true }) : joined(out)),
    eos,
  };
}

async function textFiles(path: string): Promise<string[]> {
  let entries: Awaited<ReturnType<typeof listDir>>;
  try {
    entries = await listDir(path);
  } catch {
    return TEXT_FILE.test(path) || (await argumentFile('--text', path)) ? [path] : [];
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)))
    if (e.isDirectory) out.push(...(await textFiles(`${path}/${e.name}`)));
    else if (TEXT_FILE.test(e.name)) out.push(`${path}/${e.name}`);
  return out;
}

/** Where the first `share` of the text ends, moved forward to a line's end so no line is cut. */
function cutAt(text: string, share: number): number {
  const at = Math.floor(text.length * share);
  const newline = text.indexOf('\n', at);
  return newline < 0 || newline === text.length - 1 ? at : newline + 1;
}

async function argumentFile(flag: string, path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
