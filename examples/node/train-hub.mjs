// The tiny ViT trained from a dataset on the Hugging Face Hub, in a Node 20 script (plain JavaScript):
//   node train-hub.mjs [owner/name] [split] [steps]     (npm install webgpu)
// The rows come from the Hub's Parquet conversion by HTTP Range requests, one row group at a time;
// nothing is downloaded first. HF_ENDPOINT points at a mirror (default: the Hub); HF_TOKEN is sent
// for gated or private datasets.
import { acquireGpu, loader } from 'tandem';
import { presets, ViTTrainer } from 'tandem/vit';

const [name = process.env.HF_DATASET ?? 'uoft-cs/cifar10', split = process.env.HF_SPLIT ?? 'train', most = '200'] = process.argv.slice(2);
console.log(`${name} (${split}) from ${process.env.HF_ENDPOINT ?? 'the Hub'}`);
const gpu = await acquireGpu();
const data = loader({ hf: name, split }, { batchSize: 32, size: 32, transform: 'random-crop', shuffle: true, epochs: 1, to: gpu });
let vit;
try {
  const classes = await data.classes(); // the ClassLabel's names, from the Parquet files' metadata
  vit = await ViTTrainer.create(gpu.device, { config: { ...presets.tiny, classes: classes.length }, batchSize: 32 });
  let steps = 0;
  let rows = 0;
  for await (const batch of data) {
    const encoder = gpu.device.createCommandEncoder();
    vit.step(encoder, batch.images, batch.labelBuffer);
    gpu.device.queue.submit([encoder.finish()]);
    rows += batch.count;
    batch.release();
    if (++steps === Number(most)) break;
  }
  if (rows === 0) throw new Error(`${name} (${split}): no rows were loaded`);
  console.log(`classes: ${classes.join(', ')}`);
  const { loss, samples } = await vit.readLoss(); // over every labelled row trained on
  console.log(`${steps} steps, ${rows} rows, ${samples} labelled; ${data.failures().length} failed; loss: ${loss.toFixed(4)}`);
  console.log(data.summary());
} finally {
  await data.close();
  vit?.close();
  gpu.close();
}
