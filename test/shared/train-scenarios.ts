// The main job, small: generate a dataset (cached like the CLI's), train through the whole loader,
// evaluate, report.
import { runTrain, type TrainReport } from '../../src/cli/train.ts';
import { readFile } from '../../src/runtime/index.ts';
import { check } from './assert.ts';

export async function shortTrainingRunReports(checkpointPath: string): Promise<TrainReport> {
  const lines: string[] = [];
  const report = await runTrain({ data: undefined, images: 96, epochs: 2, batchSize: 16, threads: 2, seed: 3, lr: 2e-3, augment: true, checkpoint: checkpointPath, log: (l) => lines.push(l) });
  check(report.steps === 10, `2 epochs × 5 steps, got ${report.steps}`);
  check(report.epochs.length === 2 && report.epochs.every((e) => Number.isFinite(e.trainLoss) && e.valAccuracy >= 0 && e.valAccuracy <= 1), 'one record per epoch');
  check(report.images.train === 77 && report.images.validation === 19 && report.images.classes.length === 4, `split ${JSON.stringify(report.images)}`);
  check(report.failures === 0, 'no failed items');
  check(report.loaderStats !== undefined && report.bottleneck !== undefined, 'per-stage summary');
  check(lines.some((l) => l.includes('epoch 2/2')), 'progress lines');
  const saved = await readFile(checkpointPath);
  check(saved.byteLength > 4 * 3 * 10_000, `checkpoint holds weights and both AdamW moments (${saved.byteLength} bytes)`);
  return report;
}
