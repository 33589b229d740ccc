// The demo page: starts the training worker, draws its events (charts, batch grid, status) and
// proves the page stays responsive (a CSS spinner and a frame-gap meter); after a finished run,
// "try your model" (try-model.ts). State for tests and curious readers is on `window.tandemDemo`.
import type { HubSource, ParquetSource } from '../src/loader/index.ts';
import type { PreviewEvent } from '../src/train/index.ts';
import { FrameMeter, LineChart, SplitBars } from './charts.ts';
import { fromDrop, fromFileList, hasDirectoryPicker, pickWithDirectoryPicker, type PickedImages } from './folder.ts';
import type { DemoSettings, FromWorker, ToWorker } from './protocol.ts';
import { savedRun, type SavedRun } from './saved-run.ts';
import { TryModel } from './try-model.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const isolated = globalThis.crossOriginIsolated === true;
const charts = {
  loss: new LineChart($('loss'), 'training loss'),
  accuracy: new LineChart($('accuracy'), 'accuracy (train, held-out)', [0, 1]),
  throughput: new LineChart($('throughput'), 'images/s'),
  occupancy: new LineChart($('occupancy'), 'stage working (per interval)', [0, 1]),
  split: new SplitBars($('split'), "where each stage's time went (last interval)"),
  queues: new LineChart($('queues'), 'input queue fill (mean so far)', [0, 1]),
  waited: new LineChart($('waited'), 'share of time the GPU waited for data', [0, 1]),
};
// The trained model lives in the worker: the section asks it through 'classify' messages.
const tryModel = new TryModel(document, (m) => {
  if (!worker) return false;
  worker.postMessage({ type: 'classify', ...m } satisfies ToWorker);
  return true;
});
const state = {
  state: 'idle' as 'idle' | 'running' | 'done' | 'error',
  crossOriginIsolated: isolated,
  decodeMode: undefined as string | undefined,
  message: '',
  /** Every status line shown, in order. */
  statusLog: [] as string[],
  steps: 0,
  previews: 0,
  /** Bytes of the last checkpoint offered for download (0: none yet). */
  checkpointBytes: 0,
  /** Bytes of the last timm-layout weights offered for download (0: none yet). */
  weightsBytes: 0,
  /** The step of the last checkpoint this page's run saved in OPFS (0: none yet). */
  savedStep: 0,
  /** A run saved by an earlier visit that can be continued (undefined: none). */
  resumable: undefined as { step: number; steps: number } | undefined,
  /** True once the page has looked for a saved run. */
  checkedSaved: false,
  /** The held-out accuracy of the last epoch, as the session reported it (undefined: no epoch yet). */
  heldOutAccuracy: undefined as number | undefined,
  /** The "try your model" section: held-out predictions, confusion matrix, classified files. */
  tryModel: tryModel.state,
  errors: [] as string[],
  frameGaps: { max: 0, p95: 0 },
  points: () => Object.fromEntries(Object.entries(charts).map(([k, c]) => [k, c.pointsDrawn])),
};
(globalThis as unknown as { tandemDemo: typeof state }).tandemDemo = state;

function showMode(decodeMode?: string): void {
  const el = $('mode');
  if (isolated) {
    el.className = 'banner ok';
    el.textContent = `Cross-origin isolated: images decode on wasm pthreads sharing one memory${decodeMode ? ` (decode mode: ${decodeMode})` : ''}.`;
  } else {
    el.className = 'banner fallback';
    el.textContent =
      'Fallback mode: this page is not cross-origin isolated (no COOP/COEP headers), so SharedArrayBuffer and wasm pthreads are unavailable. ' +
      `Decoding falls back to single-threaded wasm instances in workers${decodeMode ? ` (decode mode: ${decodeMode})` : ''}; expect lower throughput.`;
  }
}
showMode();

function setStatus(text: string): void {
  state.message = text;
  state.statusLog.push(text);
  $('status').textContent = text;
}

let worker: Worker | undefined;
const classes: string[] = [];

function settings(): DemoSettings {
  const num = (id: string, fallback: number) => Math.max(1, Number($<HTMLInputElement>(id).value) || fallback);
  return {
    epochs: num('epochs', 4),
    images: num('images', 256),
    batchSize: num('batch', 32),
    threads: Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2)),
    augment: $<HTMLInputElement>('augment').checked,
  };
}

function start(picked?: PickedImages, resume = false, parquet?: HubSource | ParquetSource): void {
  worker?.terminate();
  for (const c of Object.values(charts)) c.clear();
  classes.length = 0;
  classes.push(...(picked?.classes ?? []));
  state.state = 'running';
  state.steps = state.previews = 0;
  state.heldOutAccuracy = undefined;
  tryModel.reset();
  stopButton('Stop', false);
  worker = new Worker(new URL('./train-worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (e: MessageEvent<FromWorker>) => onEvent(e.data);
  worker.onerror = (e) => fail(`worker: ${e.message}`);
  const weights = $<HTMLInputElement>('weights').files?.[0];
  const message: ToWorker = {
    type: 'start',
    settings: settings(),
    ...(picked ? { picked: { images: picked.images, classes: picked.classes } } : {}),
    ...(parquet ? { parquet } : {}),
    ...(weights && !resume ? { weights } : {}),
    ...(resume ? { resume: true } : {}),
  };
  $('resume').hidden = true;
  worker.postMessage(message);
}

function fail(message: string): void {
  state.state = 'error';
  state.errors.push(message);
  const missing = !isolated && /SharedArrayBuffer|isolat/i.test(message);
  $('mode').className = 'banner error';
  $('mode').textContent = missing
    ? `This page is not cross-origin isolated and this build of Tandem's decoder has no fallback without SharedArrayBuffer: ${message} Serve the page with COOP: same-origin and COEP: require-corp (npx vite demo does).`
    : `Training failed: ${message}`;
  setStatus('error');
  console.warn(`tandem demo: ${message}`); // a warning, not an error: the page handled it
  endWorker('The trained model is gone with the failed worker.');
}

/** Ends the worker and whatever it held (the run, or the trained model); the page keeps what it drew. */
function endWorker(why?: string): void {
  worker?.terminate();
  worker = undefined;
  stopButton('Stop', true);
  tryModel.released(why);
}

/** The Stop button stops a run, then releases the trained model it left in the worker. */
function stopButton(text: string, disabled: boolean): void {
  const button = $<HTMLButtonElement>('stop');
  button.textContent = text;
  button.disabled = disabled;
}

function onEvent(e: FromWorker): void {
  switch (e.type) {
    case 'status':
      setStatus(e.text);
      return;
    case 'error':
      fail(e.message);
      return;
    case 'start':
      state.decodeMode = e.decodeMode;
      if (classes.length === 0) classes.push(...e.classes);
      showMode(e.decodeMode);
      setStatus(`training: ${e.train} images, ${e.classes.length} classes, ${e.steps} steps of ${e.batchSize}; ${e.adapter}`);
      return;
    case 'step':
      state.steps = e.step;
      charts.loss.add('loss', e.seconds, e.loss);
      charts.accuracy.add('train', e.seconds, e.accuracy);
      charts.throughput.add('images/s', e.seconds, e.imagesPerSecond);
      charts.waited.add('waited', e.seconds, e.waitedForData);
      setStatus(
        `step ${e.step}/${e.steps} · epoch ${e.epoch.toFixed(2)} · loss ${e.loss.toFixed(3)} · acc ${(e.accuracy * 100).toFixed(0)}% · ${e.imagesPerSecond.toFixed(0)} img/s · ${e.secondsLeft.toFixed(0)} s left`,
      );
      return;
    case 'stats':
      for (const s of e.stages) {
        charts.occupancy.add(s.name, e.seconds, s.busy);
        if (s.kind !== 'source' && s.kind !== 'consumer') charts.queues.add(s.name, e.seconds, s.queueFill);
      }
      charts.split.set(
        e.stages.map((s) => ({
          name: s.kind === 'source' || s.kind === 'consumer' ? s.name : `${s.name}[${s.concurrency}]`,
          time: s.time,
          ...(s.resourceName ? { resourceName: s.resourceName } : {}),
        })),
      );
      return;
    case 'epoch':
      state.heldOutAccuracy = e.valAccuracy;
      charts.accuracy.add('held-out', e.endedAt, e.valAccuracy);
      setStatus(
        `epoch ${e.epoch}/${e.epochs}: loss ${e.trainLoss.toFixed(3)}, train ${(e.trainAccuracy * 100).toFixed(1)}%, held-out ${(e.valAccuracy * 100).toFixed(1)}%`,
      );
      return;
    case 'preview':
      drawBatch(e);
      return;
    case 'checkpoint':
      state.checkpointBytes = offerDownload('checkpoint', e.bytes);
      return;
    case 'weights':
      state.weightsBytes = offerDownload('weights-download', e.bytes);
      return;
    case 'saved':
      state.savedStep = e.step;
      return;
    case 'done':
      state.state = 'done';
      // A stopped run ends its worker; a finished one leaves the trained model in it to try.
      if (e.cancelled) endWorker();
      else {
        stopButton('Release the model', false);
        tryModel.preparing();
      }
      setStatus(
        `${e.cancelled ? 'stopped' : 'done'}: ${e.steps} steps in ${e.seconds.toFixed(1)} s; waited for data ${(e.waitedForData * 100).toFixed(0)}% of the time; bottleneck: ${e.bottleneck}; ${e.failures} failed items`,
      );
      return;
    case 'held-out':
      tryModel.showHeldOut(e);
      return;
    case 'classified':
      tryModel.showClassified(e);
      return;
    case 'released':
      endWorker();
      return;
  }
}

/** Bytes as a file download behind the link `id` (Node and Deno write files; a page offers one). */
function offerDownload(id: string, bytes: Uint8Array<ArrayBuffer>): number {
  const link = $<HTMLAnchorElement>(id);
  if (link.href) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  link.hidden = false;
  return bytes.length;
}

function drawBatch(e: PreviewEvent): void {
  state.previews++;
  const strip = new OffscreenCanvas(e.count * e.size, e.size);
  strip.getContext('2d')!.putImageData(new ImageData(e.rgba, e.count * e.size, e.size), 0, 0);
  const grid = $<HTMLCanvasElement>('grid');
  const ctx = grid.getContext('2d')!;
  const perRow = 8,
    scale = Math.floor(grid.width / perRow / e.size),
    cell = e.size * scale;
  ctx.clearRect(0, 0, grid.width, grid.height);
  ctx.imageSmoothingEnabled = false;
  ctx.font = '10px system-ui, sans-serif';
  for (let i = 0; i < e.count; i++) {
    const x = (i % perRow) * cell,
      y = Math.floor(i / perRow) * (cell + 12);
    ctx.drawImage(strip, i * e.size, 0, e.size, e.size, x, y, cell - 2, cell - 2);
    ctx.fillText(classes[e.labels[i]!] ?? String(e.labels[i]), x, y + cell + 9);
  }
  $('batch-info').textContent = `(step ${e.step}, normalised/augmented on the GPU, read back asynchronously)`;
}

$('builtin').onclick = () => start();
/** The Hub field: `owner/name` (its Parquet conversion, at the split, from the endpoint or the Hub), or Parquet URLs. */
function hubSource(): HubSource | ParquetSource | undefined {
  const words = $<HTMLInputElement>('hf')
    .value.trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  if (words.length === 0) return undefined;
  if (words.every((w) => /^https?:\/\//.test(w))) return { parquet: words };
  const endpoint = $<HTMLInputElement>('hf-endpoint').value.trim();
  return { hf: words[0]!, split: $<HTMLInputElement>('hf-split').value.trim() || 'train', ...(endpoint ? { endpoint } : {}) };
}
$('hub').onclick = () => {
  const source = hubSource();
  if (source) start(undefined, false, source);
  else $('hf').focus();
};
$('stop').onclick = () => worker?.postMessage({ type: 'stop' } satisfies ToWorker);
$('pick').onclick = async () => {
  if (!hasDirectoryPicker()) return $<HTMLInputElement>('folder').click();
  try {
    start(await pickWithDirectoryPicker());
  } catch (e) {
    if ((e as Error).name !== 'AbortError') fail(String(e));
  }
};
$<HTMLInputElement>('folder').onchange = (ev) => {
  const files = (ev.target as HTMLInputElement).files;
  if (!files?.length) return;
  try {
    start(fromFileList(files));
  } catch (e) {
    fail(String(e));
  }
};
document.body.ondragover = (ev) => ev.preventDefault();
document.body.ondrop = (ev) => {
  ev.preventDefault();
  const dropped = ev.dataTransfer;
  if (!dropped?.items.length) return;
  // With a trained model on the page, files (no folder) dropped anywhere are for it, not a new run.
  if (tryModel.state.model === 'ready' && [...dropped.items].every((i) => i.webkitGetAsEntry()?.isFile)) {
    for (const file of dropped.files) tryModel.classify(file);
    return;
  }
  fromDrop(dropped.items).then(start, (e: unknown) => fail(String(e)));
};

const meter = new FrameMeter();
meter.start((m) => {
  if (m.frames % 30 !== 0) return;
  state.frameGaps = m.gaps();
  $('frames').textContent =
    `frame gaps over the last ~5 s: max ${state.frameGaps.max.toFixed(0)} ms, p95 ${state.frameGaps.p95.toFixed(0)} ms`;
});

/** Puts a saved run's settings back in the form and offers to continue it. */
function offerResume(run: SavedRun): void {
  state.resumable = { step: run.step, steps: run.steps };
  $<HTMLInputElement>('epochs').value = String(run.settings.epochs);
  $<HTMLInputElement>('images').value = String(run.settings.images);
  $<HTMLInputElement>('batch').value = String(run.settings.batchSize);
  $<HTMLInputElement>('augment').checked = run.settings.augment;
  const button = $<HTMLButtonElement>('resume');
  button.textContent = `Continue the last run (saved at step ${run.step} of ${run.steps})`;
  button.hidden = false;
}
$('resume').onclick = () => start(undefined, true);

const params = new URLSearchParams(location.search);
for (const key of ['epochs', 'images', 'batch', 'hf', 'hf-split', 'hf-endpoint'])
  if (params.has(key)) $<HTMLInputElement>(key).value = params.get(key)!;
if (params.get('autostart') === 'builtin') start();
if (params.get('autostart') === 'hub') $('hub').click();
savedRun().then((saved) => {
  state.checkedSaved = true;
  if (!saved || state.state === 'running') return;
  offerResume(saved);
  if (params.get('autostart') === 'resume') start(undefined, true);
}, fail);
