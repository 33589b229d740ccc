// Where a text loader stands, as plain JSON a checkpoint can hold: the document order's state at
// the first document still (partly) waiting in the packer, and the packer's waiting documents
// relative to it. A resumed loader reads from that document again and skips what was packed, so it
// makes exactly the rows a run that never stopped would have made.
import { OptionError } from '../errors/index.ts';
import type { LoaderState } from '../loader/internal.ts';
import type { PackerSnapshot, PackMode } from './pack.ts';

export interface TextLoaderState {
  kind: 'tandem.text';
  version: 1;
  /** The document order (a list's sampler, a stream's count, a shard stream's own state) at `packer`'s document 0. */
  docs: LoaderState;
  /** Document numbers relative to `docs`. */
  packer: PackerSnapshot;
  /** Pieces a regroup handed this rank ([key, first token]): read back by key before `docs`. */
  carry?: Array<[key: string, start: number]>;
  /** Shard sources: the stream at the packer's `next` (what regroupTextStates deals out). */
  after?: LoaderState;
  /**
   * What the rows depend on: a state is refused by a loader that packs differently, or tokenizes
   * with another tokenizer.json (`tokenizer`: a hash of it, its URL, 'inline' for the caller's
   * encoder, null for token shards; absent in states written before it was recorded).
   */
  packing: { pack: PackMode; seqLen: number; fitWindow: number; bos: number | null; eos: number | null; tokenizer?: string | null };
}

export function checkState(state: TextLoaderState, packing: TextLoaderState['packing']): void {
  if (state.version !== 1 || typeof state.docs !== 'object' || typeof state.packer !== 'object' || state.packer === null)
    throw new OptionError('textLoader options', 'resumeFrom', state, "a state from textLoader's state() of this version");
  const differs = (Object.keys(packing) as Array<keyof typeof packing>).filter(
    (k) => state.packing?.[k] !== packing[k] && !(k === 'tokenizer' && state.packing?.tokenizer === undefined),
  );
  if (differs.length > 0)
    throw new OptionError(
      'textLoader options',
      'resumeFrom',
      state,
      `the state of a loader that packs the same way (differs in ${differs.map((k) => `${k}: ${state.packing?.[k]} → ${packing[k]}`).join(', ')})`,
    );
}

/** What names a tokenizer in a state: a hash of its tokenizer.json, its URL, or 'inline'; null without one. */
export function tokenizerIdentity(spec: unknown): string | null {
  if (spec === undefined || spec === null) return null;
  if (typeof spec === 'object' && 'json' in spec) {
    const json = (spec as { json: unknown }).json;
    const text = typeof json === 'string' ? json : JSON.stringify(json);
    // FNV-1a over the UTF-16 code units: two different files differ here but for a 2^-32 chance.
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return `json:${(h >>> 0).toString(16)}:${text.length}`;
  }
  if (typeof spec === 'object' && 'url' in spec) return `url:${String((spec as { url: unknown }).url)}`;
  return 'inline';
}
