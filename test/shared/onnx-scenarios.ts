// ONNX Runtime Web fed by Tandem, against the same session run on tensors built by hand from the
// same pixels. The model is written by test/shared/onnx-model.ts from a seed.
import * as ort from 'onnxruntime-web';
import { acquireGpu, FeedError, GpuError } from '../../src/gpu/index.ts';
import { normalizeByHand } from './normalize-by-hand.ts';
import { OnnxFeeder } from '../../src/onnx/index.ts';
import { check, maxAbsDiff, rejectsWith } from './assert.ts';
import { countReadbacks, describeReadbacks } from './readbacks.ts';
import { embeddingModel } from './onnx-model.ts';
import { hostBatch } from './tfjs-scenarios.ts';
import { checkBatchEnds } from './batch-ends.ts';

const SHAPE = { batchSize: 4, height: 6, width: 5, channels: 3 } as const;
const MEAN = [0.45, 0.45, 0.4];
const STD = [0.25, 0.25, 0.3];

function handBuilt(batch: ReturnType<typeof hostBatch>, runtime: typeof ort = ort): ort.Tensor {
  const n = batch.count;
  const values = normalizeByHand(batch.data.subarray(0, n * 90), { images: n, height: 6, width: 5, channels: 3 }, { mean: MEAN, std: STD });
  return new runtime.Tensor('float32', values, [n, 3, 6, 5]);
}

async function outputs(session: ort.InferenceSession, input: ort.Tensor): Promise<{ embedding: Float32Array; logits: Float32Array }> {
  const r = await session.run({ pixels: input });
  const embedding = (await r.embedding!.getData()) as Float32Array;
  const logits = (await r.logits!.getData()) as Float32Array;
  return { embedding: embedding.slice(), logits: logits.slice() };
}

/** The wasm execution provider on CPU tensors from the feeder: equal to hand-built tensors, bit for bit. */
export async function wasmSessionMatchesHandBuiltTensors(): Promise<void> {
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(embeddingModel(1, 6, 5), { executionProviders: ['wasm'] });
  const feeder = await OnnxFeeder.create(ort, { ...SHAPE, mean: MEAN, std: STD });
  check(feeder.path === 'cpu', `path ${feeder.path}`);
  for (const count of [4, 2]) {
    const batch = hostBatch(count, count, 11 * count);
    const want = await outputs(session, handBuilt(batch));
    const fed = await feeder.tensors(batch);
    check(batch.releases === 1, 'released');
    check(fed.input.dims.join() === `${count},3,6,5`, `dims ${fed.input.dims}`);
    const got = await outputs(session, fed.input);
    checkBatchEnds('OnnxBatch', fed, (b) => b.input);
    check(got.embedding.length === count * 8 && got.logits.length === count * 4, 'output sizes');
    check(maxAbsDiff(got.embedding, want.embedding) === 0 && maxAbsDiff(got.logits, want.logits) === 0, 'outputs equal the hand-built run');
    check(new Set(got.logits).size > 1, 'the model computes something');
  }
  await feeder.close();
  await session.release();
}

/**
 * The WebGPU execution provider on ONNX Runtime's own device, adopted by Tandem: inputs made on
 * the GPU with no readback, outputs within float tolerance of the hand-built CPU tensors; a
 * buffer lent to a tensor is refilled only after the tensor is disposed.
 */
export async function webgpuSessionMatchesHandBuiltTensors(ortModule: typeof ort = ort): Promise<void> {
  const ort = ortModule;
  const session = await ort.InferenceSession.create(embeddingModel(1, 6, 5), { executionProviders: ['webgpu'] });
  const device = await ort.env.webgpu.device;
  const feeder = await OnnxFeeder.create(ort, { ...SHAPE, mean: MEAN, std: STD, location: 'webgpu', slots: 2 });
  check(feeder.path === 'webgpu', `path ${feeder.path}`);
  const batches = [hostBatch(0, 4, 3), hostBatch(1, 4, 4), hostBatch(2, 3, 5)];
  const wants = [];
  for (const b of batches) wants.push(await outputs(session, handBuilt(b, ort)));
  const counted = await countReadbacks(async () => [await feeder.tensors(batches[0]!), await feeder.tensors(batches[1]!)], { ort });
  const first = counted.result;
  check(counted.readbacks === 0, `${describeReadbacks(counted)} readbacks while making GPU inputs`);
  check(first[0]!.input.location === 'gpu-buffer', `input location ${first[0]!.input.location}`);
  // Both buffers are lent: the third batch waits until a tensor is disposed.
  let third: Awaited<ReturnType<OnnxFeeder['tensors']>> | undefined;
  const pending = feeder.tensors(batches[2]!).then((t) => {
    third = t;
    return t;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  check(third === undefined, 'a third batch does not overwrite a buffer still lent to a tensor');
  const got0 = await outputs(session, first[0]!.input);
  first[0]!.dispose();
  await pending;
  const got1 = await outputs(session, first[1]!.input);
  const got2 = await outputs(session, third!.input);
  for (const [i, got] of [got0, got1, got2].entries()) {
    const e = Math.max(maxAbsDiff(got.embedding, wants[i]!.embedding), maxAbsDiff(got.logits, wants[i]!.logits));
    check(e < 1e-4, `batch ${i}: WebGPU outputs differ from the hand-built CPU tensors by ${e}`);
  }
  first[1]!.dispose();
  third!.dispose();
  const other = await acquireGpu();
  try {
    await rejectsWith(
      OnnxFeeder.create(ort, { ...SHAPE, location: 'webgpu', gpu: other }),
      (e) => e instanceof GpuError && e.code === 'device-mismatch',
      "a GpuContext that is not ONNX Runtime's device",
    );
  } finally {
    other.close();
  }
  await feeder.close();
  await rejectsWith(feeder.tensors(hostBatch(3, 4, 1)), (e) => e instanceof FeedError && e.code === 'closed', 'closed');
  // The counter's control for ONNX Runtime: an output kept on the GPU and downloaded with getData.
  const onGpu = await ort.InferenceSession.create(embeddingModel(1, 6, 5), {
    executionProviders: ['webgpu'],
    preferredOutputLocation: 'gpu-buffer',
  });
  const result = await onGpu.run({ pixels: handBuilt(hostBatch(0, 4, 3), ort) });
  const download = await countReadbacks(() => result.logits!.getData(), { ort });
  check(
    download.kinds['ort-read'] === 1 && download.kinds['map-read'] >= 1,
    `getData of a GPU output counted ${describeReadbacks(download)}`,
  );
  const e = maxAbsDiff(download.result as Float32Array, wants[0]!.logits);
  check(e < 1e-4, `the downloaded logits differ from the CPU tensors' by ${e}`);
  for (const t of Object.values(result)) t.dispose();
  await onGpu.release();
  await session.release();
  check(device === (await ort.env.webgpu.device), 'one device throughout');
}

/**
 * The ONNX Runtime Web scenarios by title: every runtime registers them from here. `webgpu` is the
 * package module whose WebGPU provider to use, or undefined where it cannot run (Node's dawn).
 */
export function onnxScenarios(webgpu: typeof ort | undefined): Record<string, () => Promise<void>> {
  return {
    'onnx: the wasm session on feeder tensors equals hand-built tensors': wasmSessionMatchesHandBuiltTensors,
    ...(webgpu
      ? {
          'onnx: the WebGPU session on its own device, fed GPU buffers by Tandem, matches hand-built tensors with no readback': () =>
            webgpuSessionMatchesHandBuiltTensors(webgpu),
        }
      : {}),
  };
}
