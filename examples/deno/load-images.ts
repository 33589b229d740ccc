// Tandem in a Deno script, from npm. Run from a folder holding photo.jpg and images/<class>/*.jpg:
//   deno run --allow-read load-images.ts
import { DecodePool, loader } from 'npm:tandem';

{
  await using pool = await DecodePool.create({ threads: 2 });
  const { pixels, info } = await pool.decode(await Deno.readFile('photo.jpg'), { width: 224, height: 224, fit: 'cover' });
  console.log(`photo.jpg: ${info.format} ${info.sourceWidth}x${info.sourceHeight} -> ${pixels.length} bytes of RGB`);
}

await using data = loader('images', { batchSize: 4, size: 224 });
let images = 0;
for await (const batch of data) {
  images += batch.count;
  batch.release();
}
console.log(`loaded ${images} images of ${(await data.classes()).length} classes; ${data.failures().length} failed`);
