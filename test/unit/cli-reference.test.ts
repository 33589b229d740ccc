import { describe, it } from 'vitest';
import { audioMatchesFfmpegCli, videoMatchesFfmpegCli } from '../shared/cli-reference-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';

describe("audio and video against Debian's ffmpeg CLI (Node)", () => {
  const pool = usePool({ threads: 2 });
  it('every frame of an H.264, a VP9, an HEVC and two AV1 clips (HEVC and AV1: times as ffprobe gives them), as RGB at their own size', async () => {
    console.log(`[ffmpeg cli] ${(await videoMatchesFfmpegCli(pool(), load)).join('; ')}`);
  });
  it('MP3, FLAC and AAC sines as f32 stereo at their own rate', async () => {
    console.log(`[ffmpeg cli] ${(await audioMatchesFfmpegCli(pool(), load)).join('; ')}`);
  });
});
