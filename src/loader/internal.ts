// What loader() shares with the folders above it (the video and text loaders) and its tests, not
// with users: turning a source into labelled items, and their seeded, rank-sharded order per epoch.
// This file is not in package.json's exports.
export { resolveSource, type LabelledSource, type LoaderSource, type ResolvedSource } from './sources.ts';
export { listOrder, startOf, streamOrder, type LoaderState, type PassItem, type PassOrder } from './state.ts';
export { checkBudget, gpuTarget } from './options.ts';
export { checkShardResume } from './shards.ts';
