// The photo corpora of bench/corpus/make-photo-corpus.py, described one way in every report that
// measures one (bench/loader.ts, bench/decode.ts with --corpus): where each shape's default folder
// is, what its corpus.json says (recipe, mix counts, size histogram), and how its recipe cuts it.
import { existsSync, readFileSync } from 'node:fs';

/** The corpus shapes make-photo-corpus.py makes (--shape), each with a recipe of its own. */
export const CORPUS_SHAPES = ['photos', 'imagenet', 'hard'] as const;
export type CorpusShape = (typeof CORPUS_SHAPES)[number];

export const isCorpusShape = (s: string): s is CorpusShape => (CORPUS_SHAPES as readonly string[]).includes(s);

/** The folder a shape's default corpus (2000 images, seed 0) is made in, under the cache directory. */
export const corpusFolder = (cache: string, shape: CorpusShape): string =>
  `${cache}/datasets/photo-corpus${shape === 'photos' ? '' : `-${shape}`}-s0-n2000`;

/** OUT/corpus.json as make-photo-corpus.py writes it (the fields the reports quote). */
export interface CorpusManifest {
  count: number;
  seed: number;
  recipe: string;
  generated_seconds: number;
  total_bytes: number;
  pixels_mean: number;
  encodings: Record<string, number>;
  size_buckets: Record<string, number>;
  aspects: Record<string, number>;
  long_side_histogram: Record<string, number>;
  sources: { name: string; width: number; height: number }[];
}

/** The folder's corpus.json, or undefined for a folder make-photo-corpus.py did not make. */
export function readCorpusManifest(dir: string): CorpusManifest | undefined {
  const path = `${dir}/corpus.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as CorpusManifest) : undefined;
}

const counts = (r: Record<string, number>, sep = ' ') =>
  Object.entries(r)
    .map(([k, v]) => `${k}${sep}${v}`)
    .join(', ');

/** The manifest's figures, one sentence a line: size, recipe, encodings, long sides, aspects, classes. */
export function corpusMix(m: CorpusManifest): string[] {
  return [
    `${m.count} JPEGs (${(m.total_bytes / 2 ** 20).toFixed(1)} MiB, mean ${(m.pixels_mean / 1e6).toFixed(2)} Mpx, ${(m.total_bytes / m.count / 1024).toFixed(1)} KB), seed ${m.seed}, recipe \`${m.recipe}\`, generated in ${m.generated_seconds} s.`,
    `Encodings: ${counts(m.encodings)}.`,
    `Long side (px): ${counts(m.long_side_histogram, ': ')}.`,
    `Aspect ratios: ${counts(m.aspects)}.`,
    `Classes (source photographs, ${m.sources.length}): ${m.sources.map((s) => `${s.name} ${s.width}×${s.height}`).join(', ')}.`,
  ];
}

const ASPECTS = '4:3, 3:4, 3:2, 2:3, 1:1, 16:9';
const USUAL_MIX =
  'an encoding mixed like real collections: RGB 4:2:0 quality 75–95 (85%), 4:4:4 (5%), progressive (4%), grayscale (2%), CMYK (2%), an EXIF Orientation tag 6/8/3 (2%)';

/** How the manifest's recipe cuts each image (a paragraph; the script's docstring has the details). */
export function corpusRecipe(m: CorpusManifest): string {
  const made = `Made by \`bench/corpus/make-photo-corpus.py\` from the ${m.sources.length} photographs of Debian bookworm's
mate-backgrounds 1.26.0-1 (\`scripts/setup-bench.sh\` fetches it with \`apt-get download\`, checks
its SHA-256 and unpacks it): per image`;
  if (m.recipe.startsWith('photo-corpus-hard/'))
    return `${made} a seeded aspect ratio (${ASPECTS}) and a long side uniform over the
lengths that keep it within 800×600 (600×800 portrait) and at least 300×200; a high-detail crop:
near the photograph's own resolution (at most 1.3× downscaled, LANCZOS), the most detailed of 4
places drawn (mean of PIL's FIND_EDGES); and a mix made to be hard for a decoder: quality 90–95,
RGB 4:2:0 (66%), 4:4:4 (25%), progressive (3%), grayscale (2%), CMYK (2%), an EXIF Orientation
tag 6/8/3 (2%).`;
  const size = m.recipe.startsWith('photo-corpus-imagenet/')
    ? `a size from ImageNet's mix (500×375 40%, 500×333 20%, 375×500 10%, 333×500 5%, 500×500 5%, and 20% of any of the aspects ${ASPECTS} with a long side of 250–500 px)`
    : `a seeded aspect ratio (${ASPECTS}), a long side of 300–640 px (92%), 800–1600 (5%) or 2500–3000 (3%, only from photographs that large)`;
  return `${made} ${size},
a random crop at a random zoom resized with LANCZOS, and ${USUAL_MIX}.`;
}
