// The demo page trains from a Hugging Face Hub dataset: a mock Hub on 127.0.0.1 (its tree API,
// `resolve` redirects to a storage host on another port, Range requests, CORS) holds the Parquet
// conversion of a small image dataset; the page's Hub field names it and its endpoint, and the
// training worker streams its row groups through the same session as a folder.
import { expect, it } from 'vitest';
import { MockHub, serveMockHub } from '../shared/hub-server.ts';
import { serveOnNode } from '../shared/node-serve.ts';
import { hubImageFile } from '../shared/parquet-loader-scenarios.ts';
import { sampleImages } from '../shared/transfer-scenarios.ts';
import { artifactPath, openDemo } from './serve.ts';

interface DemoState {
  state: string;
  steps: number;
  statusLog: string[];
  errors: string[];
  tryModel: { model: string; heldOut: number };
  points: () => Record<string, number>;
}
declare const tandemDemo: DemoState;

it('the Hub field: a dataset on a mock Hub (owner/name, split, endpoint) trains through the page, its ClassLabel names as classes', async () => {
  // 48 rows of 48×36 JPEGs in row groups of 16; labels r % 3, named cat, dog, bird by the ClassLabel.
  const rows = { bytes: sampleImages(48, 48).map((x) => x.bytes), labels: Array.from({ length: 48 }, (_, r) => r % 3) };
  const mock = new MockHub();
  mock.repos.set('tandem/shapes', { revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': hubImageFile(rows, 16) } } });
  const hub = await serveMockHub(serveOnNode, mock);
  const demo = await openDemo({ isolated: true, query: 'epochs=1&batch=16' });
  try {
    await demo.page.fill('#hf', 'tandem/shapes');
    await demo.page.fill('#hf-endpoint', hub.endpoint);
    await demo.page.click('#hub');
    await demo.page.waitForFunction(() => tandemDemo.state !== 'running', undefined, { timeout: 120_000 });
    await demo.page.waitForFunction(() => !['none', 'preparing'].includes(tandemDemo.tryModel.model), undefined, { timeout: 60_000 });
    const s = await demo.page.evaluate(() => ({ ...tandemDemo, points: tandemDemo.points() }));
    await demo.page.screenshot({ path: artifactPath('e2e-hub-demo.png'), fullPage: true });
    expect(s.errors).toEqual([]);
    expect(s.state).toBe('done');
    expect(s.steps).toBe(3); // 48 rows, none held out: 3 steps of 16
    expect(s.points.loss).toBeGreaterThan(0);
    expect(s.statusLog).toContain(
      'tandem/shapes (train): 48 rows in 3 row groups, columns image and label, classes cat, dog, bird; streamed, none held out',
    );
    expect(s.statusLog.some((l) => l.startsWith('training: 48 images, 3 classes, 3 steps of 16'))).toBe(true);
    expect(s.statusLog.at(-1)).toMatch(/^done: 3 steps in .*; 0 failed items$/);
    expect(s.tryModel).toMatchObject({ model: 'ready', heldOut: 0 });
    // Listed through the tree API, read from the storage host by Range requests only.
    expect(mock.hubRequests.some((r) => r.startsWith('GET /api/datasets/tandem/shapes/tree/refs%2Fconvert%2Fparquet'))).toBe(true);
    const served = mock.served.get('tandem/shapes/refs/convert/parquet/default/train/0000.parquet');
    expect(served?.bytes).toBeGreaterThan(0);
    expect(served?.ranges.filter((r) => r !== '-')).not.toEqual([]);
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
    await hub.close();
  }
});
