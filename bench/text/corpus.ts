// bench/text.ts's inputs: a held-out real text gathered from this machine's own files, split into
// documents at blank lines, and a byte-level BPE tokenizer.json trained (test/shared/bpe-trainer.ts)
// on part of it, cached by what it was trained on.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { trainByteLevelBpe, trainMetaspaceBpe } from '../../test/shared/bpe-trainer.ts';

/** Where the held-out text comes from: every file that exists, in this order, each content once. */
export const REAL_TEXT_GLOBS = ['/usr/share/common-licenses/*', '/usr/share/doc/*/copyright', '/usr/share/doc/*/README*'] as const;

export interface RealText {
  documents: string[];
  /** Files read, as `glob: count`, for the report. */
  sources: string[];
  files: number;
  /** Every file read, in order. */
  paths: string[];
  bytes: number;
  /** Files skipped: not UTF-8, compressed, or a duplicate of one already read. */
  skipped: number;
}

function expand(glob: string): string[] {
  const parts = glob.split('/').filter(Boolean);
  let paths = [''];
  for (const part of parts) {
    const next: string[] = [];
    const pattern = part.includes('*') ? new RegExp(`^${part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`) : undefined;
    for (const base of paths) {
      if (!pattern) {
        next.push(`${base}/${part}`);
        continue;
      }
      let names: string[] = [];
      try {
        names = readdirSync(base || '/').sort();
      } catch {
        continue;
      }
      for (const n of names) if (pattern.test(n)) next.push(`${base}/${n}`);
    }
    paths = next;
  }
  return paths;
}

/**
 * The held-out real text: files of REAL_TEXT_GLOBS (plain UTF-8 only, each content once) read in
 * order until `maxBytes`, split into documents at blank lines (runs of whitespace-only lines);
 * `join` > 1 makes each document that many paragraphs of one file, for longer documents.
 */
export function realText(maxBytes: number, join = 1): RealText {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const seen = new Set<string>();
  const documents: string[] = [];
  const sources: string[] = [];
  const paths: string[] = [];
  let bytes = 0;
  let files = 0;
  let skipped = 0;
  for (const glob of REAL_TEXT_GLOBS) {
    let taken = 0;
    for (const path of expand(glob)) {
      if (bytes >= maxBytes) break;
      let data: Uint8Array;
      try {
        const real = realpathSync(path);
        if (!statSync(real).isFile() || /\.(gz|xz|bz2|zst)$/.test(real)) continue;
        data = readFileSync(real);
      } catch {
        continue;
      }
      const hash = createHash('sha256').update(data).digest('hex');
      let text: string;
      try {
        text = utf8.decode(data);
      } catch {
        skipped++;
        continue;
      }
      if (seen.has(hash)) {
        skipped++;
        continue;
      }
      seen.add(hash);
      const paragraphs = text
        .split(/\n[ \t]*\n/)
        .map((p) => p.trim())
        .filter(Boolean);
      for (let i = 0; i < paragraphs.length; i += join) documents.push(paragraphs.slice(i, i + join).join('\n\n'));
      bytes += data.length;
      paths.push(path);
      files++;
      taken++;
    }
    if (taken) sources.push(`\`${glob}\`: ${taken}`);
  }
  return { documents, sources, files, paths, bytes, skipped };
}

export interface TrainedTokenizer {
  path: string;
  json: object;
  /** `<|endoftext|>` (byte-level) or `</s>` (SentencePiece-style): appended to every document as its EOS. */
  eos: number;
  vocabSize: number;
  merges: number;
  cached: boolean;
}

/** Which tokenizer.json layout a trained tokenizer has: GPT-2's byte-level BPE, or Llama 2's SentencePiece-style BPE. */
export type TokenizerShape = 'byte-level' | 'sentencepiece';

/**
 * A BPE of `shape` with up to `merges` merges trained on `texts`, written to (and read back from)
 * `dir` under a name made of what it was trained on, so a second run reuses it.
 */
export function trainedTokenizer(
  dir: string,
  texts: readonly string[],
  merges: number,
  shape: TokenizerShape = 'byte-level',
): TrainedTokenizer {
  const key = createHash('sha256').update(`${shape}\u0000${merges}\u0000`).update(texts.join('\u0001')).digest('hex').slice(0, 16);
  const path = `${dir}/${shape === 'byte-level' ? 'bpe' : 'sp-bpe'}-${merges}-${key}.json`;
  mkdirSync(dir, { recursive: true });
  const cached = existsSync(path);
  const train = shape === 'byte-level' ? trainByteLevelBpe : trainMetaspaceBpe;
  const json = cached ? (JSON.parse(readFileSync(path, 'utf8')) as object) : train(texts, merges);
  if (!cached) writeFileSync(path, JSON.stringify(json));
  const model = (json as { model: { vocab: Record<string, number>; merges: unknown[] } }).model;
  const eosToken = shape === 'byte-level' ? '<|endoftext|>' : '</s>';
  const eos = model.vocab[eosToken];
  if (eos === undefined) throw new Error(`${path}: no ${eosToken} in the vocabulary`);
  return { path, json, eos, vocabSize: Object.keys(model.vocab).length, merges: model.merges.length, cached };
}
