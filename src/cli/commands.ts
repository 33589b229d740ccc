// The `tandem` commands: train (the main job), bench (the loader alone), profile (each loader
// stage alone at several concurrencies). main.ts runs them from the command line; demo/deno-train.ts
// and the tests call runCommand directly.
import { writeFileAtomic } from '../runtime/index.ts';
import { listImageFolder } from '../sources/index.ts';
import { folderFlag, numberFlag, parseCommandLine, UsageError } from './args.ts';
import { runProfile } from './profile.ts';
import { reportHtml } from './report-html.ts';
import { PARQUET_HELP, runParquet } from './parquet.ts';
import { runShards, SHARDS_HELP } from './shards.ts';
import { defaultSmokeOptions, runSmoke } from './smoke.ts';
import { openTerminal } from './terminal.ts';
import { defaultTrainOptions, runTrain } from './train.ts';
import { isTextTraining, runTextTrain, TEXT_FLAGS, TEXT_TRAIN_HELP } from './train-text.ts';

const HELP: Record<string, string> = {
  '': `tandem — fast data loading for ML on the web platform

usage: tandem <command> [options]      (tandem <command> --help for its options)

  train   train a Vision Transformer in WGSL from JPEG files through the whole loader
          (--text, --tokens, --generated: the tiny GPT from text through the text loader)
  bench   the loader alone: read, decode on wasm threads, batch, upload, normalise; images/s
  profile each loader stage alone at several concurrencies, then the whole loader
  shards  write an ImageNet-style folder as WebDataset tar shards
  parquet write an ImageNet-style folder (or text files) as Hub-shaped Parquet shards`,
  train: `usage: tandem train [--data DIR | --shards DIR|URL | --parquet FILES | --hf NAME [--split S]] [--images N] [--epochs N] [--batch N] [--threads N] [--seed N] [--lr X] [--augment | --no-augment] [--report FILE] [--checkpoint FILE] [--checkpoint-every N] [--resume FILE] [--weights FILE] [--save-weights FILE] [--progress bar|lines] [--verbose]

  Reads an ImageNet-style folder (one subfolder per class) or, without --data, a generated
  labelled dataset of N 500×375 JPEGs (cached). Holds out every 5th image for validation.
  --shards streams WebDataset tar shards written by \`tandem shards\` (a directory or URL with
  shards.json; local files or HTTP), shuffled through a 256-sample buffer and split across
  $RANK/$WORLD_SIZE, without a held-out split. --parquet a.parquet,b.parquet (paths or URLs) and
  --hf owner/name --split train (a Hugging Face Hub dataset's Parquet conversion; $HF_ENDPOINT and
  $HF_TOKEN apply) stream Parquet rows the same way, row group by row group: an Image column
  (the Hub's { bytes, path } struct or binary) and a ClassLabel or string label column.
  Decodes on wasm threads to 32×32, uploads batches into a GPU ring, normalises them in WGSL
  (with --augment: random resized crop, flip and jitter too) and trains the tiny ViT preset
  with AdamW (defaults: 8192 images, 6 epochs, batch 32, lr 2.5e-3). On a terminal a live
  progress bar shows images/s, loss, accuracy and time left (--progress lines: plain lines only);
  one line per epoch with held-out accuracy, then the loader's per-stage summary. Writes a JSON
  report (default tandem-report.json), an HTML page with charts of loss, accuracy, images/s and
  per-stage occupancy over time next to it (same name, .html), and, with --checkpoint, training
  checkpoints (weights, optimizer state, step and data position; written atomically every
  --checkpoint-every steps, default once per epoch, and at the end). --resume FILE continues
  from one: with the same seed the run ends with the weights of a run that never stopped.
  --weights starts from ViT weights in timm's layout (safetensors, e.g. vit_tiny_patch16_224):
  the model takes their shape and image size, with a new head when the data's classes differ.
  --save-weights writes the trained weights in the same layout.

${TEXT_TRAIN_HELP}`,
  shards: SHARDS_HELP,
  parquet: PARQUET_HELP,
  profile: `usage: tandem profile [--data DIR] [--images N] [--batch N] [--size PX] [--threads N] [--concurrency 1,2,4]

  Runs each loader stage alone over a sample of N images (default 256) — read, decode (+ batch
  assembly; concurrency × threads jobs in flight), upload — at each concurrency, prints images/s
  per run and the smallest concurrency within 5% of the best, then runs the whole loader on the
  same sample for comparison.`,
  bench: `usage: tandem bench [--data DIR] [--images N] [--epochs N] [--batch N] [--size PX] [--threads N]

  Reads JPEG files, decodes them on wasm threads into shared batch buffers, uploads the batches
  into WebGPU buffers and normalises them in WGSL; prints images/s, time to first batch and the
  per-stage summary (which stage limits throughput).`,
};

/** --data must be an ImageNet-style folder: one subfolder per class. */
async function classFolderFlag(flags: Map<string, string>): Promise<void> {
  const path = await folderFlag(flags, 'data');
  if (path === undefined) return;
  try {
    await listImageFolder(path);
  } catch (error) {
    throw new UsageError(`--data ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function pct(part: number, whole: number): string {
  return `${((part / Math.max(whole, 1e-9)) * 100).toFixed(0)}%`;
}

/** Runs one `tandem` command line (without the program name); resolves to the exit code. */
export async function runCommand(argv: readonly string[], log: (line: string) => void = (line) => console.log(line)): Promise<number> {
  if (argv[0] === 'help' || argv.length === 0) {
    (argv.length === 0 ? console.error : console.log)(HELP['']);
    return argv.length === 0 ? 2 : 0;
  }
  const { command, flags } = parseCommandLine(argv);
  const name = command === 'smoke' ? 'bench' : command;
  if (!(name in HELP) || name === '') {
    if (name === '' && flags.has('help')) return (console.log(HELP['']), 0);
    throw new UsageError(
      `unknown command ${JSON.stringify(command || argv[0])}; commands: train, bench, profile, shards, parquet (tandem --help)`,
    );
  }
  if (flags.has('help')) return (console.log(HELP[name]), 0);
  if (flags.has('data') && name !== 'shards' && name !== 'parquet') await classFolderFlag(flags);
  if (name === 'bench') {
    const o = defaultSmokeOptions(log);
    o.images = numberFlag(flags, 'images', o.images);
    o.epochs = numberFlag(flags, 'epochs', o.epochs);
    o.batchSize = numberFlag(flags, 'batch', o.batchSize);
    o.imageSize = numberFlag(flags, 'size', o.imageSize);
    o.threads = numberFlag(flags, 'threads', o.threads);
    o.data = flags.get('data');
    const r = await runSmoke(o);
    log(
      `bench: ${r.images} images in ${r.batches} batches, ${r.imagesPerSecond.toFixed(0)} images/s, first batch after ${r.firstBatchSeconds.toFixed(2)} s, ${r.failures} failed items`,
    );
    return r.images > 0 ? 0 : 1;
  }
  if (name === 'shards') return runShards(flags, log);
  if (name === 'parquet') return runParquet(flags, log);
  if (name === 'profile') {
    const concurrencies = (flags.get('concurrency') ?? '1,2,4').split(',').map(Number);
    if (!concurrencies.every((c) => Number.isInteger(c) && c > 0))
      throw new UsageError(`--concurrency takes positive integers: ${flags.get('concurrency')}`);
    const defaults = defaultSmokeOptions(log);
    await runProfile({
      data: flags.get('data'),
      images: numberFlag(flags, 'images', 256),
      batchSize: numberFlag(flags, 'batch', defaults.batchSize),
      imageSize: numberFlag(flags, 'size', defaults.imageSize),
      threads: numberFlag(flags, 'threads', defaults.threads),
      concurrencies,
      log,
    });
    return 0;
  }
  const progress = flags.get('progress');
  if (progress !== undefined && progress !== 'bar' && progress !== 'lines')
    throw new UsageError(`--progress takes bar or lines, got ${JSON.stringify(progress)}`);
  const terminal = openTerminal(progress === undefined ? undefined : progress === 'bar');
  if (isTextTraining(flags)) {
    await runTextTrain(flags, (line) => (terminal.interactive ? terminal.log(line) : log(line)), terminal);
    return 0;
  }
  const textOnly = TEXT_FLAGS.filter((f) => flags.has(f));
  if (textOnly.length > 0) throw new UsageError(`--${textOnly.join(', --')}: text training only (with --text, --tokens or --generated)`);
  const o = defaultTrainOptions((line) => (terminal.interactive ? terminal.log(line) : log(line)));
  o.terminal = terminal;
  o.images = numberFlag(flags, 'images', o.images);
  o.epochs = numberFlag(flags, 'epochs', o.epochs);
  o.batchSize = numberFlag(flags, 'batch', o.batchSize);
  o.threads = numberFlag(flags, 'threads', o.threads);
  o.seed = numberFlag(flags, 'seed', o.seed);
  o.lr = numberFlag(flags, 'lr', o.lr, false);
  o.data = flags.get('data');
  o.shards = flags.get('shards');
  const parquet = flags.get('parquet');
  if (parquet !== undefined) o.parquet = parquet.split(',').filter((p) => p !== '');
  const hf = flags.get('hf');
  if (hf !== undefined) o.hf = { name: hf, split: flags.get('split') ?? 'train' };
  else if (flags.has('split')) throw new UsageError('--split goes with --hf (a Hub dataset)');
  const sources = ['data', 'shards', 'parquet', 'hf'].filter((f) => flags.has(f));
  if (sources.length > 1) throw new UsageError(`--${sources.join(', --')}: one data source at a time`);
  o.checkpoint = flags.get('checkpoint');
  if (flags.has('checkpoint-every')) o.checkpointEvery = numberFlag(flags, 'checkpoint-every', 1);
  o.resume = flags.get('resume');
  o.weights = flags.get('weights');
  o.saveWeights = flags.get('save-weights');
  if (flags.has('augment') && flags.has('no-augment')) throw new UsageError('--augment and --no-augment contradict each other');
  o.augment = flags.has('augment') ? true : flags.has('no-augment') ? false : o.augment;
  if (progress !== undefined && progress !== 'bar' && progress !== 'lines')
    throw new UsageError(`--progress takes bar or lines, got ${JSON.stringify(progress)}`);
  const report = await runTrain(o);
  const path = flags.get('report') ?? 'tandem-report.json';
  const htmlPath = `${path.replace(/\.json$/i, '')}.html`;
  await writeFileAtomic(path, new TextEncoder().encode(JSON.stringify(report, null, 2)));
  await writeFileAtomic(htmlPath, new TextEncoder().encode(reportHtml(report)));
  const last = report.epochs.at(-1);
  log(
    `train: ${report.steps} steps in ${report.seconds.toFixed(0)} s; held-out accuracy ${last && !Number.isNaN(last.valAccuracy) ? `${(last.valAccuracy * 100).toFixed(1)}%` : 'n/a'} ` +
      `(chance ${(100 / report.images.classes.length).toFixed(0)}%); waited for data ${pct(report.waitedForDataSeconds, report.seconds)}, ` +
      `for the GPU ${pct(report.waitedForGpuSeconds, report.seconds)}; bottleneck: ${report.bottleneck ?? 'n/a'}; ${report.failures} failed items; report: ${path}, ${htmlPath}`,
  );
  return 0;
}
