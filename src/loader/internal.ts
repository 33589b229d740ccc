// What loader() shares with the folders above it (the video loader) and its tests, not with users:
// turning a source into labelled items, and their seeded, rank-sharded order per epoch. This file
// is not in package.json's exports.
export { resolveSource, type LabelledSource, type ResolvedSource } from './sources.ts';
export { listOrder, type PassItem, type PassOrder } from './state.ts';
export { checkBudget } from './options.ts';
