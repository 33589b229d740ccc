// "Try your model", the end of the demo: once a run finishes, the worker's predictions on the
// held-out images become a grid (wrong ones marked) and a confusion matrix, and files dropped on
// the drop zone (or chosen with its file input) are classified by the trained model in the worker.
// Everything shown comes from the model's outputs; nothing is computed from the labels alone.
import type { Classified, FromWorker } from './protocol.ts';

type HeldOut = Extract<FromWorker, { type: 'held-out' }>;

/** How many classes a classified file lists, most probable first. */
const TOP = 5;

/** What the section shows, as plain data on `window.tandemDemo.tryModel` for tests and readers. */
export interface TryModelState {
  /** 'none' before a finished run, 'preparing' until its held-out predictions arrive, 'released' after Stop. */
  model: 'none' | 'preparing' | 'ready' | 'released';
  /** Held-out images the model predicted, and those that failed to decode. */
  heldOut: number;
  failed: number;
  /** Images in the grid, and how many of them are marked wrong. */
  shown: number;
  wrong: number;
  /** Counts: rows are true classes, columns predicted ones. */
  confusion: number[][];
  /** The matrix's diagonal over its total (NaN when empty). */
  accuracy: number;
  /** Each held-out prediction: the model's class and its probability. */
  predictions: { key: string; label: number; predicted: number; probability: number }[];
  /** Every file sent to the model, in order; `probabilities` or `error` once answered. */
  classified: { name: string; probabilities?: number[]; top?: { label: string; probability: number }[]; code?: string; error?: string }[];
}

/** The decoder's error codes in words (the rest show the decoder's own message). */
const DECODE_WORDS: Record<string, string> = {
  'unknown-format': 'not an image the decoder reads (JPEG, PNG, WebP, BMP or GIF)',
  empty: 'the file is empty',
  truncated: 'the image is cut short',
  corrupt: 'the image data is corrupt',
  'too-large': 'the image is too large to decode',
};

export class TryModel {
  readonly state: TryModelState = emptyState();
  #classes: readonly string[] = [];
  #urls: string[] = [];
  #nextId = 1;
  /** Classify requests in flight: their index in state.classified and their list entry. */
  readonly #pending = new Map<number, { index: number; item: HTMLLIElement }>();
  readonly #el: {
    section: HTMLElement;
    status: HTMLElement;
    grid: HTMLElement;
    confusion: HTMLTableElement;
    drop: HTMLElement;
    input: HTMLInputElement;
    results: HTMLOListElement;
  };

  /** `send` posts a 'classify' to the worker; false when there is no worker to ask. */
  constructor(
    root: Document,
    private readonly send: (m: { id: number; name: string; file: Blob }) => boolean,
  ) {
    const $ = <T extends HTMLElement>(id: string) => root.getElementById(id) as T;
    this.#el = {
      section: $('try'),
      status: $('try-status'),
      grid: $('held-grid'),
      confusion: $<HTMLTableElement>('confusion'),
      drop: $('drop'),
      input: $<HTMLInputElement>('classify-file'),
      results: $<HTMLOListElement>('classified'),
    };
    const { drop, input } = this.#el;
    input.onchange = () => {
      for (const file of input.files ?? []) this.classify(file);
      input.value = ''; // choosing the same file again classifies it again
    };
    // The page's own drop handler starts training on a dropped folder; the zone keeps its drops.
    drop.ondragover = (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      drop.classList.add('over');
    };
    drop.ondragleave = () => drop.classList.remove('over');
    drop.ondrop = (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      drop.classList.remove('over');
      for (const file of ev.dataTransfer?.files ?? []) this.classify(file);
    };
  }

  /** A new run: the last run's results go, with their object URLs. */
  reset(): void {
    for (const url of this.#urls) URL.revokeObjectURL(url);
    this.#urls = [];
    this.#pending.clear();
    Object.assign(this.state, emptyState());
    this.#el.section.hidden = true;
    this.#el.grid.replaceChildren();
    this.#el.confusion.replaceChildren();
    this.#el.results.replaceChildren();
  }

  preparing(): void {
    this.state.model = 'preparing';
    this.#el.section.hidden = false;
    this.#el.drop.hidden = true;
    this.#el.status.textContent = 'Running the trained model on the held-out images…';
  }

  showHeldOut(m: HeldOut): void {
    this.#classes = m.classes;
    const k = m.classes.length;
    const confusion = Array.from({ length: k }, () => new Array<number>(k).fill(0));
    const predictions = m.predictions.map((p) => {
      const predicted = argmax(p.probabilities);
      const row = confusion[p.label];
      if (row && predicted < k) row[predicted]!++;
      return { key: p.key, label: p.label, predicted, probability: p.probabilities[predicted] ?? NaN };
    });
    const total = confusion.flat().reduce((a, b) => a + b, 0);
    const hits = confusion.reduce((n, row, i) => n + (row[i] ?? 0), 0);
    const s = this.state;
    Object.assign(s, { model: 'ready', heldOut: predictions.length, failed: m.failures.length, confusion, predictions });
    s.accuracy = total ? hits / total : NaN;
    this.#drawGrid(predictions, m.images);
    this.#drawConfusion(confusion);
    this.#el.confusion.hidden = predictions.length === 0; // nothing held out: no matrix of zeros
    const failed = m.failures.length ? `; ${m.failures.length} could not be decoded` : '';
    const heldOut = predictions.length
      ? `The trained model on the ${predictions.length} held-out images: ${hits} right (${pct(s.accuracy)})${failed}. `
      : 'No images were held out (a dataset streamed from the Hub or Parquet files). ';
    this.#el.status.textContent = `${heldOut}Drop an image below to classify it, through the same decode and normalisation as training.`;
    this.#el.drop.hidden = false;
  }

  /** Sends `file` to the worker and lists it as pending until the answer comes. */
  classify(file: File): void {
    const index = this.state.classified.push({ name: file.name }) - 1;
    const item = document.createElement('li');
    const url = URL.createObjectURL(file);
    this.#urls.push(url);
    const img = new Image();
    img.alt = '';
    img.onerror = () => img.remove(); // no thumbnail for a file the browser cannot show either
    img.src = url;
    const text = document.createElement('div');
    text.append(bold(file.name), ' — classifying…');
    item.append(img, text);
    this.#el.results.prepend(item);
    const id = this.#nextId++;
    this.#pending.set(id, { index, item });
    if (!this.send({ id, name: file.name, file }))
      this.showClassified({ id, failure: { key: file.name, code: 'error', message: 'the model was released' } });
  }

  showClassified(m: Classified): void {
    const pending = this.#pending.get(m.id);
    if (!pending) return; // an answer for a run that has since been reset
    this.#pending.delete(m.id);
    const entry = this.state.classified[pending.index]!;
    const text = pending.item.querySelector('div')!;
    text.replaceChildren(bold(entry.name));
    if ('failure' in m) {
      const f = m.failure;
      entry.code = f.code;
      entry.error =
        f.code === 'error' ? `could not be classified: ${f.message}` : `${DECODE_WORDS[f.code] ?? f.message} (DecodeError ${f.code})`;
      pending.item.className = 'failed';
      text.append(`: ${entry.error}`);
      return;
    }
    entry.probabilities = m.probabilities;
    entry.top = m.probabilities
      .map((probability, i) => ({ label: this.#label(i), probability }))
      .sort((a, b) => b.probability - a.probability)
      .slice(0, TOP);
    const bars = document.createElement('ul');
    bars.className = 'top';
    for (const t of entry.top) {
      const li = document.createElement('li');
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.width = `${(t.probability * 100).toFixed(1)}%`;
      li.append(bar, `${t.label} ${pct(t.probability)}`);
      bars.append(li);
    }
    text.append(bars);
  }

  /** The worker freed the model (Stop): results stay on the page, the drop zone goes. */
  released(why = 'The trained model was released; train again to try another.'): void {
    if (this.state.model === 'none') return;
    this.state.model = 'released';
    this.#el.drop.hidden = true;
    this.#el.status.textContent = why;
    for (const [id] of this.#pending) this.showClassified({ id, failure: { key: '', code: 'error', message: 'the model was released' } });
  }

  #label(i: number): string {
    return this.#classes[i] ?? `class ${i}`;
  }

  #drawGrid(predictions: TryModelState['predictions'], images: HeldOut['images']): void {
    const byKey = new Map(predictions.map((p) => [p.key, p]));
    let wrong = 0;
    const figures = images.flatMap(({ key, file }) => {
      const p = byKey.get(key);
      if (!p) return [];
      const right = p.predicted === p.label;
      if (!right) wrong++;
      const url = URL.createObjectURL(file);
      this.#urls.push(url);
      const figure = document.createElement('figure');
      figure.className = right ? 'right' : 'wrong';
      figure.title = key;
      const img = new Image();
      img.src = url;
      img.alt = `held-out image ${key}`;
      const caption = document.createElement('figcaption');
      // A mark and words as well as the colour: wrong ones read as wrong without colour vision.
      caption.append(`${right ? '✓' : '✗'} ${this.#label(p.predicted)} ${pct(p.probability)}`);
      if (!right) caption.append(document.createElement('br'), `true: ${this.#label(p.label)}`);
      figure.append(img, caption);
      return [figure];
    });
    this.#el.grid.replaceChildren(...figures);
    this.state.shown = figures.length;
    this.state.wrong = wrong;
  }

  #drawConfusion(confusion: number[][]): void {
    const table = this.#el.confusion;
    const caption = table.createCaption();
    caption.textContent = 'Held-out images: true class (rows) × predicted class (columns)';
    const head = table.createTHead().insertRow();
    head.append(cell('th', 'true \\ predicted'), ...this.#classes.map((c) => cell('th', c, 'col')));
    const body = table.createTBody();
    confusion.forEach((row, i) => {
      const tr = body.insertRow();
      tr.append(cell('th', this.#label(i), 'row'));
      const n = row.reduce((a, b) => a + b, 0);
      row.forEach((count, j) => {
        const td = cell('td', String(count));
        td.className = count === 0 ? 'zero' : i === j ? 'hit' : 'miss';
        // Shade by the row's share, light enough that the dark count stays readable at full share.
        if (count) td.style.setProperty('--share', (count / n).toFixed(3));
        tr.append(td);
      });
    });
  }
}

function emptyState(): TryModelState {
  return { model: 'none', heldOut: 0, failed: 0, shown: 0, wrong: 0, confusion: [], accuracy: NaN, predictions: [], classified: [] };
}

function argmax(values: readonly number[]): number {
  // First maximum wins, as in the loss kernel's accuracy count.
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function bold(text: string): HTMLElement {
  const b = document.createElement('strong');
  b.textContent = text;
  return b;
}

function cell(tag: 'th' | 'td', text: string, scope?: 'row' | 'col'): HTMLTableCellElement {
  const c = document.createElement(tag);
  c.textContent = text;
  if (scope) c.scope = scope;
  return c;
}
