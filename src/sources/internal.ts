// What the sources room shares with the rooms above it (the Parquet room's HTTP reads), not with
// users: the retry rules every fetch of Tandem follows. This file is not in package.json's exports.
export { MAX_RETRY_AFTER_MS, readWithin, retryAfterMs, sleep, transientStatus } from './urls.ts';
