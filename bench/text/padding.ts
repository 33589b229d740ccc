// bench/text.ts's padding figures: the share of positions each packing mode leaves to padding, by
// textLoader() itself (its packing() counts), on one corpus for every mode. Ids come from an inline
// encoder over ids computed once, so the figure is the packer's alone and costs no tokenising.
// The 'pad' figure is also computed from its definition (one document per row, a longer one split
// into rows whose next piece starts on the token the last one ended with) and must agree.
import { textLoader, type PackMode } from '../../src/text/index.ts';

export interface PaddingFigure {
  corpus: string;
  mode: PackMode;
  seqLen: number;
  share: number;
  rows: number;
  documents: number;
}

export const MODES: readonly PackMode[] = ['concat', 'best-fit', 'pad'];
export const FIT_WINDOW = 64;

/** 'pad' by its definition: rows × seqLen less the positions documents fill (ids already with BOS/EOS). */
export function padShareByDefinition(lengths: readonly number[], seqLen: number): number {
  let rows = 0;
  let filled = 0;
  for (const m of lengths) {
    if (m < 2) continue; // a lone token is never an input with a label
    let left = m;
    for (;;) {
      const n = Math.min(left, seqLen + 1);
      rows++;
      filled += Math.min(n, seqLen);
      if (left <= seqLen + 1) break;
      left -= seqLen;
    }
  }
  return rows === 0 ? 0 : (rows * seqLen - filled) / (rows * seqLen);
}

/**
 * Every mode at every `seqLens` over `texts`, whose ids (without BOS/EOS) `idsOf` gives;
 * `eos` (and `bos`) are added by the loader, as in training.
 */
export async function paddingShares(
  corpus: string,
  texts: readonly string[],
  idsOf: (text: string) => ArrayLike<number>,
  specials: { bos?: number; eos: number },
  seqLens: readonly number[],
): Promise<{ figures: PaddingFigure[]; problems: string[] }> {
  const figures: PaddingFigure[] = [];
  const problems: string[] = [];
  const lengths = texts.map((t) => idsOf(t).length + 1 + (specials.bos === undefined ? 0 : 1));
  for (const seqLen of seqLens)
    for (const mode of MODES) {
      const data = textLoader(
        { texts },
        { tokenizer: { encode: idsOf }, seqLen, batchSize: 16, pack: mode, fitWindow: FIT_WINDOW, ...specials },
      );
      for await (const b of data) b.release();
      const p = data.packing();
      await data.close();
      figures.push({ corpus, mode, seqLen, share: p.paddingShare, rows: p.rows, documents: p.documents });
      if (p.documents !== texts.length) problems.push(`${corpus} ${mode} ${seqLen}: ${p.documents} of ${texts.length} documents packed`);
      if (mode === 'pad') {
        const want = padShareByDefinition(lengths, seqLen);
        if (Math.abs(want - p.paddingShare) > 1e-9)
          problems.push(`${corpus} pad ${seqLen}: textLoader's share ${p.paddingShare}, the definition's ${want}`);
      }
    }
  return { figures, problems };
}
