import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ensureSyntheticFolder } from '../../src/sources/index.ts';
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
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
});

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
