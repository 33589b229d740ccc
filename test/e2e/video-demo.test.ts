// The video demo page (demo/video.html) in headless Chromium: a folder of the generated
// moving-shapes videos chosen through its <input webkitdirectory>, trained with small settings.
// The decoder is set to WebCodecs: on this machine's CPU adapter (SwiftShader) 'auto' would take
// the wasm threads, and Chromium's VideoDecoder road is the one a page has over a Node script.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { artifactPath, openDemo } from './serve.ts';

interface VideoDemoState {
  state: string;
  steps: number;
  accuracy: number[];
  losses: { step: number; loss: number }[];
  roads: { webcodecs: number; wasm: number };
  classes: string[];
  videos: { train: number; held: number };
  failures: number;
  summary: string;
  error: string | undefined;
  frames: number;
  frameGaps: { max: number; p95: number };
}
declare const tandemVideoDemo: VideoDemoState;

const DIRECTIONS = ['down', 'left', 'right', 'up'];
const PER_CLASS = 8;

it('the video demo trains on a chosen folder of videos: WebCodecs clips, 20% of each class held out, a summary, no errors', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-videos-'));
  const from = join('test', 'fixtures', 'generated', 'moving-shapes');
  for (const cls of DIRECTIONS)
    for (const file of readdirSync(join(from, cls)).sort().slice(0, PER_CLASS))
      cpSync(join(from, cls, file), join(dir, 'videos', cls, file));
  const demo = await openDemo({ isolated: true, query: '' });
  try {
    await demo.page.goto(demo.url.replace(/\/\?.*$/, '/video.html?frames=4&stride=3&size=32&epochs=2&batch=8&backend=webcodecs'));
    expect(await demo.page.evaluate(() => tandemVideoDemo.state)).toBe('idle');
    await demo.page.locator('#folder').setInputFiles(join(dir, 'videos'));
    await demo.page.waitForFunction(() => tandemVideoDemo.state === 'running', undefined, { timeout: 10_000 });
    const framesAtStart = await demo.page.evaluate(() => tandemVideoDemo.frames);
    await demo.page.waitForFunction(() => tandemVideoDemo.state !== 'running', undefined, { timeout: 80_000 });
    const s = await demo.page.evaluate(() => tandemVideoDemo);
    await demo.page.screenshot({ path: artifactPath('e2e-video-demo.png'), fullPage: true });
    expect(s.error).toBeUndefined();
    expect(s.state).toBe('done');
    expect(s.classes).toEqual(DIRECTIONS);
    // 8 videos a class, round(20%) = 2 of each held out: 24 to train on → 3 batches of 8 an epoch.
    expect(s.videos).toEqual({ train: 24, held: 8 });
    expect(s.steps).toBe(6);
    // One clip per video per pass: 24 × 2 training clips and 8 × 2 held-out ones, every one through VideoDecoder.
    expect(s.roads).toEqual({ webcodecs: 64, wasm: 0 });
    expect(s.failures).toBe(0);
    expect(s.accuracy).toHaveLength(2);
    for (const a of s.accuracy) expect(Number.isInteger(a * 8) && a >= 0 && a <= 1).toBe(true); // a share of 8 clips
    // The loss is read back at step 1 only (every 10th step); a fresh 4-class head starts near ln 4.
    expect(s.losses.map((l) => l.step)).toEqual([1]);
    expect(s.losses[0]!.loss).toBeGreaterThan(0.5);
    expect(s.losses[0]!.loss).toBeLessThan(3);
    expect(s.summary).toMatch(/^source 24 .*→ consumer .*\| bottleneck: /);
    expect(await demo.page.locator('#summary').textContent()).toBe(s.summary);
    expect(await demo.page.locator('#roads').textContent()).toContain('64 through WebCodecs');
    // The page kept drawing while it trained on its own thread.
    expect(s.frames).toBeGreaterThan(framesAtStart);
    console.log(
      `video demo: frame gaps max ${s.frameGaps.max.toFixed(0)} ms, p95 ${s.frameGaps.p95.toFixed(0)} ms; accuracy ${s.accuracy}`,
    );
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
