// Embeddings for a folder of images with ONNX Runtime Web (wasm execution provider), fed by
// Tandem's loader: node embed.mjs model.onnx images/   (images/<class>/*.jpg)
import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-web';
import { DecodePool, ImageBatcher, PipelineBuilder, listImageFolder } from 'tandem';
import { OnnxFeeder } from 'tandem/onnx';

const [modelPath = 'model.onnx', folder = 'images'] = process.argv.slice(2);
const session = await ort.InferenceSession.create(await readFile(modelPath), { executionProviders: ['wasm'] });
const pool = await DecodePool.create({ threads: 2 });
try {
  const { files } = await listImageFolder(folder);
  const batcher = new ImageBatcher(pool, { batchSize: 4, height: 32, width: 32, decode: { fit: 'cover' } });
  const feeder = await OnnxFeeder.create(ort, { batchSize: 4, height: 32, width: 32 }); // NCHW float32, ImageNet mean/std
  const pipeline = new PipelineBuilder()
    .addSource(files)
    .pipe(async (file) => ({ bytes: await readFile(file.path), label: file.label, key: file.path }), { name: 'read', concurrency: 8 })
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();
  const embeddings = new Map();
  for await (const batch of pipeline) {
    const fed = await feeder.tensors(batch); // the batch goes back to the batcher
    const { embedding } = await session.run({ [session.inputNames[0]]: fed.input });
    const width = embedding.dims[1];
    const values = await embedding.getData();
    for (const [i, key] of fed.keys.entries()) embeddings.set(key, Array.from(values.subarray(i * width, (i + 1) * width)));
    fed.dispose();
  }
  console.log(
    `embedded ${embeddings.size} images, ${[...embeddings.values()][0]?.length} values each; ${pipeline.failures().length} failed`,
  );
} finally {
  await pool.close();
  await session.release();
}
