// Counts GPU→CPU readbacks of every kind while a piece of work runs, by wrapping the entry points
// through which pixels or tensors can come back to the CPU for the work's duration:
//   map-read          GPUBuffer.mapAsync(READ)
//   copy-to-map-read  copyBufferToBuffer / copyTextureToBuffer into a MAP_READ buffer (counted even
//                     if the buffer is never mapped: the copy exists only to be read)
//   copy-to-canvas    copyBufferToTexture / copyTextureToTexture into a canvas's current texture
//                     (TensorFlow.js's dataSync goes this way, then through getImageData)
//   canvas-read       2D getImageData, toDataURL, toBlob, OffscreenCanvas.convertToBlob
//   webgl-read        WebGL readPixels
//   tfjs-read         TensorFlow.js engine reads (data, dataSync, array, arraySync, bytes, buffer)
//                     of tensors that live on a backend other than 'cpu'
//   ort-read          ONNX Runtime Tensor.getData of a tensor not on the CPU (a GPU tensor's download)
// One readback may be seen as several kinds (tf.js's data() is a tfjs-read, a copy-to-map-read and
// a map-read); the claim the tests hold is that the total is zero, and each kind has a positive
// control that makes one on purpose (test/shared/readback-scenarios.ts).

export type ReadbackKind = 'map-read' | 'copy-to-map-read' | 'copy-to-canvas' | 'canvas-read' | 'webgl-read' | 'tfjs-read' | 'ort-read';

export const READBACK_KINDS: readonly ReadbackKind[] = [
  'map-read',
  'copy-to-map-read',
  'copy-to-canvas',
  'canvas-read',
  'webgl-read',
  'tfjs-read',
  'ort-read',
];

/** The framework modules whose own read APIs are watched too, where the work uses them. */
export interface WatchedFrameworks {
  /** `@tensorflow/tfjs-core` (or `@tensorflow/tfjs`): its engine's reads are counted. */
  tf?: { engine(): object; findBackend(name: string): unknown };
  /** `onnxruntime-web`: `Tensor.prototype.getData` is counted. */
  ort?: { Tensor: { prototype: object } };
}

export interface Readbacks<T> {
  result: T;
  /** Readback events of every kind together. */
  readbacks: number;
  kinds: Record<ReadbackKind, number>;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** Runs `fn` with every readback path watched; the watch is removed when it ends, also on a throw. */
export async function countReadbacks<T>(fn: () => Promise<T>, watch: WatchedFrameworks = {}): Promise<Readbacks<T>> {
  const kinds = Object.fromEntries(READBACK_KINDS.map((k) => [k, 0])) as Record<ReadbackKind, number>;
  const restores: (() => void)[] = [];
  const canvasTextures = new WeakSet<object>();

  // Wraps `owner[name]` so `classify` sees each call first; an own property is put back as it was,
  // an inherited one is removed again.
  const wrap = (
    owner: object | undefined,
    name: string,
    classify: (self: unknown, args: unknown[]) => ReadbackKind | undefined,
    observe?: (out: unknown) => void,
  ) => {
    if (!owner) return;
    const holder = owner as Record<string, unknown>;
    const original = holder[name];
    if (typeof original !== 'function') return;
    const own = Object.hasOwn(owner, name);
    holder[name] = function (this: unknown, ...args: unknown[]) {
      // Counted before the call, so a read that then throws (dataSync where no canvas exists) counts.
      const kind = classify(this, args);
      if (kind) kinds[kind]++;
      const out = (original as Method).apply(this, args);
      observe?.(out);
      return out;
    };
    restores.push(() => {
      if (own) holder[name] = original;
      else delete holder[name];
    });
  };
  const proto = (name: string): object | undefined =>
    (globalThis as unknown as Record<string, { prototype?: object } | undefined>)[name]?.prototype;
  const isMapRead = (buffer: unknown) =>
    typeof GPUBufferUsage !== 'undefined' && ((buffer as GPUBuffer | undefined)?.usage ?? 0) & GPUBufferUsage.MAP_READ;

  wrap(proto('GPUBuffer'), 'mapAsync', (_self, [mode]) => ((Number(mode) & GPUMapMode.READ) !== 0 ? 'map-read' : undefined));
  // copyBufferToBuffer(source, sourceOffset, destination, …) or the newer (source, destination, size?).
  wrap(proto('GPUCommandEncoder'), 'copyBufferToBuffer', (_self, args) =>
    isMapRead(typeof args[1] === 'number' ? args[2] : args[1]) ? 'copy-to-map-read' : undefined,
  );
  wrap(proto('GPUCommandEncoder'), 'copyTextureToBuffer', (_self, [, destination]) =>
    isMapRead((destination as GPUTexelCopyBufferInfo | undefined)?.buffer) ? 'copy-to-map-read' : undefined,
  );
  wrap(
    proto('GPUCanvasContext'),
    'getCurrentTexture',
    () => undefined,
    (texture) => {
      if (texture && typeof texture === 'object') canvasTextures.add(texture);
    },
  );
  const intoCanvas = (_self: unknown, [, destination]: unknown[]) =>
    canvasTextures.has((destination as GPUTexelCopyTextureInfo | undefined)?.texture ?? {}) ? ('copy-to-canvas' as const) : undefined;
  wrap(proto('GPUCommandEncoder'), 'copyBufferToTexture', intoCanvas);
  wrap(proto('GPUCommandEncoder'), 'copyTextureToTexture', intoCanvas);
  for (const context of ['CanvasRenderingContext2D', 'OffscreenCanvasRenderingContext2D'])
    wrap(proto(context), 'getImageData', () => 'canvas-read');
  wrap(proto('HTMLCanvasElement'), 'toDataURL', () => 'canvas-read');
  wrap(proto('HTMLCanvasElement'), 'toBlob', () => 'canvas-read');
  wrap(proto('OffscreenCanvas'), 'convertToBlob', () => 'canvas-read');
  for (const context of ['WebGLRenderingContext', 'WebGL2RenderingContext']) wrap(proto(context), 'readPixels', () => 'webgl-read');

  if (watch.tf) {
    // Every tensor read goes through the engine; a tensor of the CPU backend is already on the CPU.
    const tf = watch.tf;
    const engine = tf.engine() as { state: { tensorInfo: { get(id: object): { backend: unknown } | undefined } } };
    const onGpu = (_self: unknown, [dataId]: unknown[]) =>
      engine.state.tensorInfo.get(dataId as object)?.backend !== tf.findBackend('cpu') ? ('tfjs-read' as const) : undefined;
    wrap(engine, 'read', onGpu);
    wrap(engine, 'readSync', onGpu);
  }
  if (watch.ort)
    wrap(watch.ort.Tensor.prototype, 'getData', (self) => {
      const location = (self as { location?: string }).location;
      return location === 'cpu' || location === 'cpu-pinned' ? undefined : 'ort-read';
    });

  try {
    const result = await fn();
    return { result, readbacks: Object.values(kinds).reduce((a, b) => a + b, 0), kinds };
  } finally {
    for (const restore of restores.reverse()) restore();
  }
}

/** "3 (map-read 1, tfjs-read 2)": the kinds seen, for a failure message. */
export function describeReadbacks(r: Pick<Readbacks<unknown>, 'readbacks' | 'kinds'>): string {
  const seen = READBACK_KINDS.filter((k) => r.kinds[k] > 0).map((k) => `${k} ${r.kinds[k]}`);
  return seen.length ? `${r.readbacks} (${seen.join(', ')})` : '0';
}
