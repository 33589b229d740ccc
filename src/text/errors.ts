// Why one document could not become tokens: per document, so the loader reports it under its key
// and goes on, within the failure budget.
import { CodedError } from '../errors/index.ts';

/**
 * `bad-utf8`: the bytes are not valid UTF-8; `too-large`: the document's bytes or tokens pass
 * `maxDocumentBytes` / `maxDocumentTokens` (checked before decoding); `bad-json`: a `.json`
 * document that does not parse, or has no string at its text field; `no-text`: a sample with no
 * member the loader reads as text; `tokenizer-failed`: the tokenizer threw; `token-out-of-range`:
 * an id at or past the vocabulary size.
 */
export type TextErrorCode = 'bad-utf8' | 'too-large' | 'bad-json' | 'no-text' | 'tokenizer-failed' | 'token-out-of-range';

export class TextError extends CodedError<TextErrorCode> {
  override readonly name = 'TextError';
}
