// WebDataset samples out of a tar stream: consecutive members sharing a key ("000123.jpg",
// "000123.cls") form one sample. Only the current sample's members are held in memory.
import type { Failed } from '../errors/index.ts';
import { readTarTracked, SourceError, type TarMember, type TarReadOptions } from './tar.ts';

export interface WebDatasetSample {
  key: string;
  /** Member bytes by extension: "jpg", "cls", "seg.png" (everything after the first dot of the base name). */
  files: Record<string, Uint8Array>;
}

/** A sample that could not be read; the shard goes on with the next one. */
export interface WebDatasetFailure extends Failed<'sample', SourceError> {}

export type WebDatasetItem = WebDatasetSample | WebDatasetFailure;

/**
 * Splits a member name into WebDataset key and extension. As in the Python webdataset library the
 * key keeps the directory and ends at the first dot of the base name, so "a/x.seg.png" → "a/x".
 */
export function splitKey(name: string): { key: string; ext: string } {
  const slash = name.lastIndexOf('/');
  const dot = name.indexOf('.', slash + 1);
  return dot < 0 ? { key: name, ext: '' } : { key: name.slice(0, dot), ext: name.slice(dot + 1) };
}

// No prototype: extensions come from the shard, and one named "__proto__" or "constructor" must be
// an ordinary key, not a way to reach Object.prototype.
const emptyFiles = () => Object.create(null) as Record<string, Uint8Array>;

export interface WebDatasetOptions extends TarReadOptions {
  /** Names used in error messages, e.g. the shard's URL. */
  shardName?: string;
}

/**
 * Yields one item per sample key: `{ key, files }`, or `{ key, stage: 'sample', error }` when any member of that
 * sample was refused (unsafe name, over maxMemberBytes, a link, a repeated extension) — the whole
 * sample is dropped then, since a sample missing its image or label is not usable. A truncated or
 * corrupt shard throws a SourceError after the complete samples before it have been yielded; when
 * the break lands inside the first member of a sample, the sample before it is complete and yielded.
 */
export async function* webDatasetSamples(
  stream: ReadableStream<Uint8Array>,
  options: WebDatasetOptions = {},
): AsyncGenerator<WebDatasetItem> {
  const where = options.shardName ? ` in ${options.shardName}` : '';
  let key: string | undefined;
  let files = emptyFiles();
  let error: SourceError | undefined;
  const flush = (): WebDatasetItem | undefined => {
    if (key === undefined) return undefined;
    const item: WebDatasetItem = error ? { key, stage: 'sample', error } : { key, files };
    key = undefined;
    files = emptyFiles();
    error = undefined;
    return item;
  };

  const reading: { member?: string } = {};
  const members = readTarTracked(stream, options, reading);
  try {
    for (;;) {
      let step: IteratorResult<TarMember>;
      try {
        step = await members.next();
      } catch (cause) {
        // Broken inside a member of the next sample: the one before is whole, and is delivered.
        if (reading.member !== undefined && splitKey(reading.member).key !== key) {
          const done = flush();
          if (done) yield done;
        }
        // Name the shard: the caller may be reading hundreds of them concurrently.
        if (cause instanceof SourceError && where) throw new SourceError(cause.code, cause.key, `${cause.message}${where}`);
        throw cause;
      }
      if (step.done) break;
      const member = step.value;
      if (member.type === 'directory' && member.error === undefined) continue;
      const next = splitKey(member.name);
      if (next.key !== key) {
        const done = flush();
        if (done) yield done;
        key = next.key;
      }
      if (error) continue; // the sample is already lost; its remaining members are just passed over
      if (member.error) {
        error = new SourceError(member.error.code, next.key, `${member.error.message}${where}`);
      } else if (Object.hasOwn(files, next.ext)) {
        error = new SourceError('duplicate', next.key, `sample "${next.key}" has two ".${next.ext}" members${where}`);
      } else if (member.data) {
        files[next.ext] = member.data;
      }
    }
  } finally {
    await members.return(undefined); // cancels the stream when the caller stops early
  }
  const last = flush();
  if (last) yield last;
}
