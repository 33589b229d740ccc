// Runtime-neutral test bodies for audio and video decoding on the wasm pool; each throws on failure.
// WAV fixtures are written here; compressed audio and video come from scripts/make-fixtures.sh
// (Debian's ffmpeg CLI) and are loaded through a loader each runtime supplies.
import { audioClips, DecodeError, type DecodeErrorCode, type DecodePool } from '../../src/decode/index.ts';
import { check, rejectsWith } from './assert.ts';

/** Reads `test/fixtures/generated/<name>`. */
export type FixtureLoader = (name: string) => Promise<Uint8Array>;

export const SINE_HZ = 440;
export const SINE_AMPLITUDE = 0.5;

/** A 16-bit PCM WAV of a sine (every channel equal). */
export function sineWav(options: { sampleRate: number; seconds: number; channels?: number; hz?: number; amplitude?: number }): Uint8Array {
  const { sampleRate, seconds } = options;
  const channels = options.channels ?? 1;
  const hz = options.hz ?? SINE_HZ;
  const amplitude = options.amplitude ?? SINE_AMPLITUDE;
  const frames = Math.round(sampleRate * seconds);
  const dataBytes = frames * channels * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const v = new DataView(bytes.buffer);
  const ascii = (at: number, s: string): void => {
    for (let i = 0; i < s.length; i++) v.setUint8(at + i, s.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels * 2, true);
  v.setUint16(32, channels * 2, true);
  v.setUint16(34, 16, true);
  ascii(36, 'data');
  v.setUint32(40, dataBytes, true);
  for (let i = 0; i < frames; i++) {
    const s = Math.round(Math.sin((2 * Math.PI * hz * i) / sampleRate) * amplitude * 32767);
    for (let c = 0; c < channels; c++) v.setInt16(44 + (i * channels + c) * 2, s, true);
  }
  return bytes;
}

interface Level {
  rms: number;
  hz: number;
}

/** RMS and frequency (from upward zero crossings) of one channel, skipping `edge` frames each side. */
export function measure(samples: Float32Array, channels: number, channel: number, frames: number, sampleRate: number, edge = 0): Level {
  let sum = 0;
  let n = 0;
  let first = -1;
  let last = -1;
  let crossings = 0;
  let prev = 0;
  for (let i = edge; i < frames - edge; i++) {
    const s = samples[i * channels + channel] ?? 0;
    sum += s * s;
    n++;
    if (i > edge && prev < 0 && s >= 0) {
      const at = i - 1 + -prev / (s - prev);
      if (first < 0) first = at;
      else crossings++;
      last = at;
    }
    prev = s;
  }
  return { rms: Math.sqrt(sum / Math.max(1, n)), hz: crossings > 0 ? (crossings * sampleRate) / (last - first) : 0 };
}

const SINE_RMS = SINE_AMPLITUDE / Math.SQRT2;

function checkSine(level: Level, what: string, rmsTolerance: number, hzTolerance: number): void {
  check(
    Math.abs(level.rms - SINE_RMS) <= rmsTolerance,
    `${what}: RMS ${level.rms.toFixed(4)}, expected ${SINE_RMS.toFixed(4)} ± ${rmsTolerance}`,
  );
  check(Math.abs(level.hz - SINE_HZ) <= hzTolerance, `${what}: frequency ${level.hz.toFixed(2)} Hz, expected ${SINE_HZ} ± ${hzTolerance}`);
}

async function withFloats<T>(pool: DecodePool, count: number, body: (ptr: number, view: () => Float32Array) => Promise<T>): Promise<T> {
  const ptr = pool.malloc(count * 4);
  try {
    return await body(ptr, () => new Float32Array(pool.memory.buffer, ptr, count));
  } finally {
    pool.free(ptr);
  }
}

/**
 * A generated WAV decodes to the exact sample count, level and frequency; resampling (16 kHz mono
 * → 8 kHz stereo) keeps level and frequency and gives the resampled length; an offset and a
 * small capacity cut where asked, and the rest of the target is zero.
 */
export async function wavSineDecodes(pool: DecodePool): Promise<void> {
  const wav = sineWav({ sampleRate: 16000, seconds: 1 });
  await withFloats(pool, 2 * 20000, async (ptr, view) => {
    const same = await pool.decodeAudio(wav, ptr, { sampleRate: 16000, channels: 1, maxFrames: 20000 });
    check(same.format === 'wav' && same.codec === 'pcm', `format ${same.format}/${same.codec}`);
    check(same.onPoolThread, 'audio did not decode on a pool thread');
    check(same.sourceSampleRate === 16000 && same.sourceChannels === 1, `source ${same.sourceSampleRate} Hz × ${same.sourceChannels}`);
    check(same.framesWritten === 16000, `wrote ${same.framesWritten} frames, expected 16000`);
    check(Math.abs(same.durationSeconds - 1) < 0.002, `duration ${same.durationSeconds}`);
    let samples = view();
    for (let i = 0; i < 16000; i += 997) {
      const want = Math.round(Math.sin((2 * Math.PI * SINE_HZ * i) / 16000) * SINE_AMPLITUDE * 32767) / 32768;
      check(Math.abs((samples[i] ?? 0) - want) < 1e-6, `sample ${i}: ${samples[i]} != ${want} (PCM must pass through exactly)`);
    }
    check(
      samples.subarray(16000, 20000).every((s) => s === 0),
      'the target past framesWritten is not zero',
    );
    checkSine(measure(samples, 1, 0, 16000, 16000), 'WAV 16 kHz', 0.002, 0.5);

    const resampled = await pool.decodeAudio(wav, ptr, { sampleRate: 8000, channels: 2, maxFrames: 20000 });
    check(Math.abs(resampled.framesWritten - 8000) <= 1, `resampled to ${resampled.framesWritten} frames, expected 8000`);
    samples = view();
    for (const c of [0, 1]) checkSine(measure(samples, 2, c, resampled.framesWritten, 8000, 64), `WAV → 8 kHz channel ${c}`, 0.005, 0.5);
    for (let i = 0; i < resampled.framesWritten; i += 101) check(samples[2 * i] === samples[2 * i + 1], `mono upmix differs at ${i}`);

    const offset = await pool.decodeAudio(wav, ptr, { sampleRate: 16000, channels: 1, maxFrames: 20000, offsetSeconds: 0.25 });
    check(offset.framesWritten === 12000, `offset 0.25 s wrote ${offset.framesWritten} frames, expected 12000`);
    const first = view()[0] ?? 0;
    const want = Math.round(Math.sin((2 * Math.PI * SINE_HZ * 4000) / 16000) * SINE_AMPLITUDE * 32767) / 32768;
    check(Math.abs(first - want) < 1e-6, `offset: first sample ${first}, expected sample 4000 = ${want}`);

    const capped = await pool.decodeAudio(wav, ptr, { sampleRate: 16000, channels: 1, maxFrames: 1000 });
    check(capped.framesWritten === 1000, `maxFrames 1000 wrote ${capped.framesWritten}`);
  });
}

/** MP3, AAC (M4A), FLAC and Opus (Ogg) of a 2 s stereo 440 Hz sine, decoded and mixed to 16 kHz mono. */
export async function compressedAudioDecodes(pool: DecodePool, load: FixtureLoader): Promise<Record<string, number>> {
  const cases = [
    { file: 'sine440.mp3', format: 'mp3', codec: 'mp3' },
    { file: 'sine440.m4a', format: 'mp4', codec: 'aac' },
    { file: 'sine440.flac', format: 'flac', codec: 'flac' },
    { file: 'sine440.opus.ogg', format: 'ogg', codec: 'opus' },
  ] as const;
  const frames: Record<string, number> = {};
  await withFloats(pool, 48000, async (ptr, view) => {
    for (const c of cases) {
      const info = await pool.decodeAudio(await load(c.file), ptr, { sampleRate: 16000, channels: 1, maxFrames: 48000 });
      check(info.format === c.format && info.codec === c.codec, `${c.file}: ${info.format}/${info.codec}`);
      check(info.sourceChannels === 2, `${c.file}: ${info.sourceChannels} source channels`);
      // Encoders pad to whole frames and decoders trim priming where the container says how.
      check(Math.abs(info.framesWritten - 32000) <= 32000 * 0.03, `${c.file}: ${info.framesWritten} frames, expected 32000 ± 3%`);
      checkSine(measure(view(), 1, 0, info.framesWritten, 16000, 1600), c.file, c.codec === 'flac' ? 0.003 : 0.02, 1);
      frames[c.file] = info.framesWritten;
    }
  });
  return frames;
}

/** audioClips cuts views of fixed length, back to back or overlapping. */
export function clipsCut(): void {
  const samples = Float32Array.from({ length: 2 * 10 }, (_, i) => i);
  const clips = audioClips(samples, 2, 10, 4);
  check(clips.length === 2 && clips.every((c) => c.length === 8), `back-to-back clips ${clips.map((c) => c.length)}`);
  check(clips[1]?.[0] === 8 && clips[1].buffer === samples.buffer, 'clip 2 should be a view starting at frame 4');
  const partial = audioClips(samples, 2, 10, 4, { keepPartial: true });
  check(partial.length === 3 && partial[2]?.length === 4, `partial clip ${partial.map((c) => c.length)}`);
  const hop = audioClips(samples, 2, 10, 4, { hopFrames: 3 });
  check(hop.length === 3 && hop[2]?.[0] === 12, `hop 3 clips ${hop.map((c) => c[0])}`);
}

async function expectCode(promise: Promise<unknown>, codes: readonly DecodeErrorCode[], what: string): Promise<void> {
  await rejectsWith(promise, (e) => e instanceof DecodeError && codes.includes(e.code), `${what} should fail with ${codes.join(' or ')}`);
}

/** Empty, garbage, cut and over-limit audio each get a typed error; the pool keeps working. */
export async function brokenAudioGetsTypedErrors(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const wav = sineWav({ sampleRate: 16000, seconds: 1 });
  const opts = { sampleRate: 16000, channels: 1, maxFrames: 40000 };
  await withFloats(pool, 40000, async (ptr) => {
    await expectCode(pool.decodeAudio(new Uint8Array(0), ptr, opts), ['empty'], 'empty input');
    const noise = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251);
    await expectCode(pool.decodeAudio(noise, ptr, opts), ['unknown-format'], 'noise');
    await expectCode(pool.decodeAudio(wav.subarray(0, 20), ptr, opts), ['truncated', 'unknown-format'], 'a WAV cut inside its header');
    await expectCode(pool.decodeAudio(wav.subarray(0, wav.length / 2), ptr, opts), ['truncated'], 'a WAV cut in half');
    await expectCode(pool.decodeAudio(wav, ptr, { ...opts, maxDurationSeconds: 0.5 }), ['too-large'], 'over maxDurationSeconds');
    await expectCode(pool.decodeAudio(wav, ptr, { ...opts, channels: 0 }), ['bad-request'], 'zero channels');
    await expectCode(pool.decodeAudio(wav, ptr, { ...opts, sampleRate: 0 }), ['bad-request'], 'zero sample rate');
    const m4a = await load('sine440.m4a');
    await expectCode(
      pool.decodeAudio(m4a.subarray(0, Math.floor(m4a.length * 0.6)), ptr, opts),
      ['truncated', 'corrupt'],
      'an M4A cut at 60%',
    );
    // Cuts and flips anywhere: each either decodes or fails with a typed error, never hangs or crashes.
    for (const file of ['sine440.mp3', 'sine440.flac', 'sine440.opus.ogg', 'sine440.m4a']) {
      const bytes = await load(file);
      // 64 bytes or fewer hold no audio frame: those cuts must fail. Longer ones are shorter valid
      // streams (MP3, Ogg) or cut files; either outcome is fine, as long as it is typed.
      for (const cut of [1, 7, 64, 500, 3000, Math.floor(bytes.length / 3)]) {
        const decoded = await pool.decodeAudio(bytes.subarray(0, cut), ptr, opts).then(
          () => true,
          (e: unknown) => (check(e instanceof DecodeError, `${file} cut at ${cut}: ${String(e)}`), false),
        );
        check(!(decoded && cut <= 64), `${file} cut to ${cut} bytes decoded as if it held audio`);
      }
      const flipped = bytes.slice();
      for (let i = 16; i < flipped.length; i += 97) flipped[i] = (flipped[i] ?? 0) ^ 0x5a;
      await pool
        .decodeAudio(flipped, ptr, opts)
        .catch((e: unknown) => check(e instanceof DecodeError, `${file} with flipped bytes: ${String(e)}`));
    }
    const ok = await pool.decodeAudio(wav, ptr, opts);
    check(ok.framesWritten === 16000, 'the pool decodes normally after the broken inputs');
  });
}

// ---- video ----------------------------------------------------------------------------------------

const RED = [255, 0, 0];
const GREEN = [0, 255, 0];
const BLUE = [0, 0, 255];

function meanColour(frame: Uint8Array): number[] {
  const sum = [0, 0, 0];
  for (let i = 0; i < frame.length; i += 3) for (let c = 0; c < 3; c++) sum[c]! += frame[i + c] ?? 0;
  return sum.map((s) => s / (frame.length / 3));
}

async function withClip<T>(pool: DecodePool, bytes: number, body: (ptr: number, view: () => Uint8Array) => Promise<T>): Promise<T> {
  const ptr = pool.malloc(bytes);
  try {
    return await body(ptr, () => new Uint8Array(pool.memory.buffer, ptr, bytes));
  } finally {
    pool.free(ptr);
  }
}

/** Red, green and blue seconds (H.264 MP4 and VP9 WebM) sampled by time, index and rate land in the right slots. */
export async function solidColourClips(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const w = 32,
    h = 24,
    slot = w * h * 3;
  for (const [file, codec, format] of [
    ['rgb.h264.mp4', 'h264', 'mp4'],
    ['rgb.vp9.webm', 'vp9', 'matroska'],
  ] as const) {
    const bytes = await load(file);
    await withClip(pool, 8 * slot, async (ptr, view) => {
      const colourOf = (i: number): number[] => meanColour(view().slice(i * slot, (i + 1) * slot));
      const near = (got: number[], want: number[], what: string): void =>
        check(
          got.every((v, c) => Math.abs(v - want[c]!) <= 6),
          `${file} ${what}: colour ${got.map((v) => v.toFixed(0))}, expected ${want}`,
        );

      const byTime = await pool.decodeVideo(bytes, ptr, { width: w, height: h, fit: 'stretch', frames: { times: [2.5, 0.5, 1.5] } });
      check(byTime.codec === codec && byTime.format === format, `${file}: ${byTime.format}/${byTime.codec}`);
      check(byTime.sourceWidth === 64 && byTime.sourceHeight === 48, `${file}: source ${byTime.sourceWidth}x${byTime.sourceHeight}`);
      check(Math.abs(byTime.frameRate - 10) < 0.01, `${file}: frame rate ${byTime.frameRate}`);
      check(byTime.framesWritten === 3, `${file}: ${byTime.framesWritten} frames by time`);
      check([...byTime.timestamps].join() === '2.5,0.5,1.5', `${file}: timestamps ${[...byTime.timestamps]}`);
      near(colourOf(0), BLUE, 't=2.5');
      near(colourOf(1), RED, 't=0.5');
      near(colourOf(2), GREEN, 't=1.5');

      const byIndex = await pool.decodeVideo(bytes, ptr, { width: w, height: h, fit: 'stretch', frames: { indices: [0, 15, 29] } });
      check(byIndex.framesWritten === 3, `${file}: ${byIndex.framesWritten} frames by index`);
      check([...byIndex.timestamps].join() === '0,1.5,2.9', `${file}: index timestamps ${[...byIndex.timestamps]}`);
      near(colourOf(0), RED, 'frame 0');
      near(colourOf(1), GREEN, 'frame 15');
      near(colourOf(2), BLUE, 'frame 29');

      view().fill(77);
      const byRate = await pool.decodeVideo(bytes, ptr, { width: w, height: h, fit: 'stretch', frames: { fps: 2, count: 8 } });
      check(byRate.framesWritten === 6, `${file}: ${byRate.framesWritten} frames at 2 fps of a 3 s video, expected 6`);
      check(
        [...byRate.timestamps].map((t) => (Number.isNaN(t) ? 'x' : String(t))).join() === '0,0.5,1,1.5,2,2.5,x,x',
        `${file}: rate timestamps ${[...byRate.timestamps]}`,
      );
      [RED, RED, GREEN, GREEN, BLUE, BLUE].forEach((want, i) => {
        near(colourOf(i), want, `2 fps slot ${i}`);
      });
      check(
        view()
          .subarray(6 * slot, 8 * slot)
          .every((v) => v === 0),
        `${file}: slots past the end are not zeroed`,
      );
    });
  }
}

/**
 * A solid colour at an odd width (63x48 VP9, 4:2:0 and 4:2:2): every pixel of two frames is that one
 * colour, at the video's own size into a slot that held other bytes and stretched to 31x24 after
 * other videos went through the pool's threads. swscale's table converter leaves an odd width's last
 * column unwritten; Tandem's converter writes it.
 */
export async function oddWidthFramesAreWhole(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const other = await load('testsrc.vp9.webm');
  for (const file of ['odd.vp9.webm', 'odd422.vp9.webm']) {
    const bytes = await load(file);
    for (const [w, h] of [
      [63, 48],
      [31, 24],
    ] as const) {
      const slot = w * h * 3;
      // Other frames through every thread first: the conversion buffers they leave hold other pixels.
      await Promise.all(
        [0, 1, 2, 3].map((i) =>
          withClip(pool, 160 * 120 * 3, (ptr) =>
            pool.decodeVideo(other, ptr, { width: 160, height: 120, fit: 'stretch', frames: { indices: [i] } }),
          ),
        ),
      );
      await withClip(pool, 2 * slot, async (ptr, view) => {
        view().fill(77);
        const info = await pool.decodeVideo(bytes, ptr, { width: w, height: h, fit: 'stretch', frames: { indices: [0, 5] } });
        check(info.sourceWidth === 63 && info.sourceHeight === 48, `${file}: source ${info.sourceWidth}x${info.sourceHeight}`);
        check(info.framesWritten === 2, `${file}: ${info.framesWritten} frames`);
        const pixels = view().slice(0, 2 * slot);
        const first = [pixels[0]!, pixels[1]!, pixels[2]!];
        check(
          first.every((v, c) => Math.abs(v - [51, 102, 204][c]!) <= 6),
          `${file} at ${w}x${h}: colour ${first}, expected 51,102,204`,
        );
        for (let i = 0; i < 2 * w * h; i++)
          check(
            pixels[3 * i] === first[0] && pixels[3 * i + 1] === first[1] && pixels[3 * i + 2] === first[2],
            `${file} at ${w}x${h}: pixel (${i % w}, ${Math.floor(i / w) % h}) of frame ${Math.floor(i / (w * h))} is ${[...pixels.subarray(3 * i, 3 * i + 3)]}, not ${first}`,
          );
      });
    }
  }
}

/**
 * testsrc2 (a moving pattern, 20 frames at 10 fps) in MP4, WebM and MKV: every frame by index has
 * pts i/10 and differs from its neighbour; the same frames by time (forcing seeks, out of order)
 * are byte-identical to those by index; contain-fit pads with padValue.
 */
export async function movingPatternClips(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const w = 40,
    h = 30,
    slot = w * h * 3;
  for (const [file, codec] of [
    ['testsrc.h264.mp4', 'h264'],
    ['testsrc.vp9.webm', 'vp9'],
    ['testsrc.h264.mkv', 'h264'],
  ] as const) {
    const bytes = await load(file);
    await withClip(pool, 20 * slot, async (ptr, view) => {
      const all = await pool.decodeVideo(bytes, ptr, { width: w, height: h, frames: { indices: Array.from({ length: 20 }, (_, i) => i) } });
      check(all.codec === codec, `${file}: codec ${all.codec}`);
      check(all.framesWritten === 20, `${file}: ${all.framesWritten} of 20 frames`);
      check(
        all.timestamps.every((t, i) => Math.abs(t - i / 10) < 0.0015),
        `${file}: timestamps ${[...all.timestamps]}`,
      );
      const frames = Array.from({ length: 20 }, (_, i) => view().slice(i * slot, (i + 1) * slot));
      for (let i = 1; i < 20; i++)
        check(
          frames[i]!.some((v, k) => v !== frames[i - 1]![k]),
          `${file}: frames ${i - 1} and ${i} are identical`,
        );

      const picks = [1.7, 0.3, 1.0];
      const byTime = await pool.decodeVideo(bytes, ptr, { width: w, height: h, frames: { times: picks } });
      check(byTime.framesWritten === 3, `${file}: ${byTime.framesWritten} frames by time`);
      picks.forEach((t, i) => {
        check(Math.abs((byTime.timestamps[i] ?? -1) - t) < 0.0015, `${file}: time ${t} got pts ${byTime.timestamps[i]}`);
        const got = view().subarray(i * slot, (i + 1) * slot);
        const want = frames[Math.round(t * 10)]!;
        check(
          got.every((v, k) => v === want[k]),
          `${file}: frame at ${t} s differs from frame ${Math.round(t * 10)} by index`,
        );
      });

      const padded = await pool.decodeVideo(bytes, ptr, { width: w, height: 2 * h, fit: 'contain', padValue: 9, frames: { indices: [0] } });
      check(padded.framesWritten === 1, `${file}: contain-fit frame`);
      const rows = view().subarray(0, w * 3 * 2 * h);
      check(
        rows.subarray(0, w * 3 * 10).every((v) => v === 9),
        `${file}: contain padding is not padValue`,
      );
    });
  }
}

/** Empty, garbage, audio-only, cut, over-limit video each get a typed error; the pool keeps working. */
export async function brokenVideoGetsTypedErrors(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const opts = { width: 16, height: 16, frames: { indices: [0, 10] } };
  const mp4 = await load('testsrc.h264.mp4');
  await withClip(pool, 2 * 16 * 16 * 3, async (ptr) => {
    await expectCode(pool.decodeVideo(new Uint8Array(0), ptr, opts), ['empty'], 'empty input');
    await expectCode(
      pool.decodeVideo(
        Uint8Array.from({ length: 5000 }, (_, i) => (i * 31) & 255),
        ptr,
        opts,
      ),
      ['unknown-format'],
      'garbage',
    );
    await expectCode(pool.decodeVideo(sineWav({ sampleRate: 8000, seconds: 0.1 }), ptr, opts), ['unknown-format'], 'audio-only file');
    await expectCode(pool.decodeVideo(mp4, ptr, { ...opts, maxPixels: 160 * 120 - 1 }), ['too-large'], 'over maxPixels');
    await expectCode(pool.decodeVideo(mp4, ptr, { ...opts, maxDurationSeconds: 1 }), ['too-large'], 'over maxDurationSeconds');
    await expectCode(pool.decodeVideo(mp4, ptr, { ...opts, frames: { indices: [-1] } }), ['bad-request'], 'negative index');
    await expectCode(pool.decodeVideo(mp4, ptr, { ...opts, frames: { fps: 0, count: 2 } }), ['bad-request'], 'zero fps');
    await expectCode(
      pool.decodeVideo(mp4, ptr, { ...opts, crop: { x: 150, y: 0, width: 40, height: 10 } }),
      ['bad-request'],
      'crop outside the frame',
    );
    for (const file of ['testsrc.h264.mp4', 'testsrc.vp9.webm', 'testsrc.h264.mkv']) {
      const bytes = await load(file);
      await expectCode(
        pool.decodeVideo(bytes.subarray(0, Math.floor(bytes.length * 0.5)), ptr, { ...opts, frames: { indices: [18] } }),
        ['truncated', 'corrupt'],
        `${file} cut in half`,
      );
      // Frames 0 and 10 of a 2 s clip cannot fit in 1000 bytes: those cuts must fail; at 80% either is fine.
      for (const cut of [1, 12, 100, 1000, Math.floor(bytes.length * 0.8)]) {
        const decoded = await pool.decodeVideo(bytes.subarray(0, cut), ptr, opts).then(
          () => true,
          (e: unknown) => (check(e instanceof DecodeError, `${file} cut at ${cut}: ${String(e)}`), false),
        );
        check(!(decoded && cut <= 1000), `${file} cut to ${cut} bytes decoded as if it held both frames`);
      }
      const flipped = bytes.slice();
      for (let i = 32; i < flipped.length; i += 61) flipped[i] = (flipped[i] ?? 0) ^ 0xa5;
      await pool
        .decodeVideo(flipped, ptr, opts)
        .catch((e: unknown) => check(e instanceof DecodeError, `${file} with flipped bytes: ${String(e)}`));
    }
    const ok = await pool.decodeVideo(mp4, ptr, opts);
    check(ok.framesWritten === 2, 'the pool decodes video normally after the broken inputs');
  });
}

/** Every audio and video scenario, by title: each runtime registers them from this list. */
export const mediaScenarios: Record<string, (pool: DecodePool, load: FixtureLoader) => Promise<unknown>> = {
  'decodes a generated WAV sine: sample count, resampled length, level, frequency, offset': (pool) => wavSineDecodes(pool),
  'decodes MP3, AAC, FLAC and Opus sines mixed to mono at 16 kHz': compressedAudioDecodes,
  'cuts audio into fixed-length clips as views': async () => clipsCut(),
  'gives typed errors for broken audio and stays healthy': brokenAudioGetsTypedErrors,
  'samples solid-colour H.264 and VP9 by time, index and rate': solidColourClips,
  'samples a moving pattern in MP4, WebM and MKV; time and index agree': movingPatternClips,
  'decodes every pixel of odd-width 4:2:0 and 4:2:2 frames, the last column too': oddWidthFramesAreWhole,
  'gives typed errors for broken video and stays healthy': brokenVideoGetsTypedErrors,
};
