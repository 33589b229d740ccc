// Where a video loader stands, as plain JSON a checkpoint can hold: the sampler's state (seeded
// order, this rank's share, epoch and offset) at the video the consumer is in, and how many of that
// video's clips are done with. Clip draws are seeded by (seed, epoch, key), so a resumed loader
// samples that video again, the same clips, and skips those.
import type { SamplerState } from '../sources/index.ts';

export interface VideoLoaderState {
  kind: 'tandem.video';
  version: 1;
  /** The sampler at the video the consumer is in (the next one, between videos). */
  sampler: SamplerState;
  /** Clips of that video done with (delivered or failed): a resumed loader skips them. */
  clips: number;
  /** The epoch the pass in progress ends before (a resumed pass ends there too). */
  until?: number;
  /** How clips are drawn (frames, stride or fps, sampler, past-end policy, batch size): a resumed loader must draw them alike. */
  clipping?: string;
}

/** The settings that decide which clips a video gives and how they fall into batches, as one string. */
export function clipping(o: {
  frames: number;
  stride: number | undefined;
  fps: number | undefined;
  sampler: unknown;
  pastEnd: string;
  batchSize: number;
}): string {
  return JSON.stringify({
    frames: o.frames,
    stride: o.stride ?? null,
    fps: o.fps ?? null,
    sampler: o.sampler,
    pastEnd: o.pastEnd,
    batchSize: o.batchSize,
  });
}

/** A `resumeFrom` value is a video loader's state: anything else is refused naming what it is. */
export function stateMismatch(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return "a state from videoLoader's state()";
  const kind = (value as { kind?: unknown }).kind;
  if (kind === 'tandem.video') {
    const clips = (value as { clips?: unknown }).clips;
    return Number.isInteger(clips) && (clips as number) >= 0 ? undefined : "a state from videoLoader's state() (clips: a whole number)";
  }
  const what = kind === 'tandem.loader' ? "loader()'s state" : kind === 'tandem.text' ? "textLoader()'s state" : `of kind ${String(kind)}`;
  return `a state from videoLoader's state() (kind 'tandem.video'; this one is ${what})`;
}
