// The fallback decode pool (single-threaded instances in workers, for pages without
// SharedArrayBuffer) must give the same bytes as the pthreads pool and keep every guarantee:
// typed errors per item, dense batches, nothing left running.
import { DecodeError, type DecodePool, ImageBatcher, type EncodedImage } from '../../src/decode/index.ts';
import { encodePng, solidPatches } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import { patternJpeg } from './decode-scenarios.ts';
import { type FixtureLoader, sineWav } from './media-scenarios.ts';

async function decodeBoth<T>(
  pools: DecodePool[],
  bytes: number,
  run: (pool: DecodePool, ptr: number) => Promise<T>,
): Promise<{ outputs: Uint8Array[]; infos: T[] }> {
  const outputs: Uint8Array[] = [];
  const infos: T[] = [];
  for (const pool of pools) {
    const ptr = pool.malloc(bytes);
    try {
      infos.push(await run(pool, ptr));
      outputs.push(new Uint8Array(pool.memory.buffer, ptr, bytes).slice());
    } finally {
      pool.free(ptr);
    }
  }
  return { outputs, infos };
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined, what: string): void {
  check(a && b && a.length === b.length, `${what}: lengths differ`);
  for (let i = 0; i < a.length; i++) check(a[i] === b[i], `${what}: byte ${i} differs (${a[i]} vs ${b[i]})`);
}

/** JPEG (reduced-scale cover resize), PNG RGBA and WAV resampling give identical bytes in both modes. */
export async function fallbackMatchesThreads(threadsPool: DecodePool, workersPool: DecodePool): Promise<void> {
  check(workersPool.stats().mode === 'workers' && threadsPool.stats().mode === 'pthreads', 'pool modes');
  const pools = [threadsPool, workersPool];
  const jpeg = patternJpeg(480, 360).bytes;
  const image = await decodeBoth(pools, 96 * 96 * 3, (pool, ptr) => pool.decodeInto(jpeg, ptr, { width: 96, height: 96 }));
  sameBytes(image.outputs[0], image.outputs[1], 'JPEG 480×360 → 96×96 cover');
  check(
    image.infos[1]?.reducedScale === image.infos[0]?.reducedScale && image.infos[1]?.onPoolThread,
    'JPEG info differs or ran on the caller',
  );

  const { rgb } = solidPatches(40, 30);
  const rgba = new Uint8Array(40 * 30 * 4).map((_, i) => (i % 4 === 3 ? (i * 7) & 255 : (rgb[(i >> 2) * 3 + (i % 4)] ?? 0)));
  const png = encodePng(rgba, 40, 30, { channels: 4 });
  const lossless = await decodeBoth(pools, 40 * 30 * 4, (pool, ptr) =>
    pool.decodeInto(png, ptr, { width: 40, height: 30, channels: 4, fit: 'stretch' }),
  );
  sameBytes(lossless.outputs[0], lossless.outputs[1], 'PNG RGBA');
  sameBytes(lossless.outputs[1], rgba, 'PNG RGBA against its source');

  const wav = sineWav({ sampleRate: 16000, seconds: 0.5 });
  const audio = await decodeBoth(pools, 9000 * 4, (pool, ptr) =>
    pool.decodeAudio(wav, ptr, { sampleRate: 11025, channels: 1, maxFrames: 9000 }),
  );
  sameBytes(audio.outputs[0], audio.outputs[1], 'WAV 16 kHz → 11.025 kHz');
  check(audio.infos[0]?.framesWritten === audio.infos[1]?.framesWritten, 'audio frame counts differ');
}

/** An ImageBatcher over the fallback pool: broken items fail alone and batches stay dense. */
export async function fallbackBatchesStayDense(workersPool: DecodePool): Promise<void> {
  const batcher = new ImageBatcher(workersPool, { batchSize: 4, height: 32, width: 32, buffers: 2 });
  const good = patternJpeg(120, 90).bytes;
  const items: EncodedImage[] = [0, 1, 2, 3, 4, 5].map((i) => ({ bytes: i === 1 || i === 4 ? good.subarray(0, 200) : good, label: i }));
  const aggregator = batcher.aggregator();
  const labels: number[] = [];
  const errors: unknown[] = [];
  try {
    for (const item of items) {
      try {
        for await (const token of batcher.decodeStage(item)) {
          const batch = aggregator.push(token);
          if (batch) {
            labels.push(...batch.labels);
            check(batch.data.length === batch.count * 32 * 32 * 3, 'batch view size');
            batch.release();
          }
        }
      } catch (error) {
        errors.push(error);
      }
    }
    const last = aggregator.flush();
    if (last) {
      labels.push(...last.labels);
      last.release();
    }
  } finally {
    batcher.close();
  }
  check(
    errors.length === 2 && errors.every((e) => e instanceof DecodeError && e.code === 'truncated'),
    `errors: ${errors.map(String).join('; ')}`,
  );
  check(labels.sort().join() === '0,2,3,5', `delivered labels ${labels.join()}`);
}

/** Every image fixture, plus one video and one audio file, as the fixture tiers hold them. */
export const MODE_FIXTURES = {
  images: [
    'photo-landscape.jpg',
    'photo-portrait.jpg',
    'progressive.jpg',
    'progressive-420.jpg',
    'cmyk.jpg',
    'cmyk-ink.jpg',
    'lossy.webp',
    'lossless.webp',
    'alpha.webp',
    'three-frames.gif',
  ],
  video: 'testsrc.h264.mp4',
  audio: 'sine440.mp3',
} as const;

/**
 * The workers mode gives the pthreads mode's bytes on every image fixture (cover and reduced-scale
 * decode both), one video's sampled frames and one audio file's resampled samples.
 */
export async function fixturesMatchAcrossModes(threadsPool: DecodePool, workersPool: DecodePool, load: FixtureLoader): Promise<number> {
  const pools = [threadsPool, workersPool];
  let compared = 0;
  for (const file of MODE_FIXTURES.images) {
    const bytes = await load(file);
    for (const reducedScale of [true, false]) {
      const r = await decodeBoth(pools, 96 * 80 * 3, (pool, ptr) =>
        pool.decodeInto(bytes, ptr, { width: 96, height: 80, fit: 'cover', reducedScale }),
      );
      sameBytes(r.outputs[0], r.outputs[1], `${file} (reducedScale ${reducedScale})`);
      compared++;
    }
  }
  const video = await load(MODE_FIXTURES.video);
  const frames = 3 * 64 * 48 * 3;
  const v = await decodeBoth(pools, frames, (pool, ptr) =>
    pool.decodeVideo(video, ptr, { width: 64, height: 48, fit: 'stretch', frames: { indices: [0, 10, 20] } }),
  );
  sameBytes(v.outputs[0], v.outputs[1], `${MODE_FIXTURES.video}: frames 0, 10, 20`);
  const audio = await load(MODE_FIXTURES.audio);
  const a = await decodeBoth(pools, 16000 * 4, (pool, ptr) =>
    pool.decodeAudio(audio, ptr, { sampleRate: 16000, channels: 1, maxFrames: 16000 }),
  );
  sameBytes(a.outputs[0], a.outputs[1], `${MODE_FIXTURES.audio}: 16 kHz mono`);
  check(a.infos[0]?.framesWritten === a.infos[1]?.framesWritten && (a.infos[0]?.framesWritten ?? 0) > 0, 'audio frame counts');
  return compared + 2;
}

/** The scenarios that compare the two pool modes, by title: every runtime registers them from here. */
export const modeScenarios: Record<string, (threadsPool: DecodePool, workersPool: DecodePool) => Promise<void>> = {
  'gives the same bytes as the pthreads pool (JPEG, PNG, WAV)': fallbackMatchesThreads,
  'fills dense batches when items fail': (_, workersPool) => fallbackBatchesStayDense(workersPool),
};
