// The main job, small, through the command (`tandem train` as the CLI and demo/deno-train.ts run
// it): generate a dataset (cached like the CLI's), train through the whole loader, evaluate, and
// check the JSON report, the HTML report next to it, the progress lines and the checkpoint.
import { OptionError } from '../../src/errors/index.ts';
import { runCommand } from '../../src/cli/commands.ts';
import { resolveDataFolder } from '../../src/cli/files.ts';
import { UsageError } from '../../src/cli/args.ts';
import { readFile, writeFileAtomic } from '../../src/runtime/index.ts';
import { paramLayout, type ViTConfig } from '../../src/vit/config.ts';
import { CheckpointError } from '../../src/train/checkpoint.ts';
import { WeightsError } from '../../src/vit/safetensors.ts';
import { loadTimmWeights } from '../../src/vit/timm.ts';
import { smallTimmFile } from './timm-scenarios.ts';
import { DecodePool } from '../../src/decode/index.ts';
import type { GpuContext } from '../../src/gpu/index.ts';
import { defaultTrainingOptions, runTraining, type LabelledData, type TrainReport } from '../../src/train/index.ts';
import { check, rejectsWith } from './assert.ts';

export async function shortTrainingRunReports(dir: string): Promise<TrainReport> {
  const lines: string[] = [];
  const args = [
    'train',
    '--images',
    '96',
    '--epochs',
    '2',
    '--batch',
    '16',
    '--threads',
    '2',
    '--seed',
    '3',
    '--augment',
    '--progress',
    'lines',
    '--report',
    `${dir}/report.json`,
    '--checkpoint',
    `${dir}/vit.ckpt`,
  ];
  check((await runCommand(args, (l) => lines.push(l))) === 0, 'exit code 0');
  const report = JSON.parse(new TextDecoder().decode(await readFile(`${dir}/report.json`))) as TrainReport;
  check(report.steps === 10, `2 epochs × 5 steps, got ${report.steps}`);
  // Held-out accuracy is a count of 19 images: k/19 exactly, not just any number in [0, 1].
  const counted = (a: number) => Math.abs(a * 19 - Math.round(a * 19)) < 1e-9 && a >= 0 && a <= 1;
  check(
    report.epochs.length === 2 && report.epochs.every((e) => Number.isFinite(e.trainLoss) && e.trainLoss > 0 && counted(e.valAccuracy)),
    `one record per epoch, accuracy k/19: ${JSON.stringify(report.epochs.map((e) => e.valAccuracy))}`,
  );
  check(
    report.images.train === 77 && report.images.validation === 19 && report.images.classes.length === 4,
    `split ${JSON.stringify(report.images)}`,
  );
  check(report.failures === 0 && !report.cancelled, 'no failed items, not cancelled');
  check(report.loaderStats !== undefined && report.bottleneck !== undefined, 'per-stage summary');
  check(
    report.timeline.steps.length >= 3 && report.timeline.steps.every((s) => Number.isFinite(s.loss) && s.imagesPerSecond > 0),
    'step records (every 2 steps unless a read-back is still pending), each with loss and images/s',
  );
  check(report.timeline.steps.at(-1)!.step === 10, 'the last step is recorded');
  check(
    lines.some((l) => l.includes('epoch 2/2')) && lines.some((l) => l.startsWith('train: 10 steps')),
    `progress lines: ${lines.join(' | ')}`,
  );
  const html = new TextDecoder().decode(await readFile(`${dir}/report.html`));
  for (const chart of ['training loss', 'accuracy', 'images/s', 'stage busy', 'input queue fill'])
    check(html.includes(`aria-label="${chart}`), `HTML report has the ${chart} chart`);
  check(!/<script|src="http/.test(html) && (html.match(/<path d="M/g)?.length ?? 0) >= 4, 'HTML report is self-contained with drawn lines');
  const saved = await readFile(`${dir}/vit.ckpt`);
  check(saved.byteLength > 4 * 3 * 10_000, `checkpoint holds weights and both AdamW moments (${saved.byteLength} bytes)`);
  return report;
}

/**
 * The streaming path: `tandem shards` writes the generated dataset as tar shards, and `tandem
 * train --shards` trains from them (a directory, or a URL when `serve` gives one): every sample
 * delivered once per epoch, none failed.
 */
export async function trainingFromShards(
  dir: string,
  serve?: (root: string) => Promise<{ url: string; close(): Promise<void> }>,
): Promise<TrainReport> {
  const lines: string[] = [];
  const folder = await resolveDataFolder(undefined, 96, () => {}); // the dataset shortTrainingRunReports uses
  check(
    (await runCommand(['shards', '--data', folder, '--out', `${dir}/shards`, '--per-shard', '20'], (l) => lines.push(l))) === 0,
    'tandem shards exit code 0',
  );
  const server = serve ? await serve(`${dir}/shards`) : undefined;
  try {
    const where = server ? server.url : `${dir}/shards`;
    const args = [
      'train',
      '--shards',
      where,
      '--epochs',
      '2',
      '--batch',
      '16',
      '--threads',
      '2',
      '--progress',
      'lines',
      '--report',
      `${dir}/from-shards.json`,
    ];
    check((await runCommand(args, (l) => lines.push(l))) === 0, 'tandem train --shards exit code 0');
  } finally {
    await server?.close();
  }
  const report = JSON.parse(new TextDecoder().decode(await readFile(`${dir}/from-shards.json`))) as TrainReport;
  check(report.images.train === 96 && report.images.validation === 0, `streamed split ${JSON.stringify(report.images)}`);
  check(
    report.steps === 12 && !report.cancelled && report.failures === 0,
    `12 steps of 16 over 2 epochs of 96, no failures (${report.steps}, ${report.failures})`,
  );
  check(report.epochs.length === 2 && report.epochs.every((e) => Number.isFinite(e.trainLoss)), 'one record per epoch');
  check(
    lines.some((l) => l.includes('no held-out split')),
    `progress lines: ${lines.join(' | ')}`,
  );
  return report;
}

/**
 * Options a session cannot run with are refused before anything is allocated; and a session that
 * fails while opening (here its GPU device breaks on first use, after the decode pool has started
 * its threads) rejects and leaves no pool thread behind.
 */
export async function failedOpenReleasesWhatItMade(): Promise<void> {
  const made: DecodePool[] = [];
  const create = DecodePool.create;
  DecodePool.create = async (options) => {
    const pool = await create.call(DecodePool, options);
    made.push(pool);
    return pool;
  };
  const data: LabelledData = { train: [{ key: 'one', label: 0, read: async () => new Uint8Array(1) }], held: [], classes: ['a'] };
  const broken = new Proxy({} as GPUDevice, {
    get() {
      throw new Error('this device is broken');
    },
  });
  const gpu: GpuContext = {
    adapter: {} as GPUAdapter,
    device: broken,
    maxStorageBinding: 1 << 27,
    runtime: 'broken',
    owned: false,
    lost: new Promise(() => {}),
    close() {},
    [Symbol.dispose]() {},
  };
  const options = { ...defaultTrainingOptions, epochs: 1, threads: 2, gpu };
  try {
    await rejectsWith(
      runTraining(data, { ...options, batchSize: 0 }),
      (error) => error instanceof OptionError && error.field === 'batchSize' && /batchSize/.test(error.message),
      'a batch size of 0 is refused',
    );
    check(made.length === 0, `no pool for refused options, got ${made.length}`);
    await rejectsWith(
      runTraining(data, options),
      (error) => error instanceof Error && error.message === 'this device is broken',
      'the broken device fails the session',
    );
  } finally {
    DecodePool.create = create;
  }
  const [pool, ...more] = made;
  check(pool !== undefined && more.length === 0, `one pool was made, got ${made.length}`);
  check(pool.stats().liveWorkers === 0, `the pool's threads were stopped, ${pool.stats().liveWorkers} alive`);
}

/**
 * `tandem train --weights` fine-tunes from timm-layout weights (a new head for the data's 4
 * classes) and `--save-weights` writes the result in the same layout: the saved body is the loaded
 * one moved by a few AdamW steps (≤ lr per step), far closer to it than a fresh initialisation
 * would be. A missing or broken weights file is a typed error before any training starts.
 */
/**
 * How far AdamW can move a weight in `steps` steps at `lr`: |m̂/√v̂| stays near 1 and never passes
 * (1 − β1)/√(1 − β2) ≈ 3.2. Far below the distance to a fresh initialisation (weights of ~0.1–0.4).
 */
export function bodyMoveBound(steps: number, lr: number): number {
  return steps * lr * 3.2;
}

/** The largest change of any tensor but the head between two loads of the same model. */
export function bodyMoved(a: Float32Array, b: Float32Array, config: ViTConfig): number {
  let moved = 0;
  for (const t of paramLayout(config).tensors) {
    if (t.name.startsWith('head.')) continue;
    for (let i = t.offset; i < t.offset + t.size; i++) moved = Math.max(moved, Math.abs(a[i]! - b[i]!));
  }
  return moved;
}

export async function trainingFromTimmWeights(dir: string): Promise<void> {
  const start = smallTimmFile();
  await writeFileAtomic(`${dir}/start.safetensors`, start);
  const lines: string[] = [];
  const common = ['train', '--images', '96', '--epochs', '1', '--batch', '16', '--threads', '2', '--progress', 'lines'];
  const args = [
    ...common,
    '--report',
    `${dir}/report.json`,
    '--weights',
    `${dir}/start.safetensors`,
    '--save-weights',
    `${dir}/end.safetensors`,
  ];
  check((await runCommand(args, (l) => lines.push(l))) === 0, 'exit code 0');
  check(
    lines.some((l) => l.startsWith('weights: ') && l.includes('new head for 4 classes')),
    `the weights line: ${lines.join(' | ')}`,
  );
  const before = loadTimmWeights(start, { classes: 4 });
  const after = loadTimmWeights(await readFile(`${dir}/end.safetensors`));
  check(
    after.config.classes === 4 && after.config.gelu === 'erf' && after.config.heads === 4,
    `saved config ${JSON.stringify(after.config)}`,
  );
  const steps = 5; // 77 training images in batches of 16
  const moved = bodyMoved(after.params, before.params, after.config);
  check(moved > 0 && moved <= bodyMoveBound(steps, 2.5e-3), `the body moved by ${moved}: trained, from the loaded weights`);
  await rejectsWith(
    runCommand([...common, '--weights', `${dir}/none.safetensors`], () => {}),
    (e) => e instanceof UsageError && e.message.includes('none.safetensors'),
    'a missing weights file',
  );
  await writeFileAtomic(`${dir}/cut.safetensors`, start.subarray(0, 1000));
  await rejectsWith(
    runCommand([...common, '--weights', `${dir}/cut.safetensors`], () => {}),
    (e) => e instanceof WeightsError && e.code === 'truncated',
    'a truncated weights file',
  );
}

/**
 * `tandem train --checkpoint FILE --checkpoint-every N`, then `--resume FILE`: a finished run's
 * checkpoint resumes at its last step (nothing left to train); a resume with another seed is
 * refused with a CheckpointError naming the seed.
 */
export async function cliResumesFromItsCheckpoint(dir: string): Promise<void> {
  const common = ['train', '--images', '96', '--epochs', '2', '--batch', '16', '--threads', '2', '--progress', 'lines'];
  const ckpt = `${dir}/run.ckpt`;
  const lines: string[] = [];
  check(
    (await runCommand([...common, '--seed', '3', '--checkpoint', ckpt, '--checkpoint-every', '3', '--report', `${dir}/a.json`], (l) =>
      lines.push(l),
    )) === 0,
    'exit code 0',
  );
  check(
    lines.some((l) => l === `checkpoint: ${ckpt} (step 10)`),
    `the last checkpoint line: ${lines.join(' | ')}`,
  );
  await rejectsWith(
    runCommand([...common, '--seed', '4', '--resume', ckpt], () => {}),
    (e) => e instanceof CheckpointError && e.code === 'mismatch' && e.message.includes('seed 3 → 4'),
    'a resume with another seed',
  );
  const again: string[] = [];
  check(
    (await runCommand([...common, '--seed', '3', '--resume', ckpt, '--report', `${dir}/b.json`], (l) => again.push(l))) === 0,
    'exit code 0',
  );
  check(
    again.some((l) => l === `resuming from ${ckpt} at step 10`),
    `the resume line: ${again.join(' | ')}`,
  );
  const report = JSON.parse(new TextDecoder().decode(await readFile(`${dir}/b.json`))) as TrainReport;
  check(report.steps === 10 && report.epochs.length === 2, `resumed at the end: ${report.steps} steps, ${report.epochs.length} epochs`);
}
