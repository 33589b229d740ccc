// The sync room: waiting for pooled resources in a way a stopping pipeline can interrupt.
export { SlotPool } from './slot-pool.ts';
