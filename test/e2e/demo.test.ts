import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ensureSyntheticFolder } from '../../src/sources/index.ts';
import { encodeJpeg, encodePng, labelFor, renderSample, SHAPE_NAMES } from '../../src/synthetic/index.ts';
import { loadTimmWeights } from '../../src/vit/index.ts';
import { smallTimmFile } from '../shared/timm-scenarios.ts';
import { bodyMoveBound, bodyMoved } from '../shared/train-scenarios.ts';
import { artifactPath, openDemo } from './serve.ts';

interface DemoState {
  state: string;
  crossOriginIsolated: boolean;
  decodeMode: string | undefined;
  message: string;
  steps: number;
  previews: number;
  checkpointBytes: number;
  weightsBytes: number;
  statusLog: string[];
  savedStep: number;
  resumable: { step: number; steps: number } | undefined;
  checkedSaved: boolean;
  errors: string[];
  heldOutAccuracy: number | undefined;
  tryModel: {
    model: string;
    heldOut: number;
    failed: number;
    shown: number;
    wrong: number;
    confusion: number[][];
    accuracy: number;
    predictions: { key: string; label: number; predicted: number; probability: number }[];
    classified: { name: string; probabilities?: number[]; top?: { label: string; probability: number }[]; code?: string; error?: string }[];
  };
  frameGaps: { max: number; p95: number };
  points: () => Record<string, number>;
}
declare const tandemDemo: DemoState;

const snapshot = () => ({ ...tandemDemo, points: tandemDemo.points() });
/** The trained weights the page offers (timm layout), as bytes. */
const downloadWeights = async () => [
  ...new Uint8Array(await (await fetch(document.querySelector<HTMLAnchorElement>('#weights-download')!.href)).arrayBuffer()),
];

it('the demo page trains on the built-in data: charts grow, the batch grid is drawn, nothing logs an error', async () => {
  const demo = await openDemo({ isolated: true, query: 'autostart=builtin&images=96&epochs=2&batch=16' });
  try {
    await demo.page.waitForFunction(() => (tandemDemo.points().loss ?? 0) >= 2 && tandemDemo.previews >= 1, undefined, {
      timeout: 300_000,
    });
    const early = await demo.page.evaluate(snapshot);
    const gridBefore = await demo.page.locator('#grid').screenshot();
    await demo.page.waitForFunction(() => tandemDemo.state !== 'running', undefined, { timeout: 400_000 });
    const late = await demo.page.evaluate(snapshot);
    await demo.page.screenshot({ path: artifactPath('e2e-demo.png'), fullPage: true });
    expect(late.errors).toEqual([]);
    expect(late.state).toBe('done');
    expect(late.crossOriginIsolated).toBe(true);
    expect(late.decodeMode).toBe('pthreads');
    expect(late.steps).toBe(10); // 77 training images × 2 epochs / 16
    expect(late.checkpointBytes).toBeGreaterThan(4 * 10_000); // the tiny ViT's weights and AdamW moments, offered for download
    expect(await demo.page.locator('#checkpoint').isVisible()).toBe(true);
    for (const chart of ['loss', 'accuracy', 'throughput', 'waited']) expect(late.points[chart]).toBeGreaterThan(early.points[chart] ?? 0);
    expect(late.points.occupancy).toBeGreaterThan(0);
    expect(late.points.queues).toBeGreaterThan(0);
    expect(late.previews).toBeGreaterThan(early.previews);
    expect((await demo.page.locator('#grid').screenshot()).equals(gridBefore)).toBe(false); // a later batch
    expect(await demo.page.locator('#mode').textContent()).toContain('Cross-origin isolated');
    await tryTheModel(demo.page, late.heldOutAccuracy);
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
});

/** The built-in data as the demo's worker generates it (syntheticData's defaults: seed 0, 4 classes, 160×120). */
const builtin = (index: number) => renderSample(0, index, { width: 160, height: 120, classes: 4 });

/**
 * "Try your model" after the run above (96 images, every 5th held out: 19): the grid and the
 * confusion matrix show the model's predictions on all of them, agreeing with the held-out accuracy
 * the session reported; files chosen through the drop zone's input are classified by the model.
 */
async function tryTheModel(page: import('playwright-core').Page, reported: number | undefined): Promise<void> {
  await page.waitForFunction(() => tandemDemo.tryModel.model === 'ready', undefined, { timeout: 60_000 });
  const t = (await page.evaluate(snapshot)).tryModel;
  const heldIndices = Array.from({ length: 96 }, (_, i) => i).filter((i) => i % 5 === 4);
  expect(t.heldOut).toBe(heldIndices.length);
  expect(t.failed).toBe(0);
  expect(t.shown).toBe(19);
  expect(await page.locator('#held-grid figure').count()).toBe(19);
  const wrong = t.predictions.filter((p) => p.predicted !== p.label).length;
  expect(t.wrong).toBe(wrong);
  expect(await page.locator('#held-grid figure.wrong').count()).toBe(wrong);
  // The matrix's rows are the held-out images' true classes, as the data generator labels them.
  const perClass = [0, 1, 2, 3].map((c) => heldIndices.filter((i) => labelFor(0, i, 4) === c).length);
  expect(t.confusion.map((row) => row.reduce((a, b) => a + b, 0))).toEqual(perClass);
  const cells = await page.locator('#confusion tbody td').allTextContents();
  expect(cells.map(Number)).toEqual(t.confusion.flat());
  const diagonal = t.confusion.reduce((n, row, i) => n + row[i]!, 0);
  expect(t.accuracy).toBe(diagonal / 19);
  // The same images the session evaluated after the last epoch: the same count of right ones.
  expect(reported).toBeDefined();
  expect(Math.abs(diagonal - reported! * 19)).toBeLessThan(0.5);

  // One held-out image again (its exact bytes), one image the run never saw (a PNG), one text file.
  const held = builtin(4);
  const unseen = builtin(1000);
  await page.locator('#classify-file').setInputFiles([
    { name: 'held-4.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(encodeJpeg(held.rgb, 160, 120, { quality: 90 })) },
    { name: 'unseen.png', mimeType: 'image/png', buffer: Buffer.from(encodePng(unseen.rgb, 160, 120)) },
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image, just words\n') },
  ]);
  await page.waitForFunction(
    () => tandemDemo.tryModel.classified.length === 3 && tandemDemo.tryModel.classified.every((c) => c.probabilities || c.error),
    undefined,
    { timeout: 30_000 },
  );
  const [again, fresh, text] = (await page.evaluate(snapshot)).tryModel.classified;
  const classes = SHAPE_NAMES.slice(0, 4) as readonly string[];
  for (const c of [again!, fresh!]) {
    expect(c.error).toBeUndefined();
    expect(c.probabilities).toHaveLength(4);
    for (const p of c.probabilities!) expect(p).toBeGreaterThanOrEqual(0);
    expect(c.probabilities!.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    expect(classes).toContain(c.top![0]!.label);
  }
  // Same bytes, same decode, same model: the answer the grid shows for that held-out image. (After
  // two short epochs the model is not reliably right, so no particular class is required.)
  const inGrid = t.predictions.find((p) => p.key === `synthetic/${held.className}/4`)!;
  expect(again!.top![0]!.label).toBe(classes[inGrid.predicted]);
  expect(again!.top![0]!.probability).toBeCloseTo(inGrid.probability, 4);
  expect(text!.code).toBe('unknown-format');
  const shown = await page.locator('#classified li.failed').textContent();
  expect(shown).toContain('notes.txt');
  expect(shown).toContain('DecodeError unknown-format');

  // A file dropped on the zone goes to the model, not to the page's folder drop (a new run).
  const dropped = await page.evaluate(async () => {
    const first = document.querySelector<HTMLElement>('#held-grid figure')!;
    const blob = await (await fetch(first.querySelector('img')!.src)).blob();
    const data = new DataTransfer();
    data.items.add(new File([blob], 'dropped.jpg', { type: 'image/jpeg' }));
    document.querySelector('#drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    return first.title; // the held-out image's key
  });
  await page.waitForFunction(() => tandemDemo.tryModel.classified[3]?.probabilities !== undefined, undefined, { timeout: 30_000 });
  const afterDrop = await page.evaluate(snapshot);
  expect(afterDrop.state).toBe('done');
  const predicted = t.predictions.find((p) => p.key === dropped)!.predicted;
  expect(afterDrop.tryModel.classified[3]!.top![0]!.label).toBe(classes[predicted]);

  // Stop releases the model in the worker (GPU device and decode pool), then the worker ends.
  expect(await page.locator('#stop').textContent()).toBe('Release the model');
  await page.click('#stop');
  await page.waitForFunction(() => tandemDemo.tryModel.model === 'released', undefined, { timeout: 30_000 });
  expect(await page.locator('#drop').isVisible()).toBe(false);
  await page.screenshot({ path: artifactPath('e2e-demo-try-model.png'), fullPage: true });
  expect((await page.evaluate(snapshot)).errors).toEqual([]);
}

it('without COOP/COEP the page trains in the fallback mode and says so', async () => {
  const demo = await openDemo({ isolated: false, query: 'autostart=builtin&images=48&epochs=1&batch=16' });
  try {
    await demo.page.waitForFunction(() => tandemDemo.state !== 'running' && tandemDemo.state !== 'idle', undefined, { timeout: 400_000 });
    const s = await demo.page.evaluate(snapshot);
    await demo.page.screenshot({ path: artifactPath('e2e-demo-fallback.png'), fullPage: true });
    const banner = (await demo.page.locator('#mode').textContent()) ?? '';
    expect(s.crossOriginIsolated).toBe(false);
    expect(s.state).toBe('done');
    expect(s.decodeMode).toBe('workers');
    expect(banner).toContain('Fallback mode');
    expect(s.points.loss).toBeGreaterThan(0);
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
});

it('the built demo (vite build + preview) loads, trains a few steps, and stops on request', async () => {
  const demo = await openDemo({ isolated: true, built: true, query: 'autostart=builtin&images=96&epochs=4&batch=16' });
  try {
    await demo.page.waitForFunction(() => (tandemDemo.points().loss ?? 0) >= 1, undefined, { timeout: 300_000 });
    await demo.page.click('#stop');
    await demo.page.waitForFunction(() => tandemDemo.state !== 'running', undefined, { timeout: 300_000 });
    const s = await demo.page.evaluate(snapshot);
    expect(s.state).toBe('done');
    expect(s.message).toMatch(/^stopped: /);
    expect(s.steps).toBeLessThan(20); // 77 × 4 / 16 = 20 steps had it not stopped
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
});

it('a folder chosen on the page (<input webkitdirectory>) is labelled by subfolder and fine-tuned from chosen timm-layout weights', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-picked-'));
  await ensureSyntheticFolder(dir, { count: 48, width: 200, height: 150 });
  const demo = await openDemo({ isolated: true, query: 'epochs=1&batch=16' });
  try {
    // Fine-tuned from timm-layout weights chosen on the page: a 10-class model gets a 4-class head.
    const start = smallTimmFile();
    await demo.page
      .locator('#weights')
      .setInputFiles({ name: 'start.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(start) });
    await demo.page.locator('#folder').setInputFiles(dir);
    await demo.page.waitForFunction(() => tandemDemo.state === 'done' || tandemDemo.state === 'error', undefined, { timeout: 300_000 });
    const s = await demo.page.evaluate(snapshot);
    expect(s.errors).toEqual([]);
    expect(s.steps).toBe(3); // 48 files, every 5th held out: 39 / 16 → 3 steps
    expect(await demo.page.locator('#grid').isVisible()).toBe(true);
    expect(s.statusLog.some((l) => l.startsWith('weights: ViT 32px') && l.includes('new head for 4 classes'))).toBe(true);
    expect(s.weightsBytes).toBeGreaterThan(0);
    const saved = await demo.page.evaluate(async () => [
      ...new Uint8Array(await (await fetch(document.querySelector<HTMLAnchorElement>('#weights-download')!.href)).arrayBuffer()),
    ]);
    const after = loadTimmWeights(Uint8Array.from(saved));
    const before = loadTimmWeights(start, { classes: 4 });
    expect(after.config.classes).toBe(4);
    const moved = bodyMoved(after.params, before.params, after.config);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(bodyMoveBound(3, 2e-3)); // trained from the chosen weights, not from a fresh start
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a run on the built-in data is saved in OPFS as it goes; after a reload it continues and ends with the weights of a run that never stopped', async () => {
  const settings = 'images=96&epochs=4&batch=16'; // 77 training images: 20 steps, a checkpoint every 4
  const whole = await openDemo({ isolated: true, query: `autostart=builtin&${settings}` });
  let uninterrupted: number[];
  try {
    await whole.page.waitForFunction(() => tandemDemo.state !== 'running', undefined, { timeout: 400_000 });
    expect((await whole.page.evaluate(snapshot)).steps).toBe(20);
    uninterrupted = await whole.page.evaluate(downloadWeights);
  } finally {
    await whole.close();
  }
  const demo = await openDemo({ isolated: true, query: `autostart=builtin&${settings}` });
  try {
    await demo.page.waitForFunction(() => tandemDemo.savedStep >= 8, undefined, { timeout: 400_000 });
    // Leaving mid-run (here: the same page without autostart) kills the worker, as a closed tab does.
    const again = demo.url.replace('autostart=builtin&', '');
    await demo.page.goto(again);
    await demo.page.waitForFunction(() => tandemDemo.checkedSaved, undefined, { timeout: 60_000 });
    const offered = (await demo.page.evaluate(snapshot)).resumable;
    expect(offered?.steps).toBe(20);
    expect(offered?.step).toBeGreaterThanOrEqual(8);
    expect(await demo.page.locator('#resume').isVisible()).toBe(true);
    await demo.page.click('#resume');
    await demo.page.waitForFunction(() => tandemDemo.state !== 'running', undefined, { timeout: 400_000 });
    const s = await demo.page.evaluate(snapshot);
    expect(s.errors).toEqual([]);
    expect(s.state).toBe('done');
    expect(s.steps).toBe(20);
    expect(s.statusLog).toContain(`resumed at step ${offered!.step}`);
    expect(await demo.page.evaluate(downloadWeights)).toEqual(uninterrupted);
    // A finished run is forgotten: the next visit offers nothing to continue.
    await demo.page.goto(again);
    await demo.page.waitForFunction(() => tandemDemo.checkedSaved, undefined, { timeout: 60_000 });
    expect((await demo.page.evaluate(snapshot)).resumable).toBeUndefined();
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
});
