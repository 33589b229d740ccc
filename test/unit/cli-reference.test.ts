import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { audioMatchesFfmpegCli, videoMatchesFfmpegCli } from '../shared/cli-reference-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe("audio and video against Debian's ffmpeg CLI (Node)", () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });
  it('every frame of an H.264 and a VP9 clip, as RGB at their own size', async () => {
    console.log(`[ffmpeg cli] ${(await videoMatchesFfmpegCli(pool, load)).join('; ')}`);
  });
  it('MP3, FLAC and AAC sines as f32 stereo at their own rate', async () => {
    console.log(`[ffmpeg cli] ${(await audioMatchesFfmpegCli(pool, load)).join('; ')}`);
  });
});
