// The flood scenarios as one list for every runtime's test file: each builds files that made libav
// work faster than linearly in their size, and decodes them on a pool of one thread.
import type { DecodePool } from '../../src/decode/index.ts';
import { progressiveScanFloodFailsFast } from './jpeg-scan-flood-scenarios.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { metadataFloodsDecodeLikeTheMedia } from './metadata-flood-scenarios.ts';
import { sampleTableFloodsDecodeLikeTheMedia } from './sample-table-flood-scenarios.ts';

export interface FloodCase {
  title: string;
  run: (pool: DecodePool, load: FixtureLoader) => Promise<void>;
}

export const FLOOD_CASES: readonly FloodCase[] = [
  {
    title: 'files flooded with metadata (FLAC comments, PNG tEXt, Matroska tags, chapters, cues and tracks) decode like the media alone',
    run: metadataFloodsDecodeLikeTheMedia,
  },
  {
    title: 'MP4 sample tables flooded (edits, chapter references, claimed samples) decode like the media alone',
    run: sampleTableFloodsDecodeLikeTheMedia,
  },
  {
    title: 'a progressive JPEG flooded with empty scans fails alone as corrupt past 500 scans, and decodes as before under it',
    run: progressiveScanFloodFailsFast,
  },
];
