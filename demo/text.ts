// The text demo: text files the user picks or drops (or the generated corpus) → a character-level
// tokenizer.json built here from the text's characters (the corpus' own for generated data), run
// by tokenizers.js in the text loader's workers → packed rows with document ids → WebGPU batches
// → the tiny GPT trained in WGSL through trainText(), on the page's thread (each step awaits the
// GPU, so the page keeps drawing). When training ends, a prompt box continues text with complete().
// State for tests and curious readers is on `window.tandemTextDemo`.
import { gptPresets } from '../src/gpt/index.ts';
import { acquireGpu } from '../src/gpu/index.ts';
import { listDroppedItems, listFileList, type DataTransferItemLike, type PickedFolder } from '../src/sources/index.ts';
import {
  CORPUS_ALPHABET,
  CORPUS_BOS,
  CORPUS_EOS,
  CORPUS_VOCAB_SIZE,
  corpusDocuments,
  corpusIds,
  corpusText,
  corpusTokenizerJson,
} from '../src/synthetic/index.ts';
import type { PackMode, TextSource } from '../src/text/index.ts';
import { trainText, type TextTrainingResult } from '../src/train/index.ts';
import { FrameMeter, LineChart } from './charts.ts';
import { CHAR_BOS, CHAR_EOS, charTokenizer } from './text-tokenizer.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const TEXT_FILES = /\.(txt|md|text)$/i;
const HELD_OUT_EVERY = 10;
const SEED = 1;

/** What is being trained on: the sources, how ids are made and read back. */
interface TextData {
  description: string;
  documents: { train: number; heldOut: number };
  train: TextSource;
  heldOut: TextSource;
  tokenizerJson: object;
  vocabSize: number;
  bos: number;
  eos: number;
  encode: (text: string) => number[];
  decode: (ids: readonly number[]) => string;
}

const state = {
  state: 'idle' as 'idle' | 'running' | 'done' | 'error',
  steps: 0,
  /** Training loss and accuracy as read back (about ten times a run). */
  losses: [] as { step: number; loss: number; accuracy: number }[],
  heldOut: [] as { step: number; loss: number; accuracy: number }[],
  vocabSize: 0,
  documents: { train: 0, heldOut: 0 },
  paddingShare: 0,
  tokensPerSecond: 0,
  bottleneck: '',
  summary: '',
  failures: 0,
  /** The last completion shown, and whether one is being made. */
  completion: '',
  completing: false,
  error: undefined as string | undefined,
  frames: 0,
};
(globalThis as unknown as { tandemTextDemo: typeof state }).tandemTextDemo = state;

const lossChart = new LineChart($('loss'), 'next-character loss');
const accuracyChart = new LineChart($('accuracy'), 'next-character accuracy', [0, 1]);
let trained: { result: TextTrainingResult; data: TextData } | undefined;

// The query sets the options' starting values (?steps=20&batch=4&context=32&documents=200&pack=best-fit), for links and tests.
const params = new URLSearchParams(location.search);
for (const id of ['documents', 'steps', 'batch', 'context', 'pack']) {
  const v = params.get(id);
  if (v !== null) $<HTMLInputElement>(id).value = v;
}
/** Characters a completion adds (?complete=N). */
const completeCount = Math.max(1, Math.min(1000, Number(params.get('complete') ?? 160) || 160));

function setting(id: string): number {
  const input = $<HTMLInputElement>(id);
  const v = Math.round(Number(input.value));
  return Math.min(Number(input.max), Math.max(Number(input.min), Number.isFinite(v) ? v : Number(input.defaultValue)));
}

const setStatus = (text: string) => void ($('status').textContent = text);

function generatedData(count: number): TextData {
  return {
    description: `${count} generated corpus documents (held out: 64 of another seed), the corpus' tokenizer`,
    documents: { train: count, heldOut: 64 },
    train: { texts: corpusDocuments(SEED, count) },
    heldOut: { texts: corpusDocuments(SEED + 1, 64) },
    tokenizerJson: corpusTokenizerJson(),
    vocabSize: CORPUS_VOCAB_SIZE,
    bos: CORPUS_BOS,
    eos: CORPUS_EOS,
    // Characters outside the corpus' alphabet are left out of the prompt.
    encode: (text) => [...corpusIds([...text].filter((c) => CORPUS_ALPHABET.includes(c)).join(''))],
    decode: (ids) => corpusText(ids.filter((id) => id > CORPUS_EOS)),
  };
}

/** Dropped or picked files: every 10th held out (2 to 9 files: the last; one file: its last tenth), a tokenizer of their characters. */
async function fileData(folder: PickedFolder): Promise<TextData> {
  const files = folder.files;
  if (files.length === 0) throw new Error('no .txt, .md or .text files among the ones given');
  const texts = await Promise.all(files.map(async (f) => ({ key: f.path, text: await f.file.text() })));
  let train = texts.slice(0, -1);
  let heldOut = texts.slice(-1);
  if (texts.length >= HELD_OUT_EVERY) {
    train = texts.filter((_, i) => i % HELD_OUT_EVERY !== HELD_OUT_EVERY - 1);
    heldOut = texts.filter((_, i) => i % HELD_OUT_EVERY === HELD_OUT_EVERY - 1);
  } else if (texts.length === 1) {
    const { key, text } = texts[0] as { key: string; text: string };
    const newline = text.indexOf('\n', Math.floor(text.length * 0.9));
    const cut = newline < 0 ? Math.floor(text.length * 0.9) : newline + 1;
    train = [{ key, text: text.slice(0, cut) }];
    heldOut = [{ key: `${key}#held-out`, text: text.slice(cut) }];
  }
  const tokenizer = charTokenizer(texts.map((t) => t.text));
  return {
    description: `${files.length} file${files.length === 1 ? '' : 's'} (${train.length} to train on, ${heldOut.length} held out), ${tokenizer.chars.length} distinct characters`,
    documents: { train: train.length, heldOut: heldOut.length },
    train: { texts: train },
    heldOut: { texts: heldOut },
    tokenizerJson: tokenizer.json,
    vocabSize: tokenizer.vocabSize,
    bos: CHAR_BOS,
    eos: CHAR_EOS,
    encode: (text) => tokenizer.encode(text),
    decode: (ids) => tokenizer.decode(ids),
  };
}

async function train(data: TextData): Promise<void> {
  const steps = setting('steps');
  const pack = $<HTMLSelectElement>('pack').value as PackMode;
  const model = { ...gptPresets.tiny, vocabSize: data.vocabSize, context: setting('context') };
  state.vocabSize = data.vocabSize;
  state.documents = data.documents;
  $('data').textContent =
    `data: ${data.description}; model: GPT vocabulary ${data.vocabSize}, context ${model.context}, width ${model.width}, depth ${model.depth}`;
  const gpu = await acquireGpu();
  let result: TextTrainingResult | undefined;
  try {
    setStatus('starting the tokenizer workers…');
    result = await trainText({
      source: data.train,
      heldOut: data.heldOut,
      model,
      batchSize: setting('batch'),
      steps,
      seed: SEED,
      train: { lr: 1e-2, minLr: 3e-4, warmupSteps: Math.min(20, Math.ceil(steps / 5)), weightDecay: 0.01, clipNorm: 1 },
      loader: {
        tokenizer: { json: data.tokenizerJson },
        tokenizerWorkers: 2,
        bos: data.bos,
        eos: data.eos,
        vocabSize: data.vocabSize,
        pack,
        shuffle: true,
      },
      // About ten loss points and six held-out ones whatever the length; each read waits for the GPU.
      reportEvery: Math.max(1, Math.min(10, Math.ceil(steps / 10))),
      evalEvery: Math.max(5, Math.ceil(steps / 5)),
      evalBatches: 2,
      gpu,
      onEvent: (e) => {
        if (e.type === 'step') {
          state.steps = e.step;
          state.tokensPerSecond = e.tokensPerSecond;
          const last = state.losses.at(-1);
          if (Number.isFinite(e.loss) && (!last || last.loss !== e.loss || last.accuracy !== e.accuracy)) {
            state.losses.push({ step: e.step, loss: e.loss, accuracy: e.accuracy });
            lossChart.add('training', e.step, e.loss);
            accuracyChart.add('training', e.step, e.accuracy);
          }
          setStatus(`step ${e.step} of ${steps}: loss ${e.loss.toFixed(3)}, ${e.tokensPerSecond.toFixed(0)} tokens/s`);
        } else if (e.type === 'eval') {
          state.heldOut.push({ step: e.step, loss: e.loss, accuracy: e.accuracy });
          lossChart.add('held-out', e.step, e.loss);
          accuracyChart.add('held-out', e.step, e.accuracy);
        }
      },
    });
    const r = result.report;
    Object.assign(state, { paddingShare: r.paddingShare, bottleneck: r.bottleneck ?? '', summary: r.summary, failures: r.failures });
    $('packing').textContent = `packing ${pack}: padding ${(100 * r.paddingShare).toFixed(1)}% of the positions trained on`;
    $('bottleneck').textContent = `bottleneck: ${r.bottleneck ?? 'n/a'}`;
    $('summary').textContent = r.summary;
    const h = r.heldOut;
    setStatus(
      `done: ${r.steps} steps in ${r.seconds.toFixed(1)} s, ${r.tokensPerSecond.toFixed(0)} tokens/s; loss ${r.firstLoss.toFixed(3)} → ${r.lastLoss.toFixed(3)}` +
        (h ? `; held-out loss ${h.loss.toFixed(3)}, accuracy ${(100 * h.accuracy).toFixed(1)}%` : '') +
        (r.failures ? `; ${r.failures} documents failed` : ''),
    );
    trained = { result, data };
    result = undefined;
    $('prompt-box').hidden = false;
  } finally {
    result?.close();
    if (!trained) gpu.close();
  }
}

async function continuePrompt(): Promise<void> {
  if (!trained || state.completing) return;
  const { result, data } = trained;
  state.completing = true;
  try {
    const prompt = $<HTMLInputElement>('prompt').value;
    const ids = [data.bos, ...data.encode(prompt)];
    const temperature = Math.max(0, Number($<HTMLInputElement>('temperature').value) || 0);
    const out = await result.trainer.complete(ids, completeCount, { temperature, seed: state.steps });
    const end = out.indexOf(data.eos);
    state.completion = data.decode(end < 0 ? out : out.slice(0, end));
    $('completion').textContent = `${prompt}${state.completion}`;
  } catch (e) {
    state.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    $('completion').textContent = `error: ${state.error}`;
  } finally {
    state.completing = false;
  }
}

function start(data: Promise<TextData> | TextData): void {
  if (state.state === 'running') return;
  trained?.result.close();
  trained = undefined;
  $('prompt-box').hidden = true;
  Object.assign(state, { state: 'running', steps: 0, losses: [], heldOut: [], error: undefined, completion: '', summary: '' });
  lossChart.clear();
  accuracyChart.clear();
  Promise.resolve(data)
    .then(train)
    .then(
      () => void (state.state = 'done'),
      (e: unknown) => {
        state.state = 'error';
        state.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        setStatus(`error: ${state.error}`);
      },
    );
}

const fromFolder = (folder: Promise<PickedFolder> | PickedFolder) => Promise.resolve(folder).then(fileData);
$('generated').onclick = () => start(generatedData(setting('documents')));
$('pick-files').onclick = () => $<HTMLInputElement>('files').click();
$('pick-folder').onclick = () => $<HTMLInputElement>('folder').click();
for (const id of ['files', 'folder'])
  $<HTMLInputElement>(id).onchange = (ev) => {
    const files = (ev.target as HTMLInputElement).files;
    if (files?.length) start(fromFolder(listFileList(files, TEXT_FILES)));
  };
$<HTMLFormElement>('prompt-form').onsubmit = (ev) => {
  ev.preventDefault();
  void continuePrompt();
};
document.body.ondragover = (ev) => ev.preventDefault();
document.body.ondrop = (ev) => {
  ev.preventDefault();
  const items = ev.dataTransfer?.items;
  // The entries must be taken inside the handler; DOM's entry types are the structural *Like ones.
  if (items?.length) start(fromFolder(listDroppedItems(items as unknown as ArrayLike<DataTransferItemLike>, TEXT_FILES)));
};

new FrameMeter().start((m) => {
  state.frames = m.frames;
  if (m.frames % 30 !== 0) return;
  const gaps = m.gaps();
  $('frames-meter').textContent = `frame gaps over the last ~5 s: max ${gaps.max.toFixed(0)} ms, p95 ${gaps.p95.toFixed(0)} ms`;
});
