// Counts GPU→CPU readbacks (buffers mapped for reading) while a piece of work runs, by wrapping
// GPUBuffer.prototype.mapAsync for its duration: the framework hand-off tests require zero.
export async function countReadbacks<T>(fn: () => Promise<T>): Promise<{ result: T; readbacks: number }> {
  const proto = GPUBuffer.prototype as GPUBuffer;
  const original = proto.mapAsync;
  let readbacks = 0;
  proto.mapAsync = function (this: GPUBuffer, mode: GPUMapModeFlags, ...rest: [number?, number?]) {
    if (mode & GPUMapMode.READ) readbacks++;
    return original.call(this, mode, ...rest);
  };
  try {
    return { result: await fn(), readbacks };
  } finally {
    proto.mapAsync = original;
  }
}
