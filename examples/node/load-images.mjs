// Tandem in a Node 20 script, plain JavaScript. Run from a folder holding photo.jpg and
// images/<class>/*.jpg:  node load-images.mjs
import { readFile } from 'node:fs/promises';
import { DecodePool, ImageBatcher, PipelineBuilder, formatStats, listImageFolder } from 'tandem';

const pool = await DecodePool.create({ threads: 2 });
try {
  // One image into an array of its own.
  const { pixels, info } = await pool.decode(await readFile('photo.jpg'), { width: 224, height: 224, fit: 'cover' });
  console.log(`photo.jpg: ${info.format} ${info.sourceWidth}x${info.sourceHeight} -> ${pixels.length} bytes of RGB`);

  // A loader: read files, decode on the pool's threads straight into batch buffers, batch.
  const { files, classes } = await listImageFolder('images');
  const batcher = new ImageBatcher(pool, { batchSize: 4, height: 224, width: 224, decode: { fit: 'cover' } });
  const pipeline = new PipelineBuilder()
    .addSource(files)
    .pipe(async (file) => ({ bytes: await readFile(file.path), label: file.label }), { name: 'read', concurrency: 8 })
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();
  let images = 0;
  for await (const batch of pipeline) {
    // batch.data: count × 224 × 224 × 3 bytes (NHWC) in the pool's memory; batch.labels: Int32Array
    images += batch.count;
    batch.release(); // hands the buffer back for the next batch
  }
  console.log(`loaded ${images} images of ${classes.length} classes; ${pipeline.failures().length} failed`);
  console.log(formatStats(pipeline.stats()));
} finally {
  await pool.close(); // stops the pool's threads; nothing keeps running
}
