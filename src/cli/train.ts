// `tandem train`: the training session (src/train) over files on disk, with a live progress bar on
// a terminal (plain lines otherwise), one line per epoch, the loader's per-stage summary, and the
// reports (JSON and a self-contained HTML page) written by main.ts.
import { formatStats } from '../pipeline/index.ts';
import { env, readFile, writeFileAtomic } from '../runtime/index.ts';
import { loadParquetShards, type ParquetShards } from '../loader/internal.ts';
import {
  decodeTrainingCheckpoint,
  defaultTrainingOptions,
  parquetData,
  runTraining,
  type LabelledData,
  type EpochEvent,
  type StepEvent,
  type TrainingEvent,
  type TrainingOptions,
  type TrainReport,
} from '../train/index.ts';
import { loadTimmWeights, saveTimmWeights, type TimmWeights } from '../vit/index.ts';
import { UsageError } from './args.ts';
import { folderData, resolveDataFolder, shardsData } from './files.ts';
import { bar, duration, type Terminal } from './terminal.ts';

export type { EpochRecord, TrainReport } from '../train/index.ts';

/** The session's options the command line sets, plus where the data comes from and where output goes. */
export interface TrainOptions extends Pick<TrainingOptions, 'epochs' | 'batchSize' | 'threads' | 'seed' | 'lr' | 'augment'> {
  data?: string;
  /** Directory or URL of tar shards with a shards.json (written by `tandem shards`), streamed. */
  shards?: string;
  /** Parquet files (paths or URLs) with an Image column and a label column, streamed by row group. */
  parquet?: readonly string[];
  /** A Hub dataset, `owner/name` with its split ($HF_ENDPOINT and $HF_TOKEN apply), streamed by row group. */
  hf?: { name: string; split: string };
  /** How many images to generate when no data is given. */
  images: number;
  /**
   * Write training checkpoints here (model, optimizer, step and data position), atomically, every
   * `checkpointEvery` steps (default: once per epoch) and after the last step.
   */
  checkpoint?: string;
  checkpointEvery?: number;
  /** Continue from this training checkpoint. */
  resume?: string;
  /** Called after each step with the keys it trained on (the kill tests log them). */
  onStepKeys?: (step: number, keys: readonly string[]) => void;
  /** Start from these timm-layout ViT weights (safetensors); the model takes their shape. */
  weights?: string;
  /** Write the trained weights here in timm's layout (safetensors). */
  saveWeights?: string;
  log: (line: string) => void;
  /** A terminal for the live progress bar; without one, progress is the epoch lines only. */
  terminal?: Terminal;
}

export function defaultTrainOptions(log: (line: string) => void): TrainOptions {
  // 8192 generated images: with 1024 the model memorised (45.6% held-out, docs/vit.md).
  const { epochs, batchSize, threads, seed, lr, augment } = defaultTrainingOptions;
  return { images: 8192, epochs, batchSize, threads, seed, lr, augment, log };
}

export async function runTrain(o: TrainOptions): Promise<TrainReport> {
  const parquet = o.parquet || o.hf ? await openParquetTraining(o) : undefined;
  try {
    return await trainOn(o, parquet ? parquetData(parquet) : undefined);
  } finally {
    await parquet?.close();
  }
}

async function openParquetTraining(o: TrainOptions): Promise<ParquetShards> {
  const open = await loadParquetShards();
  const source = o.hf ? { hf: o.hf.name, split: o.hf.split } : { parquet: o.parquet ?? [] };
  const parquet = await open(source, 'image', {}, 'tandem train');
  o.log(
    `parquet: ${parquet.shards.length} row groups, ${parquet.rows.reduce((a, b) => a + b, 0)} rows, columns ${parquet.columns.data} and ${parquet.columns.label ?? '(no label)'}`,
  );
  return parquet;
}

async function trainOn(o: TrainOptions, streamed: LabelledData | undefined): Promise<TrainReport> {
  const where = o.hf ? `${o.hf.name} (${o.hf.split})` : (o.parquet ?? []).join(', ');
  const data = streamed
    ? { ...streamed, root: where }
    : o.shards
      ? await shardsData(o.shards)
      : await folderData(await resolveDataFolder(o.data, o.images, o.log));
  const start = o.weights ? await startingWeights(o.weights, data.classes.length, o.seed, o.log) : undefined;
  const resume = o.resume ? await readArgumentFile('--resume', o.resume) : undefined;
  // A resumed run is the checkpoint's model, whatever it started from.
  const resumedState = resume ? decodeTrainingCheckpoint(resume).state : undefined;
  const resumedModel = resumedState?.model;
  if (resumedState) o.log(`resuming from ${o.resume} at step ${resumedState.step}`);
  let epochs = o.epochs;
  let lastStep = -1;
  const checkpointPath = o.checkpoint;
  const onEvent = (e: TrainingEvent) => {
    if (e.type === 'start') {
      epochs = e.epochs;
      lastStep = e.steps;
      const m = e.model;
      o.log(`GPU: ${e.adapter}; decode: ${e.decodeMode}, ${o.threads} threads`);
      o.log(
        `data: ${e.train} train / ${e.validation} held-out images, ${e.classes.length} classes (${e.classes.join(', ')}); ${data.root}`,
      );
      o.log(
        `model: ViT ${m.imageSize}px patch ${m.patchSize} width ${m.width} depth ${m.depth} heads ${m.heads}; ${e.epochs} epochs, ${e.steps} steps of ${e.batchSize}`,
      );
    } else if (e.type === 'step') o.terminal?.status(stepLine(e, epochs));
    else if (e.type === 'epoch') o.log(epochLine(e));
  };
  const report = await runTraining(
    data,
    {
      epochs: o.epochs,
      batchSize: o.batchSize,
      threads: o.threads,
      seed: o.seed,
      lr: o.lr,
      augment: o.augment,
      ...(start ? { model: start.config, initialParams: start.params } : {}),
      ...(resumedModel && !start ? { model: resumedModel } : {}),
      ...(resume ? { resumeFrom: resume } : {}),
      ...(checkpointPath
        ? {
            // Written to a temporary file, then renamed: a kill mid-write leaves the previous one.
            checkpointEvery: o.checkpointEvery ?? Math.ceil((data.stream?.count ?? data.train.length) / o.batchSize),
            onCheckpoint: async (bytes: Uint8Array, step: number) => {
              // The kill tests set TANDEM_TEST_SLOW_CHECKPOINT_MS to kill `tandem train` mid-write.
              await writeFileAtomic(checkpointPath, bytes, Number(env('TANDEM_TEST_SLOW_CHECKPOINT_MS') ?? 0));
              if (step === lastStep) o.log(`checkpoint: ${checkpointPath} (step ${step})`);
            },
          }
        : {}),
      ...(o.onStepKeys ? { onStepKeys: o.onStepKeys } : {}),
      reportEvery: 2,
      onTrained: async (trainer) => {
        if (o.saveWeights) {
          await writeFileAtomic(o.saveWeights, saveTimmWeights(trainer.config, await trainer.readParams()));
          o.log(`weights (timm layout): ${o.saveWeights}`);
        }
      },
    },
    onEvent,
  );
  o.terminal?.done();
  if (report.loaderStats) o.log(formatStats(report.loaderStats));
  return report;
}

async function readArgumentFile(flag: string, path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function startingWeights(path: string, classes: number, seed: number, log: (line: string) => void): Promise<TimmWeights> {
  const bytes = await readArgumentFile('--weights', path);
  const loaded = loadTimmWeights(bytes, { classes, seed });
  const c = loaded.config;
  log(
    `weights: ${path} (ViT ${c.imageSize}px patch ${c.patchSize} width ${c.width} depth ${c.depth}; ` +
      `${loaded.headReplaced ? `new head for ${classes} classes` : 'its own head'})`,
  );
  return loaded;
}

function stepLine(e: StepEvent, epochs: number): string {
  return (
    `${bar(e.step / e.steps)} epoch ${Math.min(epochs, Math.floor(e.epoch) + 1)}/${epochs} step ${e.step}/${e.steps} ` +
    `${e.imagesPerSecond.toFixed(0)} img/s loss ${e.loss.toFixed(3)} acc ${(e.accuracy * 100).toFixed(1)}% ${duration(e.secondsLeft)} left`
  );
}

function epochLine(e: EpochEvent): string {
  return (
    `${bar(e.step / e.steps)} epoch ${e.epoch}/${e.epochs} step ${e.step}/${e.steps} ` +
    `loss ${e.trainLoss.toFixed(3)} acc ${(e.trainAccuracy * 100).toFixed(1)}% ${Number.isNaN(e.valAccuracy) ? 'no held-out split' : `val ${(e.valAccuracy * 100).toFixed(1)}%`} ` +
    `${e.imagesPerSecond.toFixed(0)} img/s, ${duration(e.secondsLeft)} left`
  );
}
