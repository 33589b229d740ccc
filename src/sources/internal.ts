// What the sources room shares with the rooms above it (the Parquet room's HTTP reads), not with
// users: the retry rules every fetch of Tandem follows. This file is not in package.json's exports.
export { readWithin, retryAfterMs, transientStatus, waitBeforeRetry } from './urls.ts';
