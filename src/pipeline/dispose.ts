/**
 * Items a stopped pipeline will never deliver may hold resources that running tasks wait for
 * (a decode batch buffer, a GPU upload slot); dropping them silently would leave those tasks, and
 * so stop(), waiting for ever. Every item the engine drops goes through here: disposable items
 * (Symbol.dispose / Symbol.asyncDispose, as ImageBatch and GpuBatch are) are disposed.
 */
export function discard(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const sync = (value as { [Symbol.dispose]?: unknown })[Symbol.dispose];
  if (typeof sync === 'function') {
    try {
      sync.call(value);
    } catch {
      // Disposal of an item nobody will see: its own errors have nowhere better to go.
    }
    return;
  }
  const later = (value as { [Symbol.asyncDispose]?: unknown })[Symbol.asyncDispose];
  if (typeof later === 'function')
    void Promise.resolve()
      .then(() => later.call(value))
      .catch(() => {});
}
