// The command @ffmpeg/ffmpeg runs per file (its in-memory files in.jpg → out.rgb): the torchvision
// transform as an ffmpeg filter graph, raw RGB out. Quiet logging, so log messages cost it nothing.
import { OUT } from '../types.ts';

export const FFMPEG_ARGS = [
  '-hide_banner',
  '-loglevel',
  'error',
  '-i',
  'in.jpg',
  '-vf',
  `scale=${OUT}:${OUT}:force_original_aspect_ratio=increase,crop=${OUT}:${OUT}`,
  '-f',
  'rawvideo',
  '-pix_fmt',
  'rgb24',
  'out.rgb',
];
