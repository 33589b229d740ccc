import { DatasetError } from './errors.ts';
import { exists, listDir, makeDir, writeFileAtomic } from '../runtime/index.ts';
import { encodeJpeg, renderSample } from '../synthetic/index.ts';

export interface LabelledFile {
  path: string;
  label: number;
  className: string;
}

const IMAGE_EXTENSIONS = /\.(jpe?g|png|webp|bmp|gif)$/i;

/**
 * Lists an ImageNet-style folder (one subfolder per class, sorted names → labels 0..K-1): images,
 * or the files `accept` matches (videos, say).
 */
export async function listImageFolder(
  root: string,
  accept: RegExp = IMAGE_EXTENSIONS,
): Promise<{ files: LabelledFile[]; classes: string[] }> {
  const classes = (await listDir(root))
    .filter((e) => e.isDirectory)
    .map((e) => e.name)
    .sort();
  if (classes.length === 0) throw new DatasetError('no-classes', `${root}: no class subfolders (expected root/<class>/<file>)`);
  const files: LabelledFile[] = [];
  for (const [label, className] of classes.entries()) {
    const names = (await listDir(`${root}/${className}`))
      .filter((e) => !e.isDirectory && accept.test(e.name))
      .map((e) => e.name)
      .sort();
    for (const name of names) files.push({ path: `${root}/${className}/${name}`, label, className });
  }
  return { files, classes };
}

export interface SyntheticFolderOptions {
  seed?: number;
  count: number;
  classes?: number;
  width?: number;
  height?: number;
  quality?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Writes the project's synthetic labelled dataset as JPEG files in ImageNet layout, once: a folder
 * that is already complete (marked by `.complete`) is reused as it is.
 */
export async function ensureSyntheticFolder(root: string, options: SyntheticFolderOptions): Promise<{ created: boolean }> {
  if (await exists(`${root}/.complete`)) return { created: false };
  const { seed = 0, count, classes = 4, width = 500, height = 375, quality = 90 } = options;
  await makeDir(root);
  const made = new Set<string>();
  for (let i = 0; i < count; i++) {
    const sample = renderSample(seed, i, { width, height, classes });
    const dir = `${root}/${String(sample.label).padStart(2, '0')}-${sample.className}`;
    if (!made.has(dir)) {
      await makeDir(dir);
      made.add(dir);
    }
    await writeFileAtomic(`${dir}/${String(i).padStart(6, '0')}.jpg`, encodeJpeg(sample.rgb, width, height, { quality }));
    options.onProgress?.(i + 1, count);
  }
  await writeFileAtomic(`${root}/.complete`, new TextEncoder().encode(`${count}\n`));
  return { created: true };
}
