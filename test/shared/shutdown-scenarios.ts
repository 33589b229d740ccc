// Stopping a pipeline while its items hold resources: every item is either delivered or disposed,
// and stop() returns even when tasks were waiting for resources that only the consumer can free.
import { DecodePool, ImageBatcher, type EncodedImage, type ImageBatch } from '../../src/decode/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { check, within } from './assert.ts';
import { patternJpeg } from './decode-scenarios.ts';

/** Items made by stages, stopped at a random point: made = delivered + disposed, none twice. */
export async function stoppedItemsAreDisposed(seed = 7): Promise<void> {
  for (let run = 0; run < 6; run++) {
    let made = 0;
    let disposed = 0;
    let delivered = 0;
    const make = (i: number): Disposable & { i: number } => {
      made++;
      let done = false;
      return {
        i,
        [Symbol.dispose]() {
          check(!done, `item ${i} disposed twice`);
          done = true;
          disposed++;
        },
      };
    };
    const p = new PipelineBuilder<number>()
      .addSource(Array.from({ length: 200 }, (_, i) => i))
      .pipe(
        async (i: number) => {
          await new Promise((resolve) => setTimeout(resolve, (i * seed) % 3));
          return make(i);
        },
        { concurrency: 4, ordered: run % 2 === 0 ? 'input' : 'completion' },
      )
      .pipe(
        async function* (item: Disposable & { i: number }): AsyncGenerator<Disposable & { i: number }> {
          item[Symbol.dispose]();
          yield make(item.i + 1000);
          yield make(item.i + 2000);
        },
        { concurrency: 3 },
      )
      .addSink(2)
      .build();
    const stopAfter = 5 + ((run * 37 + seed) % 60);
    for await (const item of p) {
      delivered++;
      item[Symbol.dispose]();
      if (delivered === stopAfter) break; // leaving the loop stops the pipeline
    }
    await within(p.stop(), 5000, 'stop()');
    check(made === disposed, `run ${run}: ${made} items made, ${disposed} disposed (${delivered} delivered)`);
  }
}

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * A consumer holds every batch buffer and stops the pipeline: decode tasks waiting for a buffer
 * give up on the stop signal, and stop() returns.
 */
export async function stopWhileBatchBuffersAreHeld(): Promise<void> {
  const pool = await DecodePool.create({ threads: 2 });
  const batcher = new ImageBatcher(pool, { batchSize: 2, height: 16, width: 16, buffers: 2 });
  const bytes = patternJpeg(64, 48).bytes;
  const held: ImageBatch[] = [];
  try {
    const p = new PipelineBuilder()
      .addSource(Array.from({ length: 40 }, (_, i): EncodedImage => ({ bytes, label: i })))
      .pipe(batcher.decodeStage, { name: 'decode', concurrency: 4 })
      .aggregate(() => batcher.aggregator(), { name: 'batch' })
      .addSink(1)
      .build();
    const it = p[Symbol.asyncIterator]();
    for (let i = 0; i < 2; i++) {
      const next = await within(it.next(), 20000, 'a batch');
      check(next.done !== true, 'the pipeline ended early');
      held.push(next.value);
    }
    // The point of the scenario: decode tasks are parked waiting for a buffer when stop() comes.
    await within(
      waitUntil(() => batcher.stats().waiting > 0),
      10000,
      'a decode task waiting for a batch buffer',
    );
    await within(p.stop(), 5000, 'stop() with every buffer held by the consumer');
    for (const batch of held) check(batch.count === 2 && batch.data.length === 2 * 16 * 16 * 3, 'a held batch stays valid after stop');
  } finally {
    for (const batch of held) batch.release();
    batcher.close();
    await pool.close();
  }
}
