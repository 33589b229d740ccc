// Audio and video decodes against Debian's ffmpeg CLI on the same files (references made by
// scripts/make-fixtures.sh): every frame as RGB at the clip's own size, and whole sines as f32
// stereo at their own rate, so neither side resamples or mixes.
import type { DecodePool } from '../../src/decode/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';

/**
 * Video: the same libavcodec decoders on both sides; the YUV 4:2:0 → RGB conversions (Tandem's
 * against swscale's default) round and upsample chroma differently. Measured on 2026-12-01: mean
 * 0.453 and 0.454, max 3, for H.264 and VP9; a regression of a few levels fails. HEVC and AV1
 * (MP4 and WebM) are held to the same bound.
 */
export const VIDEO_TOLERANCE = { mean: 0.6, max: 4 };
/**
 * Audio: the same libavcodec decoders, float output; measured max 7.2e-7 (MP3), 0 (FLAC),
 * 6e-8 (AAC) over 2 s of a 0.5-amplitude sine, with the same frame counts.
 */
export const AUDIO_TOLERANCE = { max: 1e-5 };

function stats(got: ArrayLike<number>, want: ArrayLike<number>): { mean: number; max: number } {
  let sum = 0;
  let max = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs((got[i] ?? 0) - (want[i] ?? 0));
    sum += d;
    max = Math.max(max, d);
  }
  return { mean: sum / want.length, max };
}

export async function videoMatchesFfmpegCli(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const measured: string[] = [];
  for (const file of ['testsrc.h264.mp4', 'testsrc.vp9.webm', 'testsrc.hevc.mp4', 'testsrc.av1.mp4', 'testsrc.av1.webm']) {
    const want = await load(`${file}.rgb`);
    const frameBytes = 160 * 120 * 3;
    const frames = want.length / frameBytes;
    const ptr = pool.malloc(want.length);
    try {
      const info = await pool.decodeVideo(await load(file), ptr, {
        width: 160,
        height: 120,
        fit: 'stretch',
        frames: { indices: Array.from({ length: frames }, (_, i) => i) },
      });
      check(info.framesWritten === frames, `${file}: ${info.framesWritten} frames, the CLI gave ${frames}`);
      const codec = file.includes('hevc') ? 'hevc' : file.includes('av1') ? 'av1' : undefined;
      if (codec) {
        // ffprobe's frame times (scripts/make-fixtures.sh), to the ms the job reports.
        const probed = JSON.parse(new TextDecoder().decode(await load(`${file}.pts.json`))) as number[];
        const off = probed.map((t, i) => Math.abs(t - (info.timestamps[i] ?? Number.NaN)));
        check(probed.length === frames && Math.max(...off) <= 0.0005, `${file}: times ${[...info.timestamps]}, ffprobe's ${probed}`);
        check(info.codec === codec, `${file}: codec ${info.codec}`);
      }
      const got = new Uint8Array(pool.memory.buffer, ptr, want.length);
      const s = stats(got, want);
      measured.push(`${file}: mean ${s.mean.toFixed(3)}, max ${s.max}`);
      check(
        s.mean <= VIDEO_TOLERANCE.mean && s.max <= VIDEO_TOLERANCE.max,
        `${file} against ffmpeg's CLI: mean ${s.mean.toFixed(3)}, max ${s.max}`,
      );
    } finally {
      pool.free(ptr);
    }
  }
  return measured;
}

export async function audioMatchesFfmpegCli(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const measured: string[] = [];
  for (const file of ['sine440.mp3', 'sine440.flac', 'sine440.m4a']) {
    const ref = await load(`${file}.f32`);
    const want = new Float32Array(ref.buffer.slice(ref.byteOffset, ref.byteOffset + ref.byteLength));
    const frames = want.length / 2;
    const ptr = pool.malloc(want.length * 4 + 4096 * 8);
    try {
      const info = await pool.decodeAudio(await load(file), ptr, { sampleRate: 44100, channels: 2, maxFrames: frames + 4096 });
      const got = new Float32Array(pool.memory.buffer, ptr, info.framesWritten * 2);
      const s = stats(got, want);
      measured.push(`${file}: ${info.framesWritten} frames (CLI ${frames}), max ${s.max.toExponential(2)}`);
      check(info.framesWritten === frames, `${file}: ${info.framesWritten} frames, the CLI gave ${frames}`);
      check(s.max <= AUDIO_TOLERANCE.max, `${file} against ffmpeg's CLI: max difference ${s.max}`);
    } finally {
      pool.free(ptr);
    }
  }
  return measured;
}
