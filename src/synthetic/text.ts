// A generated text corpus for language-model tests: sentences of a small seeded grammar, so a tiny
// model learns it in seconds and a bar means something. Most characters follow from the ones
// before (the rest of a word after its first letters), while number agreement makes context
// matter: a plural determiner ("two", "some", "these") needs a plural noun, and a singular subject
// a verb ending in "s" ("the cat sees", "the cats see"), with an adjective possibly in between.
// Character-level ids, so any tokenizer giving the same ids is easy to build (docs/gpt.md).
import { OptionError } from '../errors/index.ts';
import { streamFor } from '../random/index.ts';

/** Every character a corpus document holds, in id order (ids from 2). */
export const CORPUS_ALPHABET = ' .abcdefghiklmnoprstuw';
/** Id 0: beginning of a document. */
export const CORPUS_BOS = 0;
/** Id 1: end of a document. */
export const CORPUS_EOS = 1;
export const CORPUS_BOS_TOKEN = '<|bos|>';
export const CORPUS_EOS_TOKEN = '<|eos|>';
/** Alphabet plus BOS and EOS. */
export const CORPUS_VOCAB_SIZE = CORPUS_ALPHABET.length + 2;
/** The shortest and longest document `corpusDocuments` makes, in characters. */
export const CORPUS_MIN_CHARS = 20;
export const CORPUS_MAX_CHARS = 400;

const SINGULAR_DETERMINERS = ['the', 'one', 'this'] as const;
const PLURAL_DETERMINERS = ['two', 'three', 'some', 'these'] as const;
const ADJECTIVES = ['big', 'small', 'red', 'old'] as const;
const NOUNS = ['cat', 'dog', 'bird', 'frog', 'duck', 'goat', 'hen', 'owl', 'bee', 'ant'] as const;
const VERBS = ['see', 'like', 'chase', 'find', 'help', 'want'] as const;
const ADJECTIVE_CHANCE = 0.3;
const MAX_SENTENCES = 12;

type Rng = ReturnType<typeof streamFor>;

function pick(rng: Rng, list: readonly string[]): string {
  return list[rng.int(list.length)] ?? '';
}

function nounPhrase(rng: Rng, plural: boolean): string {
  const determiner = plural ? pick(rng, PLURAL_DETERMINERS) : pick(rng, SINGULAR_DETERMINERS);
  const adjective = rng.float() < ADJECTIVE_CHANCE ? `${pick(rng, ADJECTIVES)} ` : '';
  return `${determiner} ${adjective}${pick(rng, NOUNS)}${plural ? 's' : ''}`;
}

function sentence(rng: Rng): string {
  const pluralSubject = rng.float() < 0.5;
  const subject = nounPhrase(rng, pluralSubject);
  const verb = pick(rng, VERBS);
  const object = nounPhrase(rng, rng.float() < 0.5);
  return `${subject} ${verb}${pluralSubject ? '' : 's'} ${object}.`;
}

/** Document `index` of the corpus `seed`: 1 to 12 sentences, 20 to 400 characters. */
export function corpusDocument(seed: number, index: number): string {
  const rng = streamFor(seed, index, 0x7e47);
  const wanted = 1 + rng.int(MAX_SENTENCES);
  let text = sentence(rng);
  for (let i = 1; i < wanted; i++) {
    const next = sentence(rng);
    if (text.length + 1 + next.length > CORPUS_MAX_CHARS) break;
    text = `${text} ${next}`;
  }
  return text;
}

/** Documents 0 … count−1 of the corpus `seed` (each drawn from its own stream, so any slice is the same). */
export function corpusDocuments(seed: number, count: number): string[] {
  if (!Number.isSafeInteger(count) || count < 0) throw new OptionError('corpusDocuments', 'count', count, 'a non-negative integer');
  const documents: string[] = new Array(count);
  for (let i = 0; i < count; i++) documents[i] = corpusDocument(seed, i);
  return documents;
}

const ID_OF_CHAR = new Map<string, number>([...CORPUS_ALPHABET].map((char, i) => [char, i + 2]));

/**
 * The corpus' ids of `text`, one per character (no BOS or EOS added): id 0 is `<|bos|>`, 1
 * `<|eos|>`, and `CORPUS_ALPHABET[i]` is id i + 2. A character outside the alphabet is an
 * OptionError.
 */
export function corpusIds(text: string): Uint32Array {
  const ids = new Uint32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const id = ID_OF_CHAR.get(text.charAt(i));
    if (id === undefined)
      throw new OptionError('corpusIds', `text[${i}]`, text[i], `a character of CORPUS_ALPHABET ${JSON.stringify(CORPUS_ALPHABET)}`);
    ids[i] = id;
  }
  return ids;
}

/** The text of corpus ids; BOS and EOS read as their token strings. */
export function corpusText(ids: ArrayLike<number>): string {
  let text = '';
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] ?? -1;
    text += id === CORPUS_BOS ? CORPUS_BOS_TOKEN : id === CORPUS_EOS ? CORPUS_EOS_TOKEN : (CORPUS_ALPHABET[id - 2] ?? '\uFFFD');
  }
  return text;
}
