// Waiting for a pooled resource (a batch buffer, an upload slot) in a way a stopping pipeline can
// interrupt: a waiter that gives up leaves the line, so a resource is never handed to nobody.

/** Joins `line` and resolves with the resource handed to it, or rejects with the signal's reason. */
export function waitInLine<T>(line: Array<(resource: T) => void>, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      const i = line.indexOf(take);
      if (i >= 0) line.splice(i, 1);
      reject(signal!.reason);
    };
    const take = (resource: T) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(resource);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    line.push(take);
  });
}
