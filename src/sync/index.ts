// The sync room: waiting for pooled resources in a way a stopping pipeline can interrupt, and the
// one lease every batch is handed out on.
export { SlotPool } from './slot-pool.ts';
export { batchLease, leasedBatch, type BatchEnds, type BatchLease } from './lease.ts';
