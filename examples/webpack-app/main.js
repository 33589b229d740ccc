// Bundled by webpack: decodes one image and loads two batches of four from the images served next
// to the page (photo.jpg and images/0.jpg … 7.jpg).
import { DecodePool, ImageBatcher, PipelineBuilder } from 'tandem';

const out = document.getElementById('out');
const fetchBytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
try {
  const pool = await DecodePool.create({ threads: 2 }); // pthreads when cross-origin isolated, else workers
  const { pixels, info } = await pool.decode(await fetchBytes('photo.jpg'), { width: 224, height: 224, fit: 'cover' });

  const urls = Array.from({ length: 8 }, (_, i) => ({ url: `images/${i}.jpg`, label: i % 2 }));
  const batcher = new ImageBatcher(pool, { batchSize: 4, height: 224, width: 224, decode: { fit: 'cover' } });
  const pipeline = new PipelineBuilder()
    .addSource(urls)
    .pipe(async (item) => ({ bytes: await fetchBytes(item.url), label: item.label }), { name: 'fetch', concurrency: 8 })
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();
  const batches = [];
  for await (const batch of pipeline) {
    batches.push(batch.count);
    batch.release();
  }
  batcher.close();
  await pool.close();
  out.textContent = JSON.stringify({
    mode: pool.mode,
    format: info.format,
    pixels: pixels.length,
    batches,
    failed: pipeline.failures().length,
  });
  out.dataset.done = 'true';
} catch (error) {
  out.textContent = `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  out.dataset.done = 'error';
}
