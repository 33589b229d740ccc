// The text demo page (demo/text.html) in headless Chromium (WebGPU on SwiftShader): "use the
// generated corpus", a short training run through the tokenizer workers and the text loader, the
// loss falling, the held-out evaluation, the padding and bottleneck lines, then the prompt box.
import { expect, it } from 'vitest';
import { CORPUS_ALPHABET } from '../../src/synthetic/index.ts';
import { artifactPath, openDemo } from './serve.ts';

interface TextDemoState {
  state: string;
  steps: number;
  losses: { step: number; loss: number; accuracy: number }[];
  heldOut: { step: number; loss: number; accuracy: number }[];
  vocabSize: number;
  paddingShare: number;
  tokensPerSecond: number;
  bottleneck: string;
  summary: string;
  failures: number;
  completion: string;
  completing: boolean;
  error: string | undefined;
  frames: number;
}
declare const tandemTextDemo: TextDemoState;

const STEPS = 12;

it('the text demo trains the tiny GPT on the generated corpus: the loss falls, then the prompt box continues text in the corpus alphabet', async () => {
  const demo = await openDemo({ isolated: true, query: '' });
  try {
    const query = `steps=${STEPS}&batch=4&context=32&documents=300&pack=best-fit&complete=24`;
    await demo.page.goto(demo.url.replace(/\/\?.*$/, `/text.html?${query}`));
    expect(await demo.page.evaluate(() => tandemTextDemo.state)).toBe('idle');
    expect(await demo.page.locator('#prompt-box').isHidden()).toBe(true);
    await demo.page.locator('#generated').click();
    await demo.page.waitForFunction(() => tandemTextDemo.state !== 'running', undefined, { timeout: 60_000 });
    const s = await demo.page.evaluate(() => tandemTextDemo);
    expect(s.error).toBeUndefined();
    expect(s.state).toBe('done');
    expect(s.steps).toBe(STEPS);
    expect(s.vocabSize).toBe(CORPUS_ALPHABET.length + 2);
    // Read back every ceil(12 / 10) = 2 steps; a fresh model starts near ln 24 = 3.18 nats.
    expect(s.losses.map((l) => l.step)).toEqual([2, 4, 6, 8, 10, 12]);
    const first = s.losses[0]!;
    const last = s.losses.at(-1)!;
    expect(first.loss).toBeGreaterThan(2.5);
    expect(last.loss).toBeLessThan(0.9 * first.loss);
    // Evaluated before the first step, every max(5, 12 / 5) = 5 steps and at the end, on the same held-out batches.
    expect(s.heldOut.map((h) => h.step)).toEqual([0, 5, 10, 12]);
    expect(s.heldOut[0]!.loss).toBeGreaterThan(2.9);
    expect(s.heldOut.at(-1)!.loss).toBeLessThan(0.9 * s.heldOut[0]!.loss);
    // best-fit fills rows of 33 nearly full (docs/bench/text.md: under 1% on this corpus); the share is a number in [0, 0.1).
    expect(s.paddingShare).toBeGreaterThanOrEqual(0);
    expect(s.paddingShare).toBeLessThan(0.1);
    expect(s.failures).toBe(0);
    expect(s.summary).toMatch(/tokenize\[\d+\].*→ \*?consumer .*\| bottleneck: /);
    expect(await demo.page.locator('#bottleneck').textContent()).toBe(`bottleneck: ${s.bottleneck}`);
    expect(await demo.page.locator('#packing').textContent()).toMatch(/padding \d+\.\d% of the positions/);
    expect(await demo.page.locator('#prompt-box').isVisible()).toBe(true);
    await demo.page.locator('#prompt').fill('the dogs');
    await demo.page.locator('#continue').click();
    await demo.page.waitForFunction(() => tandemTextDemo.completion !== '' && !tandemTextDemo.completing, undefined, { timeout: 30_000 });
    const completion = await demo.page.evaluate(() => tandemTextDemo.completion);
    expect(completion.length).toBeGreaterThan(0);
    expect(completion.length).toBeLessThanOrEqual(24);
    expect([...completion].every((c) => CORPUS_ALPHABET.includes(c))).toBe(true);
    expect(await demo.page.locator('#completion').textContent()).toBe(`the dogs${completion}`);
    await demo.page.screenshot({ path: artifactPath('e2e-text-demo.png'), fullPage: true });
    console.log(
      `text demo: loss ${s.losses.map((l) => l.loss.toFixed(3)).join(' → ')}, held-out ${s.heldOut.map((h) => h.loss.toFixed(3)).join(' → ')}, ` +
        `${s.tokensPerSecond.toFixed(0)} tokens/s, padding ${(100 * s.paddingShare).toFixed(1)}%, completion ${JSON.stringify(completion)}`,
    );
    expect(demo.errors).toEqual([]);
  } finally {
    await demo.close();
  }
}, 90_000);
