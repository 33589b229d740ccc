// Tandem in a Node 20 script, plain JavaScript. Run from a folder holding photo.jpg and
// images/<class>/*.jpg:  node load-images.mjs
import { readFile } from 'node:fs/promises';
import { DecodePool, loader } from 'tandem';

// One image into an array of its own.
const pool = await DecodePool.create({ threads: 2 });
try {
  const { pixels, info } = await pool.decode(await readFile('photo.jpg'), { width: 224, height: 224, fit: 'cover' });
  console.log(`photo.jpg: ${info.format} ${info.sourceWidth}x${info.sourceHeight} -> ${pixels.length} bytes of RGB`);
} finally {
  await pool.close(); // stops the pool's threads; nothing keeps running
}

// Batches from a folder: read, decoded on wasm threads straight into batch buffers, batched.
const data = loader('images', { batchSize: 4, size: 224 });
try {
  let images = 0;
  for await (const batch of data) {
    // batch.data: count × 224 × 224 × 3 bytes (NHWC) in wasm memory; batch.labels: Int32Array
    images += batch.count;
    batch.release(); // hands the buffer back for the next batch
  }
  console.log(`loaded ${images} images of ${(await data.classes()).length} classes; ${data.failures().length} failed`);
  console.log(data.summary());
} finally {
  await data.close();
}
