// Tandem in a Deno script, from npm. Run from a folder holding photo.jpg and images/<class>/*.jpg:
//   deno run --allow-read load-images.ts
import { DecodePool, ImageBatcher, PipelineBuilder, listImageFolder } from 'npm:tandem';

await using pool = await DecodePool.create({ threads: 2 });
const { pixels, info } = await pool.decode(await Deno.readFile('photo.jpg'), { width: 224, height: 224, fit: 'cover' });
console.log(`photo.jpg: ${info.format} ${info.sourceWidth}x${info.sourceHeight} -> ${pixels.length} bytes of RGB`);

const { files, classes } = await listImageFolder('images');
const batcher = new ImageBatcher(pool, { batchSize: 4, height: 224, width: 224, decode: { fit: 'cover' } });
await using pipeline = new PipelineBuilder()
  .addSource(files)
  .pipe(async (file) => ({ bytes: await Deno.readFile(file.path), label: file.label }), { name: 'read', concurrency: 8 })
  .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
  .addSink(2)
  .build();
let images = 0;
for await (const batch of pipeline) {
  images += batch.count;
  batch.release();
}
console.log(`loaded ${images} images of ${classes.length} classes; ${pipeline.failures().length} failed`);
