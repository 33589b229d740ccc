// `tandem train --text PATH | --tokens DIR | --generated N`: the tiny GPT trained through the text
// loader (trainText), with progress per step, a held-out evaluation, checkpoints and resume, and a
// continuation of --prompt at the end.
import { gptPresets } from '../gpt/index.ts';
import { env, readFile, writeFileAtomic } from '../runtime/index.ts';
import type { PackMode } from '../text/index.ts';
import { decodeTextCheckpoint, trainText, type TextTrainingEvent, type TextTrainingReport } from '../train/index.ts';
import { numberFlag, UsageError } from './args.ts';
import { bar, type Terminal } from './terminal.ts';
import { generatedData, textFileData, tokenShardData, type TextData } from './text-data.ts';

export const TEXT_TRAIN_HELP = `usage: tandem train (--text PATH [--tokenizer tokenizer.json] | --tokens DIR [--tokenizer tokenizer.json] | --generated N) [--steps N | --epochs N] [--batch N] [--seq-len N] [--pack concat|best-fit|pad] [--seed N] [--lr X] [--eval-every N] [--checkpoint FILE] [--checkpoint-every N] [--resume FILE] [--prompt TEXT] [--report FILE] [--progress bar|lines]

  Trains the tiny GPT (src/gpt) in WGSL from textLoader's packed batches. --text reads a text file
  or a folder of .txt/.md files (held out: every 10th file, the last of fewer, or one file's last tenth)
  or Parquet files (a.parquet,b.parquet, paths or URLs: a row of the text column a document; the last
  file held out when there are several),
  tokenised in workers by --tokenizer (a Hugging Face tokenizer.json), or by the generated corpus'
  tokenizer without one. --tokens reads token shards and their shards.json (writeTokenShards; the
  last shard is held out when there are several). --generated N trains on N documents of the
  generated corpus and holds out documents of another seed. Defaults: 300 steps of 8 rows of 64,
  concat packing, lr 1e-2. Prints the loss as it trains, the held-out loss and accuracy, tokens/s,
  the padding share and the loader's bottleneck; with --prompt, the model's continuation of it.
  --checkpoint writes model, optimizer, step and data position atomically (every
  --checkpoint-every steps and at the end); --resume continues exactly where one stopped.`;

/** The options `tandem train` takes only with text. */
export const TEXT_FLAGS = ['text', 'tokens', 'generated', 'tokenizer', 'steps', 'seq-len', 'pack', 'eval-every', 'prompt'] as const;
const IMAGE_ONLY_FLAGS = ['data', 'shards', 'images', 'threads', 'augment', 'no-augment', 'weights', 'save-weights'];
const COMPLETION_TOKENS = 120;

export function isTextTraining(flags: Map<string, string>): boolean {
  return flags.has('text') || flags.has('tokens') || flags.has('generated');
}

export async function runTextTrain(
  flags: Map<string, string>,
  log: (line: string) => void,
  terminal: Terminal,
): Promise<TextTrainingReport> {
  const sources = ['text', 'tokens', 'generated'].filter((f) => flags.has(f));
  if (sources.length > 1) throw new UsageError(`--${sources.join(' and --')} contradict each other: give one`);
  const imageOnly = IMAGE_ONLY_FLAGS.filter((f) => flags.has(f));
  if (imageOnly.length > 0) throw new UsageError(`--${imageOnly.join(', --')}: image training only, not with --${sources[0]}`);
  const pack = flags.get('pack') ?? 'concat';
  if (pack !== 'concat' && pack !== 'best-fit' && pack !== 'pad')
    throw new UsageError(`--pack takes concat, best-fit or pad, got ${JSON.stringify(pack)}`);
  const tokenizer = flags.get('tokenizer');
  const data = await textData(flags, tokenizer);
  const seqLen = numberFlag(flags, 'seq-len', gptPresets.tiny.context);
  const model = { ...gptPresets.tiny, vocabSize: data.vocabSize, context: seqLen };
  const batchSize = numberFlag(flags, 'batch', 8);
  const seed = numberFlag(flags, 'seed', 1);
  const steps = flags.has('epochs') && !flags.has('steps') ? undefined : numberFlag(flags, 'steps', 300);
  const epochs = numberFlag(flags, 'epochs', 1);
  const lr = numberFlag(flags, 'lr', 1e-2, false);
  const prompt = flags.get('prompt');
  if (prompt !== undefined && !data.encode)
    throw new UsageError('--prompt needs a tokenizer for these token shards (--tokenizer tokenizer.json)');
  const promptIds = prompt === undefined ? undefined : promptTokens(data, prompt);
  const resumePath = flags.get('resume');
  const resumeFrom = resumePath === undefined ? undefined : await readResume(resumePath);
  const checkpointPath = flags.get('checkpoint');
  log(`data: ${data.description}`);
  if (resumeFrom) log(`resuming from ${resumePath} at step ${decodeTextCheckpoint(resumeFrom).header.step}`);
  const onEvent = (e: TextTrainingEvent) => {
    if (e.type === 'start')
      log(
        `model: GPT vocabulary ${e.model.vocabSize} context ${e.model.context} width ${e.model.width} depth ${e.model.depth} heads ${e.model.heads} (${e.parameters} parameters); ` +
          `${e.steps === undefined ? `${epochs} epochs` : `${e.steps} steps`} of ${e.batchSize} × ${e.model.context}, pack ${pack}`,
      );
    else if (e.type === 'step') {
      const line = `${e.steps === undefined ? '' : `${bar(e.step / e.steps)} `}step ${e.step}${e.steps === undefined ? '' : `/${e.steps}`} loss ${e.loss.toFixed(3)} acc ${(100 * e.accuracy).toFixed(1)}% ${e.tokensPerSecond.toFixed(0)} tok/s lr ${e.lr.toExponential(2)}`;
      terminal.status(line);
      if (e.step % 50 === 0 || e.step === e.steps) log(line);
    } else if (e.type === 'eval')
      log(`held-out at step ${e.step}: loss ${e.loss.toFixed(3)} acc ${(100 * e.accuracy).toFixed(1)}% (${e.tokens} tokens)`);
  };
  const result = await trainText({
    source: data.train,
    ...(data.heldOut ? { heldOut: data.heldOut } : {}),
    model,
    batchSize,
    ...(steps === undefined ? { epochs } : { steps }),
    seed,
    train: { lr, minLr: lr / 30, warmupSteps: 20, weightDecay: 0.01, clipNorm: 1, ...(steps === undefined ? {} : { totalSteps: steps }) },
    loader: { ...data.loader, pack: pack as PackMode, shuffle: true, seed },
    ...(flags.has('eval-every') ? { evalEvery: numberFlag(flags, 'eval-every', 1) } : {}),
    ...(resumeFrom ? { resumeFrom } : {}),
    ...(checkpointPath
      ? {
          checkpointEvery: numberFlag(flags, 'checkpoint-every', steps ?? Number.MAX_SAFE_INTEGER),
          onCheckpoint: async (bytes: Uint8Array, step: number) => {
            // The kill tests set TANDEM_TEST_SLOW_CHECKPOINT_MS to kill `tandem train` mid-write.
            await writeFileAtomic(checkpointPath, bytes, Number(env('TANDEM_TEST_SLOW_CHECKPOINT_MS') ?? 0));
            if (step === steps || steps === undefined) log(`checkpoint: ${checkpointPath} (step ${step})`);
          },
        }
      : {}),
    onEvent,
  });
  try {
    terminal.done();
    const r = result.report;
    log(r.summary);
    const heldOut = r.heldOut
      ? `held-out loss ${r.heldOut.loss.toFixed(3)} accuracy ${(100 * r.heldOut.accuracy).toFixed(1)}%`
      : 'no held-out split';
    log(
      `train: ${r.steps} steps in ${r.seconds.toFixed(1)} s; loss ${r.firstLoss.toFixed(3)} → ${r.lastLoss.toFixed(3)}; ${heldOut}; ` +
        `${r.tokensPerSecond.toFixed(0)} tokens/s; padding ${(100 * r.paddingShare).toFixed(1)}%; bottleneck: ${r.bottleneck ?? 'n/a'}; ${r.failures} failed documents`,
    );
    if (promptIds) {
      const out = await result.trainer.complete(promptIds, COMPLETION_TOKENS);
      const end = data.eos === undefined ? -1 : out.indexOf(data.eos);
      log(`prompt: ${JSON.stringify(prompt)} → ${JSON.stringify(data.decode(end < 0 ? out : out.slice(0, end)))}`);
    }
    const reportPath = flags.get('report');
    if (reportPath) await writeFileAtomic(reportPath, new TextEncoder().encode(JSON.stringify(r, null, 2)));
    return r;
  } finally {
    result.close();
  }
}

async function textData(flags: Map<string, string>, tokenizer: string | undefined): Promise<TextData> {
  const text = flags.get('text');
  if (text !== undefined) return textFileData(text, tokenizer);
  const tokens = flags.get('tokens');
  if (tokens !== undefined) return tokenShardData(tokens, tokenizer);
  if (tokenizer !== undefined) throw new UsageError('--tokenizer goes with --text or --tokens (the generated corpus has its own)');
  return generatedData(numberFlag(flags, 'generated', 1));
}

function promptTokens(data: TextData, prompt: string): number[] {
  try {
    return data.encode?.(prompt) ?? [];
  } catch (error) {
    throw new UsageError(`--prompt: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function readResume(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`--resume ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
