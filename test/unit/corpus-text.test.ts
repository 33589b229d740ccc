import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/errors/index.ts';
import {
  CORPUS_ALPHABET,
  CORPUS_MAX_CHARS,
  CORPUS_MIN_CHARS,
  CORPUS_VOCAB_SIZE,
  corpusDocument,
  corpusDocuments,
  corpusIds,
  corpusText,
} from '../../src/synthetic/index.ts';

describe('generated text corpus', () => {
  const documents = corpusDocuments(7, 400);

  it('uses exactly CORPUS_ALPHABET, within the stated lengths', () => {
    const used = new Set<string>();
    for (const document of documents) {
      expect(document.length).toBeGreaterThanOrEqual(CORPUS_MIN_CHARS);
      expect(document.length).toBeLessThanOrEqual(CORPUS_MAX_CHARS);
      for (const char of document) used.add(char);
    }
    expect([...used].sort().join('')).toBe([...CORPUS_ALPHABET].sort().join(''));
    expect(CORPUS_VOCAB_SIZE).toBe(CORPUS_ALPHABET.length + 2);
  });

  it('is seeded and random access', () => {
    expect(corpusDocuments(7, 400)).toEqual(documents);
    expect(corpusDocument(7, 123)).toBe(documents[123]);
    expect(corpusDocuments(8, 20)).not.toEqual(documents.slice(0, 20));
  });

  it('keeps number agreement: plural determiners take plural nouns, singular subjects a verb in -s', () => {
    const sentence =
      /^(the|one|this|two|three|some|these) (?:(?:big|small|red|old) )?([a-z]+) ([a-z]+) (the|one|this|two|three|some|these) (?:(?:big|small|red|old) )?([a-z]+)$/;
    const plural = new Set(['two', 'three', 'some', 'these']);
    for (const document of documents.slice(0, 50)) {
      for (const part of document.split('.').slice(0, -1)) {
        const match = sentence.exec(part.trim());
        expect(match, part).not.toBeNull();
        const [, subjectDeterminer, subject, verb, objectDeterminer, object] = match!;
        expect(subject!.endsWith('s')).toBe(plural.has(subjectDeterminer!));
        expect(verb!.endsWith('s')).toBe(!plural.has(subjectDeterminer!));
        expect(object!.endsWith('s')).toBe(plural.has(objectDeterminer!));
      }
    }
  });

  it('maps characters to ids from 2 in alphabet order, and back', () => {
    expect([...corpusIds(' .a')]).toEqual([2, 3, 4]);
    const ids = corpusIds(documents[0]!);
    expect(ids.length).toBe(documents[0]!.length);
    for (let i = 0; i < ids.length; i++) expect(CORPUS_ALPHABET[ids[i]! - 2]).toBe(documents[0]![i]);
    expect(corpusText([0, ...ids, 1])).toBe(`<|bos|>${documents[0]}<|eos|>`);
    expect(() => corpusIds('the Cat')).toThrow(OptionError);
  });
});
