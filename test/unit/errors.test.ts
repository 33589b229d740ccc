// One failure model: every error class Tandem exports is a TandemError with a `code`, and every
// undelivered item is a Failed that isFailure picks out of a mixed stream.
import { describe, expect, it } from 'vitest';
import { DecodeError, PipelineStallError, TandemError } from '../../src/index.ts';
import { FetchError, fetchBytes, isFailure, readTar, SourceError, TarWriter, webDatasetSamples } from '../../src/sources/index.ts';

const streamOf = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });

async function tarOf(members: Array<[string, Uint8Array]>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const writer = new TarWriter((chunk) => void chunks.push(chunk.slice()));
  for (const [name, data] of members) await writer.add(name, data);
  await writer.end();
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
}

describe('one failure model', () => {
  it('decode, fetch, tar and pipeline errors are TandemErrors tagged by code', async () => {
    expect(new DecodeError('corrupt', 'bad data')).toMatchObject({ code: 'corrupt' });
    expect(new DecodeError('corrupt', 'bad data')).toBeInstanceOf(TandemError);

    // Nothing listens on port 9 of 127.0.0.1: the fetch fails as 'network', with no retries.
    const fetched = await fetchBytes('http://127.0.0.1:9/x', { retries: 0, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(fetched).toBeInstanceOf(FetchError);
    expect(fetched).toBeInstanceOf(TandemError);
    expect((fetched as FetchError).code).toBe('network');

    const tar = await tarOf([['a.jpg', new Uint8Array(700)]]);
    const cut = tar.subarray(0, 600);
    const readCut = async () => {
      for await (const _ of readTar(streamOf(cut))) {
        // drain
      }
    };
    const tarError = await readCut().catch((e: unknown) => e);
    expect(tarError).toBeInstanceOf(SourceError);
    expect(tarError).toBeInstanceOf(TandemError);
    expect((tarError as SourceError).code).toBe('truncated');

    expect(new PipelineStallError(10, [])).toMatchObject({ code: 'stalled' });
  });

  it('isFailure picks the failures out of a stream of samples and failures', async () => {
    const tar = await tarOf([
      ['one.jpg', new Uint8Array([1])],
      ['two.jpg', new Uint8Array([2])],
      ['two.jpg', new Uint8Array([3])],
    ]);
    const items = [];
    for await (const item of webDatasetSamples(streamOf(tar))) items.push(item);
    const failures = items.filter(isFailure);
    expect(items.filter((i) => !isFailure(i)).map((i) => i.key)).toEqual(['one']);
    expect(failures.map((f) => [f.key, f.stage, f.error.code])).toEqual([['two', 'sample', 'duplicate']]);
    // Plain objects that happen to have an `error` field but no stage are not failures.
    expect(isFailure({ key: 'x', error: new Error('e') })).toBe(false);
  });
});
