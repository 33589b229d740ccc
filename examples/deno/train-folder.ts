// The README's snippet in Deno: `await using` closes the loader, the model and the GPU context.
//   deno run -A train-folder.ts   (photos/<class>/<image>.jpg beside it)
import { acquireGpu, loader } from 'npm:tandem';
import { presets, ViTTrainer } from 'npm:tandem/vit';

using gpu = await acquireGpu();
await using data = loader('photos', { batchSize: 32, size: 32, transform: 'random-crop', shuffle: true, epochs: 5, to: gpu });
const classes = await data.classes();
using vit = await ViTTrainer.create(gpu.device, { config: { ...presets.tiny, classes: classes.length }, batchSize: 32 });
for await (const batch of data) {
  const encoder = gpu.device.createCommandEncoder();
  vit.step(encoder, batch.images, batch.labelBuffer);
  gpu.device.queue.submit([encoder.finish()]);
  batch.release();
}
console.log(await vit.readLoss(), data.summary());
