// trainText(): a small language-model training session, shared by `tandem train --text`, the text
// demo page and the examples: a textLoader feeding i32 batches to a GptTrainer on one device, by
// steps or epochs, a fixed held-out set evaluated every `evalEvery` steps, checkpoints (model,
// optimizer, loader position, step) handed to the caller's writer, and resume from one.
import { OptionChecker } from '../errors/index.ts';
import { GptTrainer, gptPresets, type GptConfig } from '../gpt/index.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import type { TrainConfig } from '../vit/index.ts';
import { textLoader, type TextLoaderOptions, type TextSource } from '../text/index.ts';
import { decodeTextCheckpoint, encodeTextCheckpoint } from './text-checkpoint.ts';
import { HeldOutSet } from './text-held-out.ts';

/** The loader's options the session passes through (it sets seqLen, batchSize, epochs, to and resumeFrom itself). */
export type TextTrainingLoaderOptions = Omit<TextLoaderOptions, 'seqLen' | 'batchSize' | 'epochs' | 'to' | 'resumeFrom' | 'signal'>;

export interface TextTrainingOptions {
  source: TextSource;
  /** Documents never trained on, for the held-out loss and accuracy (read once; same loader options). */
  heldOut?: TextSource;
  /** Default `gptPresets.tiny`; its `context` is the loader's seqLen. */
  model?: GptConfig;
  batchSize?: number;
  /** Train this many steps (data repeats as needed). Without it, `epochs` passes (default 1). */
  steps?: number;
  epochs?: number;
  /** AdamW and the schedule; `totalSteps` defaults to `steps`. */
  train?: Partial<TrainConfig>;
  /** Weight init and the loader's shuffle (default 1). */
  seed?: number;
  loader?: TextTrainingLoaderOptions;
  /** Read the training loss back every N steps (default 10; each read waits for the GPU). */
  reportEvery?: number;
  /** Evaluate on `heldOut` before the first step and every N steps (default: only at the end). */
  evalEvery?: number;
  /** Held-out batches kept (default 8). */
  evalBatches?: number;
  /** Hand a checkpoint to `onCheckpoint` every N steps and after the last one. */
  checkpointEvery?: number;
  /** Writes the checkpoint (atomically: a kill mid-write must leave the previous one). */
  onCheckpoint?: (bytes: Uint8Array, step: number) => Promise<void>;
  /** A checkpoint of a run with the same model, source and packing. */
  resumeFrom?: Uint8Array;
  /** Default: a device of Tandem's own, closed by the result's close(). */
  gpu?: GpuContext | GPUDevice;
  onEvent?: (event: TextTrainingEvent) => void;
  signal?: AbortSignal;
}

export type TextTrainingEvent =
  | { type: 'start'; model: GptConfig; batchSize: number; steps: number | undefined; fromStep: number; parameters: number }
  /** Every step; `loss`/`accuracy` are the latest read back (NaN before the first). */
  | { type: 'step'; step: number; steps: number | undefined; loss: number; accuracy: number; tokensPerSecond: number; lr: number }
  | { type: 'eval'; step: number; loss: number; accuracy: number; tokens: number }
  | { type: 'checkpoint'; step: number };

export interface TextTrainingReport {
  steps: number;
  seconds: number;
  /** Positions trained on (padding excluded) by this run, and per second. */
  tokens: number;
  tokensPerSecond: number;
  /** Training loss of the first and the last report of this run. */
  firstLoss: number;
  lastLoss: number;
  losses: { step: number; loss: number; accuracy: number }[];
  heldOut: { loss: number; accuracy: number; tokens: number } | undefined;
  /** Padding's share of the positions of the rows trained on (the loader's packing() also counts rows packed ahead). */
  paddingShare: number;
  /** The loader's bottleneck: `name (reason)`. */
  bottleneck: string | undefined;
  /** The loader's stage table and packing line. */
  summary: string;
  failures: number;
  /** The documents that failed (the first the loader keeps): key, stage and reason. */
  failed: { key: string; stage: string; reason: string }[];
  /** Stopped through `signal` before its last step: no step, evaluation or checkpoint after the stop. */
  cancelled: boolean;
}

export interface TextTrainingResult extends Disposable {
  report: TextTrainingReport;
  /** The trained model, for `complete()`; valid until close(). */
  trainer: GptTrainer;
  device: GPUDevice;
  close(): void;
}

const WHERE = 'trainText options';
const KNOWN = [
  'source',
  'heldOut',
  'model',
  'batchSize',
  'steps',
  'epochs',
  'train',
  'seed',
  'loader',
  'reportEvery',
  'evalEvery',
  'evalBatches',
  'checkpointEvery',
  'onCheckpoint',
  'resumeFrom',
  'gpu',
  'onEvent',
  'signal',
] as const;

export async function trainText(options: TextTrainingOptions): Promise<TextTrainingResult> {
  const o = new OptionChecker(WHERE, options, KNOWN);
  if (typeof options.source !== 'object' && typeof options.source !== 'string') o.fail('source', 'a text source (textLoader)');
  const config = options.model ?? gptPresets.tiny;
  const batchSize = o.integer('batchSize', 8, 1, 65536);
  const steps = o.optionalInteger('steps', 1);
  const epochs = o.integer('epochs', 1, 1);
  const seed = o.integer('seed', 1, 0, 0x7fffffff);
  const reportEvery = o.integer('reportEvery', 10, 1);
  const evalEvery = o.optionalInteger('evalEvery', 1);
  const evalBatches = o.integer('evalBatches', 8, 1, 4096);
  const checkpointEvery = o.optionalInteger('checkpointEvery', 1);
  if (checkpointEvery !== undefined && typeof options.onCheckpoint !== 'function')
    o.fail('onCheckpoint', 'a function (checkpointEvery is set)');
  if (options.resumeFrom !== undefined && !(options.resumeFrom instanceof Uint8Array)) o.fail('resumeFrom', 'the bytes of a checkpoint');
  // Every id is checked against the model's vocabulary where the loader makes the document, so an
  // id the embedding has no row for is a typed failure of that document (TextError
  // 'token-out-of-range'), never a batch on the GPU.
  const vocabSize = options.loader?.vocabSize ?? config.vocabSize;
  if (vocabSize > config.vocabSize)
    o.fail('loader', `a vocabSize of at most the model's ${config.vocabSize} (loader.vocabSize is ${vocabSize})`);
  const resumed = options.resumeFrom ? decodeTextCheckpoint(options.resumeFrom) : undefined;
  const emit = options.onEvent ?? (() => {});
  const signal = o.signal();
  const stopped = () => signal?.aborted === true;

  const given = options.gpu;
  const gpu = given === undefined ? await acquireGpu() : 'queue' in given ? await acquireGpu({ device: given }) : given;
  const closeGpu = () => {
    if (gpu !== given) gpu.close();
  };
  const device = gpu.device;
  let trainer: GptTrainer | undefined;
  try {
    const train = { totalSteps: steps ?? 1000, ...options.train };
    trainer = await GptTrainer.create(device, { config, batchSize, train, seed });
    if (resumed) trainer.loadCheckpoint(resumed.model);
    const loaderOptions = { ...options.loader, vocabSize, seqLen: config.context, batchSize, seed: options.loader?.seed ?? seed };
    const heldOut = options.heldOut
      ? await HeldOutSet.read(device, textLoader(options.heldOut, { ...loaderOptions, shuffle: false, epochs: 1 }), evalBatches)
      : undefined;
    const loader = textLoader(options.source, {
      ...loaderOptions,
      // By steps the data repeats until they are done.
      epochs: steps === undefined ? epochs : 1 << 20,
      to: gpu,
      ...(resumed ? { resumeFrom: resumed.header.loader } : {}),
      ...(signal ? { signal } : {}),
    });
    const fromStep = resumed?.header.step ?? 0;
    emit({ type: 'start', model: config, batchSize, steps, fromStep, parameters: trainer.layout.size });
    const losses: TextTrainingReport['losses'] = [];
    let evaluation: TextTrainingReport['heldOut'];
    let [step, tokens, padding, loss, accuracy, lr] = [fromStep, 0, 0, NaN, NaN, 0];
    const started = performance.now();
    const evaluate = async () => {
      if (!heldOut || !trainer || stopped()) return;
      evaluation = await loader.waitFor(heldOut.evaluate(trainer));
      emit({ type: 'eval', step, ...evaluation });
    };
    const checkpoint = async () => {
      if (!options.onCheckpoint || !trainer || stopped()) return;
      const bytes = encodeTextCheckpoint(step, (resumed?.header.tokens ?? 0) + tokens, loader.state(), await trainer.saveCheckpoint());
      await options.onCheckpoint(bytes, step);
      emit({ type: 'checkpoint', step });
    };
    try {
      // The starting point of the held-out curve (a fresh model: about ln vocabSize).
      if (evalEvery !== undefined) await evaluate();
      if (!stopped() && (steps === undefined || step < steps))
        for await (const batch of loader) {
          const encoder = device.createCommandEncoder();
          trainer.step(encoder, batch);
          device.queue.submit([encoder.finish()]);
          batch.release();
          step++;
          tokens += batch.count * config.context - batch.padding;
          padding += batch.padding;
          const last = step === steps;
          if (step % reportEvery === 0 || last) {
            const r = await loader.waitFor(trainer.readLoss());
            [loss, accuracy, lr] = [r.loss, r.accuracy, r.lr];
            losses.push({ step, loss, accuracy });
          }
          const seconds = (performance.now() - started) / 1000;
          emit({ type: 'step', step, steps, loss, accuracy, tokensPerSecond: tokens / Math.max(seconds, 1e-9), lr });
          if (stopped()) break;
          if (evalEvery !== undefined && step % evalEvery === 0 && !last) await evaluate();
          if (checkpointEvery !== undefined && step % checkpointEvery === 0 && !last) await checkpoint();
          if (last) break;
        }
      if (losses.at(-1)?.step !== step && step > fromStep) {
        // An epoch-bounded run whose last step fell between reports.
        const r = await trainer.readLoss();
        [loss, accuracy] = [r.loss, r.accuracy];
        losses.push({ step, loss, accuracy });
      }
      await evaluate();
      await checkpoint();
      const seconds = (performance.now() - started) / 1000;
      const b = loader.bottleneck();
      const report: TextTrainingReport = {
        steps: step,
        seconds,
        tokens,
        tokensPerSecond: tokens / Math.max(seconds, 1e-9),
        firstLoss: losses[0]?.loss ?? NaN,
        lastLoss: losses.at(-1)?.loss ?? NaN,
        losses,
        heldOut: evaluation,
        paddingShare: tokens + padding === 0 ? 0 : padding / (tokens + padding),
        bottleneck: b ? `${b.name} (${b.reason})` : undefined,
        summary: loader.summary(),
        failures: loader.failureCount(),
        failed: loader.failures().map((f) => ({ key: f.key, stage: f.stage, reason: f.error.message })),
        cancelled: stopped() && (steps === undefined || step < steps),
      };
      const kept = trainer;
      const close = () => {
        kept.close();
        closeGpu();
      };
      return { report, trainer: kept, device, close, [Symbol.dispose]: close };
    } finally {
      await loader.close();
      heldOut?.close();
    }
  } catch (error) {
    trainer?.close();
    closeGpu();
    throw error;
  }
}
