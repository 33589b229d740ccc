import { acquireGpu, loader } from 'tandem';
import { presets, ViTTrainer } from 'tandem/vit';
const gpu = await acquireGpu();                                    // Node: npm install webgpu
const data = loader('photos', { batchSize: 32, size: 32, transform: 'random-crop', shuffle: true, epochs: 5, to: gpu });
const classes = await data.classes();                              // photos/<class>/<image>.jpg
const vit = await ViTTrainer.create(gpu.device, { config: { ...presets.tiny, classes: classes.length }, batchSize: 32 });
try {
  for await (const batch of data) {                                // normalised f32 NCHW in a ring of GPU buffers
    const encoder = gpu.device.createCommandEncoder();
    vit.step(encoder, batch.images, batch.labelBuffer);
    gpu.device.queue.submit([encoder.finish()]);
    batch.release();                                               // the buffer may be refilled
  }
  console.log(await vit.readLoss(), data.summary());
} finally { await data.close(); vit.close(); gpu.close(); }
