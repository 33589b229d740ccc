// Shards through a byte cache: a hit streams from the cache; a miss streams from the network and
// writes each chunk to the cache as the reader takes it (no tee, so no unbounded buffering when
// the reader is slow). Only a shard read to its end is committed; a cut or cancelled one is not.
import type { ByteCache } from './cache.ts';
import type { ShardOpener } from './shard-reader.ts';

export function cachingOpener(open: ShardOpener, cache: ByteCache): ShardOpener {
  return async (shard, signal) => {
    const hit = await cache.getStream(shard);
    if (hit) return hit;
    const source = (await open(shard, signal)).getReader();
    const entry = await cache.putStream(shard);
    let writing = true;
    const abort = async () => {
      if (!writing) return;
      writing = false;
      await entry.abort().catch(() => undefined);
    };
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          let step: ReadableStreamReadResult<Uint8Array>;
          try {
            step = await source.read();
          } catch (error) {
            await abort();
            return controller.error(error);
          }
          if (step.done) {
            // A failed commit (disk full) costs the cache entry, not the epoch's samples.
            if (writing) await entry.commit().catch(() => undefined);
            writing = false;
            return controller.close();
          }
          if (writing) await entry.write(step.value).catch(abort);
          controller.enqueue(step.value);
        },
        async cancel(reason) {
          await abort();
          await source.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  };
}
