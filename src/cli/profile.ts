// `tandem profile`: each loader stage alone, over a sample of real inputs, at several
// concurrencies (SPDL's profile_pipeline), then the whole loader for comparison. Unlike
// profilePipeline (src/pipeline/profile.ts), which collects a stage's outputs, each run here ends
// in a sink that consumes and releases them at once: the batcher's buffers and the upload ring's
// slots are freed only downstream, so holding them would stall the stage being measured.
import { DecodePool, type ImageBatch, type SlotToken } from '../decode/index.ts';
import { acquireGpu, type GpuBatch, type HostBatch } from '../gpu/index.ts';
import { formatSplit, PipelineBuilder, PipelineFailureBudgetError, type StageContext, type TimeSplit } from '../pipeline/index.ts';
import { loader } from '../loader/index.ts';
import { loaderStages, type LabelledSource } from '../train/index.ts';
import { folderData, resolveDataFolder } from './files.ts';

export interface ProfileOptions {
  data?: string;
  images: number;
  batchSize: number;
  imageSize: number;
  threads: number;
  concurrencies: number[];
  log: (line: string) => void;
}

export interface StageRun {
  concurrency: number;
  itemsPerSecond: number;
  imagesPerSecond: number;
  /** Where the stage's time went in this run: working, starved, blocked on output, waiting for a pooled resource. */
  time?: TimeSplit;
}
export interface StageProfileResult {
  stage: string;
  runs: StageRun[];
  recommended: number;
}

async function timeStage<I, O>(
  inputs: readonly I[],
  task: (x: I, ctx: StageContext) => Promise<O> | AsyncGenerator<O>,
  concurrency: number,
  sink: (out: O) => void,
  name: string,
): Promise<{ seconds: number; time: TimeSplit }> {
  const p = new PipelineBuilder<I>()
    .addSource(inputs)
    .pipe(task as (x: I, ctx: StageContext) => Promise<O>, { name, concurrency })
    .addSink(4)
    .build();
  const t0 = performance.now();
  for await (const out of p) sink(out);
  const seconds = (performance.now() - t0) / 1000;
  const failed = p.failures();
  if (failed.length) {
    // A profile times whole runs: one lost item makes the run's figure wrong, so none is allowed.
    throw new PipelineFailureBudgetError(`profile ${name}: none`, [{ stage: name, failures: failed.length, firstError: failed[0]!.error }]);
  }
  return { seconds, time: p.stats().stages[1]!.time };
}

function summarize(stage: string, runs: StageRun[]): StageProfileResult {
  const best = Math.max(...runs.map((r) => r.imagesPerSecond));
  return { stage, runs, recommended: runs.find((r) => r.imagesPerSecond >= 0.95 * best)?.concurrency ?? 1 };
}

export async function runProfile(o: ProfileOptions): Promise<StageProfileResult[]> {
  const data = await folderData(await resolveDataFolder(o.data, o.images, o.log));
  const sample: LabelledSource[] = [...data.train, ...data.held].slice(0, o.images);
  const gpu = await acquireGpu();
  const pool = await DecodePool.create({ threads: o.threads });
  const stages = loaderStages(pool, gpu.device, o);
  const results: StageProfileResult[] = [];
  const B = o.batchSize;
  try {
    o.log(
      `profile: ${sample.length} images, batch ${B} × ${o.imageSize}², ${pool.threads} decode threads (${pool.stats().mode}); ${gpu.runtime}`,
    );
    let runs: StageRun[] = [];
    let encoded: { bytes: Uint8Array; label: number; key: string }[] = [];
    for (const c of o.concurrencies) {
      const out: typeof encoded = [];
      const { seconds: s, time } = await timeStage(sample, stages.read, c, (x) => out.push(x), 'read');
      runs.push({ concurrency: c, itemsPerSecond: sample.length / s, imagesPerSecond: sample.length / s, time });
      encoded = out;
    }
    results.push(summarize('read', runs));
    runs = [];
    for (const c of o.concurrencies.map((k) => k * pool.threads)) {
      const aggregator = stages.batcher.aggregator();
      const release = (b: ImageBatch | undefined) => b?.release();
      const { seconds: s, time } = await timeStage(
        encoded,
        stages.batcher.decodeStage,
        c,
        (t: SlotToken) => release(aggregator.push(t)),
        'decode',
      );
      release(aggregator.flush());
      runs.push({ concurrency: c, itemsPerSecond: encoded.length / s, imagesPerSecond: encoded.length / s, time });
    }
    results.push(summarize('decode (+batch)', runs));
    runs = [];
    const host = hostBatches(Math.ceil(sample.length / B), B, stages.batcher.batchBytes, o.imageSize);
    for (const c of o.concurrencies) {
      const { seconds: s, time } = await timeStage(
        host,
        (b: HostBatch, ctx) => stages.uploader.upload(b, ctx.signal, ctx),
        c,
        (g: GpuBatch) => g.release(),
        'upload',
      );
      await gpu.device.queue.onSubmittedWorkDone();
      runs.push({ concurrency: c, itemsPerSecond: host.length / s, imagesPerSecond: (host.length * B) / s, time });
    }
    results.push(summarize('upload', runs));
    for (const r of results) {
      o.log(
        `  ${r.stage.padEnd(16)} ${r.runs.map((x) => `c=${x.concurrency}: ${x.imagesPerSecond.toFixed(0)} img/s`).join('  ')}  → recommended concurrency ${r.recommended}`,
      );
      for (const x of r.runs) if (x.time) o.log(`  ${''.padEnd(16)}   c=${x.concurrency}: ${formatSplit(x.time)}`);
    }
    const data = loader(sample, { to: gpu.device, normalize: false, pool, batchSize: B, size: o.imageSize, failureBudget: {} });
    const t0 = performance.now();
    let images = 0;
    for await (const batch of data) {
      images += batch.count;
      batch.release();
    }
    await gpu.device.queue.onSubmittedWorkDone();
    const whole = images / ((performance.now() - t0) / 1000);
    o.log(
      `  whole loader     ${whole.toFixed(0)} img/s (each stage: work, starved = waiting for input, blocked = on output, resource = waiting for a batch buffer or GPU slot)`,
    );
    o.log(`  ${data.summary()}`);
    await data.close();
    results.push({ stage: 'whole loader', runs: [{ concurrency: 0, itemsPerSecond: whole, imagesPerSecond: whole }], recommended: 0 });
  } finally {
    await stages.close();
    await pool.close();
    gpu.close();
  }
  return results;
}

/** Plain host batches of the loader's shape (bytes already decoded), to time uploads alone. */
function hostBatches(n: number, batchSize: number, bytes: number, size: number): HostBatch[] {
  const data = new Uint8Array(bytes).map((_, i) => i & 255);
  const labels = new Int32Array(batchSize);
  return Array.from({ length: n }, (_, sequence) => ({
    sequence,
    count: batchSize,
    shape: [batchSize, size, size, 3] as const,
    data,
    labels,
    release() {},
  }));
}
