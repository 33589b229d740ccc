// Files on disk as the training session's byte sources (Node and Deno), and the CLI's default
// dataset: the synthetic one written once as JPEG files under the cache directory.
import { cacheDir, readFile } from '../runtime/index.ts';
import { ensureSyntheticFolder, fetchBytes, listImageFolder, type LabelledFile, type ShardManifest } from '../sources/index.ts';
import { shardData, splitHeldOut, type LabelledSource, type LabelledData } from '../train/index.ts';

/** A shards.json larger than this is refused (16 MiB: millions of shard entries). */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export function fileSources(files: readonly LabelledFile[]): LabelledSource[] {
  return files.map((f) => ({ key: f.path, label: f.label, read: () => readFile(f.path) }));
}

/** The folder to read: `data` as given, or the generated dataset of `images` JPEGs (made once). */
export async function resolveDataFolder(data: string | undefined, images: number, log: (line: string) => void): Promise<string> {
  if (data) return data;
  const root = `${cacheDir()}/datasets/synthetic-s0-n${images}`;
  const t0 = performance.now();
  const { created } = await ensureSyntheticFolder(root, {
    count: images,
    onProgress: (d, t) => d % 128 === 0 && log(`  generated ${d}/${t} JPEGs`),
  });
  log(
    created
      ? `generated ${images} labelled JPEGs (500×375) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${root}`
      : `dataset: ${root} (reused)`,
  );
  return root;
}

/** An ImageNet-style folder as training data, every 5th image held out. */
export async function folderData(root: string): Promise<LabelledData & { root: string }> {
  const { files, classes } = await listImageFolder(root);
  return { ...splitHeldOut(fileSources(files), classes, 5), root };
}

/**
 * Tar shards written by `tandem shards`: `where` is their directory or URL (holding shards.json).
 * Training streams them (split across $RANK/$WORLD_SIZE); nothing is held out.
 */
export async function shardsData(where: string): Promise<LabelledData & { root: string }> {
  const root = where.replace(/\/+$/, '').replace(/\/shards\.json$/, '');
  const url = /^https?:\/\//.test(root);
  const text = new TextDecoder().decode(
    url ? await fetchBytes(`${root}/shards.json`, { maxBytes: MAX_MANIFEST_BYTES }) : await readFile(`${root}/shards.json`),
  );
  return { ...shardData(JSON.parse(text) as ShardManifest, root), root };
}
