// Decodes one image, loads two batches and trains the tiny ViT for an epoch in the browser. The
// images are served by the app (public/photo.jpg and public/images/0.jpg … 7.jpg). Then text:
// documents tokenised by @huggingface/tokenizers in a worker (bundled by Vite with the app) and
// packed into rows of 32 tokens. Last, a Parquet file of the Hub's layout (public/shapes.parquet)
// read row group by row group through the loader.
import { DecodePool, ImageBatcher, loader, PipelineBuilder } from 'tandem';
import { textLoader } from 'tandem/text';
import { corpusDocuments, corpusIds, corpusTokenizerJson, defaultTrainingOptions, runTraining, syntheticData } from 'tandem/train';

const out = document.getElementById('out');
try {
  const pool = await DecodePool.create({ threads: 2 }); // pthreads when cross-origin isolated, else workers
  const fetchBytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());

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
  await pool.close();

  // The tiny Vision Transformer on the built-in labelled shapes, trained in WGSL through the loader.
  const data = await syntheticData({ count: 48 });
  const report = await runTraining(data, { ...defaultTrainingOptions, epochs: 1, batchSize: 16 });
  const trained = { steps: report.steps, lossFinite: report.epochs.every((e) => Number.isFinite(e.trainLoss)) };

  const texts = corpusDocuments(3, 12);
  const text = textLoader({ texts }, { seqLen: 32, batchSize: 4, tokenizer: { json: corpusTokenizerJson() }, tokenizerWorkers: 1 });
  const tokens = [];
  for await (const batch of text) {
    // Every position of a document (the last row may end in padding, docId −1).
    for (let t = 0; t < batch.count * 32; t++) if (batch.docIds[t] >= 0) tokens.push(batch.inputs[t]);
    batch.release();
  }
  await text.close();
  // 'concat' rows hold the documents' ids end to end, as the corpus' own encoder gives them (no BOS or
  // EOS asked for); only a last lone token, already a label, is no row's input.
  const expected = texts.flatMap((t) => [...corpusIds(t)]);
  const sameIds = expected.length - tokens.length <= 1 && tokens.every((id, i) => id === expected[i]);
  const tokenised = { tokens: tokens.length > 0 ? 'some' : 'none', sameIds };

  // The Parquet reader is imported on first use; tandem() has Vite pre-bundle it, so this does not
  // make Vite re-optimise and reload the page half-way through.
  const shapes = loader({ parquet: [new URL('shapes.parquet', location.href).href] }, { batchSize: 8, size: 32, threads: 2 });
  let parquetRows = 0;
  for await (const batch of shapes) {
    parquetRows += batch.count;
    batch.release();
  }
  const parquet = { rows: parquetRows, classes: await shapes.classes(), failed: shapes.failures().length };
  await shapes.close();

  const result = {
    mode: pool.mode,
    format: info.format,
    pixels: pixels.length,
    batches,
    failed: pipeline.failures().length,
    trained,
    tokenised,
    parquet,
  };
  out.textContent = JSON.stringify(result);
  out.dataset.done = 'true';
} catch (error) {
  out.textContent = `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  out.dataset.done = 'error';
}
