// The browser's own decoder in a module worker: createImageBitmap with resize, then the centre
// crop drawn into an OffscreenCanvas and read back with getImageData, so the RGBA bytes really
// exist. Workers take the next image from a shared counter, as Tandem's pool threads do.
import { OUT, coverGeometry, type ImageInfo, type Transform } from '../types.ts';

export type BitmapRequest =
  | { type: 'load'; images: Uint8Array[]; infos: ImageInfo[] }
  | { type: 'run'; transform: Transform; counter: Int32Array; quality: ResizeQuality };
export type BitmapReply = { type: 'loaded' } | { type: 'done'; failed: number; checksum: number } | { type: 'error'; message: string };

let blobs: Blob[] = [];
let infos: ImageInfo[] = [];
const post = (m: BitmapReply) => (self as unknown as Worker).postMessage(m);

async function decodeOne(i: number, transform: Transform, quality: ResizeQuality): Promise<number> {
  const { width, height } = infos[i]!;
  if (transform === 'decode') {
    const bmp = await createImageBitmap(blobs[i]!);
    const ctx = new OffscreenCanvas(width, height).getContext('2d', { willReadFrequently: true })!;
    ctx.drawImage(bmp, 0, 0);
    bmp.close();
    const data = ctx.getImageData(0, 0, width, height).data;
    return data[(data.length >> 1) & ~3]!;
  }
  const g = coverGeometry(width, height);
  const bmp = await createImageBitmap(blobs[i]!, { resizeWidth: g.rw, resizeHeight: g.rh, resizeQuality: quality });
  const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
  ctx.drawImage(bmp, -g.left, -g.top);
  bmp.close();
  const data = ctx.getImageData(0, 0, OUT, OUT).data;
  return data[(data.length >> 1) & ~3]!;
}
const canvas = new OffscreenCanvas(OUT, OUT);

self.onmessage = async (e: MessageEvent<BitmapRequest>) => {
  const m = e.data;
  try {
    if (m.type === 'load') {
      blobs = m.images.map((b) => new Blob([b as Uint8Array<ArrayBuffer>], { type: 'image/jpeg' }));
      infos = m.infos;
      return post({ type: 'loaded' });
    }
    let failed = 0,
      checksum = 0;
    for (let i = Atomics.add(m.counter, 0, 1); i < blobs.length; i = Atomics.add(m.counter, 0, 1)) {
      try {
        checksum += await decodeOne(i, m.transform, m.quality);
      } catch {
        failed++;
      }
    }
    post({ type: 'done', failed, checksum });
  } catch (err) {
    post({ type: 'error', message: String(err) });
  }
};
