import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool, type DecodePool as Pool } from '../../src/decode/index.ts';
import {
  brokenAudioGetsTypedErrors,
  brokenVideoGetsTypedErrors,
  clipsCut,
  compressedAudioDecodes,
  movingPatternClips,
  solidColourClips,
  wavSineDecodes,
  type FixtureLoader,
} from '../shared/media-scenarios.ts';

// Compressed audio and video fixtures come from scripts/make-fixtures.sh (run by scripts/test.sh).
const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('wasm audio and video decoding (Node)', () => {
  let pool: Pool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2, maxInFlight: 4 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('decodes a generated WAV sine: sample count, resampled length, level, frequency, offset', () => wavSineDecodes(pool));
  it('decodes MP3, AAC, FLAC and Opus sines mixed to mono at 16 kHz', () => compressedAudioDecodes(pool, load));
  it('cuts audio into fixed-length clips as views', () => clipsCut());
  it('gives typed errors for broken audio and stays healthy', () => brokenAudioGetsTypedErrors(pool, load));
  it('samples solid-colour H.264 and VP9 by time, index and rate', () => solidColourClips(pool, load));
  it('samples a moving pattern in MP4, WebM and MKV; time and index agree', () => movingPatternClips(pool, load));
  it('gives typed errors for broken video and stays healthy', () => brokenVideoGetsTypedErrors(pool, load));
});
