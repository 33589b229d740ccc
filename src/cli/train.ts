// `tandem train`: the training session (src/train) over files on disk, with a live progress bar on
// a terminal (plain lines otherwise), one line per epoch, the loader's per-stage summary, and the
// reports (JSON and a self-contained HTML page) written by main.ts.
import { formatStats } from '../pipeline/index.ts';
import { writeFileAtomic } from '../runtime/index.ts';
import {
  defaultTrainingOptions,
  runTraining,
  type EpochEvent,
  type StepEvent,
  type TrainingEvent,
  type TrainingOptions,
  type TrainReport,
} from '../train/index.ts';
import { folderData, resolveDataFolder, shardsData } from './files.ts';
import { bar, duration, type Terminal } from './terminal.ts';

export type { EpochRecord, TrainReport } from '../train/index.ts';

/** The session's options the command line sets, plus where the data comes from and where output goes. */
export interface TrainOptions extends Pick<TrainingOptions, 'epochs' | 'batchSize' | 'threads' | 'seed' | 'lr' | 'augment'> {
  data?: string;
  /** Directory or URL of tar shards with a shards.json (written by `tandem shards`), streamed. */
  shards?: string;
  /** How many images to generate when no data is given. */
  images: number;
  /** Write the final weights and optimizer state here (ViTTrainer.saveCheckpoint's bytes). */
  checkpoint?: string;
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
  const data = o.shards ? await shardsData(o.shards) : await folderData(await resolveDataFolder(o.data, o.images, o.log));
  let epochs = o.epochs;
  const onEvent = (e: TrainingEvent) => {
    if (e.type === 'start') {
      epochs = e.epochs;
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
      reportEvery: 2,
      onTrained: async (trainer) => {
        if (!o.checkpoint) return;
        await writeFileAtomic(o.checkpoint, await trainer.saveCheckpoint());
        o.log(`checkpoint: ${o.checkpoint}`);
      },
    },
    onEvent,
  );
  o.terminal?.done();
  if (report.loaderStats) o.log(formatStats(report.loaderStats));
  return report;
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
