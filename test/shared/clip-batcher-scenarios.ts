// Runtime-neutral checks of VideoClipBatcher on the wasm pool: clips land in their slots of a
// [batch, frames, H, W, C] buffer with their frame times, a broken video fails its own clip and its
// slot is refilled from the end, and every buffer comes back. Fixtures from scripts/make-fixtures.sh.
import { DecodeError, type DecodePool, VideoClipBatcher, type VideoClipBatch } from '../../src/decode/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';

const RED = [255, 0, 0],
  GREEN = [0, 255, 0],
  BLUE = [0, 0, 255];

/** Mean colour of frame f of slot s. */
function meanColour(batch: VideoClipBatch, s: number, f: number): number[] {
  const [, frames, h, w, c] = batch.shape;
  const px = h * w;
  const at = (s * frames + f) * px * c;
  const sum = [0, 0, 0];
  for (let i = 0; i < px; i++) for (let k = 0; k < 3; k++) sum[k]! += batch.data[at + i * c + k]!;
  return sum.map((v) => v / px);
}

function near(got: number[], want: number[], what: string): void {
  const off = Math.max(...got.map((v, k) => Math.abs(v - want[k]!)));
  check(off < 24, `${what}: mean colour ${got.map((v) => v.toFixed(0)).join(',')}, expected ${want.join(',')}`);
}

export const clipBatcherScenarios: Record<string, (pool: DecodePool, load: FixtureLoader) => Promise<void>> = {
  async 'clips land in their slots in input order, with frame times, and a broken video fails only its own clip'(pool, load) {
    const rgb = await load('rgb.h264.mp4'); // red 0–1 s, green 1–2 s, blue 2–3 s, at 10 fps
    const batcher = new VideoClipBatcher(pool, { batchSize: 3, frames: 3, height: 16, width: 16, buffers: 2 });
    try {
      const clips = [
        { bytes: rgb, times: [0, 1.0, 2.0], label: 0, key: 'forward' },
        { bytes: new Uint8Array(4096).fill(7), times: [0, 0.1, 0.2], label: 9, key: 'broken' },
        { bytes: rgb, times: [2.3, 1.3, 0.3], label: 1, key: 'backward' },
        { bytes: rgb, times: [1.55, 1.55, 1.55], label: 2, key: 'still' },
      ];
      const pipeline = new PipelineBuilder()
        .addSource(clips)
        .batch(batcher, { name: 'decode', concurrency: 2, ordered: 'input' })
        .addSink(2)
        .build({ failureBudget: { maxFailures: 1 } });
      const seen: string[][] = [];
      for await (const batch of pipeline) {
        seen.push([...batch.keys]);
        check(batch.shape.join() === `${batch.count},3,16,16,3`, `shape ${batch.shape.join()}`);
        for (let s = 0; s < batch.count; s++) {
          const key = batch.keys[s];
          const want = key === 'forward' ? [RED, GREEN, BLUE] : key === 'backward' ? [BLUE, GREEN, RED] : [GREEN, GREEN, GREEN];
          for (let f = 0; f < 3; f++) near(meanColour(batch, s, f), want[f]!, `${key} frame ${f}`);
          const times = Array.from(batch.frameTimes.subarray(s * 3, s * 3 + 3));
          const wantTimes = key === 'forward' ? [0, 1, 2] : key === 'backward' ? [2.3, 1.3, 0.3] : [1.5, 1.5, 1.5];
          check(
            times.every((t, i) => Math.abs(t - wantTimes[i]!) < 0.002),
            `${key}: frame times ${times.join()} (expected ${wantTimes.join()})`,
          );
          check(batch.labels[s] === { forward: 0, backward: 1, still: 2 }[key!], `${key}: label ${batch.labels[s]}`);
        }
        batch.release();
      }
      // The broken clip's slot (1) was refilled from the end of its batch: 'backward' moved into it.
      check(JSON.stringify(seen) === JSON.stringify([['forward', 'backward'], ['still']]), `batches ${JSON.stringify(seen)}`);
      const failures = pipeline.failures();
      check(failures.length === 1 && failures[0]!.key === 'broken', `failures ${JSON.stringify(failures.map((f) => f.key))}`);
      check(failures[0]!.error instanceof DecodeError, `the failure is typed: ${String(failures[0]!.error)}`);
      const stats = batcher.stats();
      check(stats.free === stats.buffers, `every buffer back: ${JSON.stringify(stats)}`);
    } finally {
      batcher.close();
    }
  },

  async 'a clip asking for more frames than the batcher holds is refused before decoding'(pool, load) {
    const batcher = new VideoClipBatcher(pool, { batchSize: 1, frames: 2, height: 8, width: 8 });
    try {
      const pipeline = new PipelineBuilder()
        .addSource([{ bytes: await load('rgb.h264.mp4'), times: [0, 1, 2], key: 'three' }])
        .batch(batcher, { concurrency: 1 })
        .addSink(1)
        .build({ failureBudget: { maxFailures: 1 } });
      let batches = 0;
      for await (const batch of pipeline) {
        batches++;
        batch.release();
      }
      const failures = pipeline.failures();
      check(
        batches === 0 && failures.length === 1 && /3 frame times, the batcher 2/.test(String(failures[0]!.error)),
        `failures ${failures.map((f) => String(f.error))}`,
      );
    } finally {
      batcher.close();
    }
  },
};
