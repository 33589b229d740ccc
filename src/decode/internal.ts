// What the decode folder shares with the folders above it (the video loader's GPU batcher), its
// tests and benchmarks, not with users: the batch-slot engine and how clip times reach the decoder.
// This file is not in package.json's exports.
export { SlotBatcher, type FinishedBuffer, type SlotStorage } from './slot-batches.ts';
export { MAX_BATCH_BYTES } from './abi.ts';
export { decodeClipInto, decoderTimes } from './clips.ts';
export { DEMUX_LIMITS } from './demux.ts';
