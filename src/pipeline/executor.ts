/**
 * Where a stage's work runs. 'inline' stages call their function on the event loop and need no
 * executor object; everything else (worker pool, the wasm decode pool) implements this.
 */
export interface Executor<I = unknown, O = unknown> {
  /** Rejects with the task's error; should reject promptly once `signal` aborts. */
  run(input: I, signal: AbortSignal): Promise<O>;
  /** Ends all work and frees threads; the pipeline awaits it on stop. */
  close(): Promise<void>;
}
