/**
 * How fast the tiny ViT learns the project's generated dataset (shapes on textured backgrounds,
 * 500×375 JPEGs, four classes), as held-out accuracy against training steps:
 *   npx deno run -A bench/vit-learn.ts [--images 4096] [--steps 3000] [--batch 32] [--lr 2e-3]
 *     [--warmup 100] [--init fan-in|0.02] [--augment] [--config '{"patchSize":4}']
 *     [--fit cover|stretch|contain] [--source 500x375] [--out docs/bench/vit-learn.md] [--smoke]
 * The images are decoded once by the wasm pool to 32×32 and normalised on the CPU, so the figures
 * measure learning and the GPU step alone (the loader is measured by bench/overlap.ts). Every 5th
 * image is held out. Matrices start at N(0, 1/fan-in) (`--init fan-in`, the trainer's default) or
 * every normal tensor at N(0, s²) (`--init s`). `--augment` shifts each training image by up to 4 pixels (edges
 * repeated) and mirrors half of them, a fresh draw every time (the shapes keep their class).
 * The work itself is test/shared/vit-dataset-learning.ts, shared with the node-gpu accuracy test.
 * --smoke (bench/shared/args.ts): 40 images, 4 steps of 8 with 2 warm-up steps, --augment, the
 * report under test-results/bench-smoke/.
 */
import { acquireGpu } from '../src/gpu/index.ts';
import type { ViTConfig } from '../src/vit/index.ts';
import { learnGeneratedDataset, type LearningRow } from '../test/shared/vit-dataset-learning.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';

declare const Deno: { writeTextFile(path: string, text: string): Promise<void>; version: { deno: string } };

const args = benchArgs('vit-learn', {
  images: { type: 'number', default: 4096, smoke: 40 },
  steps: { type: 'number', default: 3000, smoke: 4 },
  batch: { type: 'number', default: 32, smoke: 8 },
  lr: { type: 'number', default: 2e-3 },
  warmup: { type: 'number', default: 100, smoke: 2 },
  init: { type: 'string', default: 'fan-in', help: "'fan-in' or a standard deviation" },
  augment: { type: 'boolean', smoke: true },
  config: { type: 'string', default: '{}', help: 'JSON overrides of the tiny preset' },
  fit: { type: 'string', default: 'cover', help: 'cover, stretch or contain' },
  source: { type: 'string', default: '500x375', help: 'the generated JPEGs, WxH' },
  out: { type: 'string', default: 'docs/bench/vit-learn.md', smoke: smokeOut('vit-learn.md') },
});
const { images, steps, batch, lr, warmup, init, augment, out: outPath } = args.values;
const overrides = JSON.parse(args.values.config) as Partial<ViTConfig>;
const fit = args.values.fit as 'cover' | 'stretch' | 'contain';
const source = args.values.source.split('x').map(Number) as [number, number];
const loadAtStart = machineLoad();

const gpu = await acquireGpu();
const format = (r: LearningRow) =>
  `| ${r.step} | ${r.seconds.toFixed(0)} | ${r.trainLoss.toFixed(3)} | ${(r.trainAccuracy * 100).toFixed(1)}% | ${r.heldLoss.toFixed(3)} | ${(r.heldAccuracy * 100).toFixed(1)}% |`;
const result = await learnGeneratedDataset(gpu.device, {
  images,
  steps,
  batch,
  lr,
  warmup,
  augment,
  fit,
  source,
  config: overrides,
  init: init === 'fan-in' ? 'fan-in' : Number(init),
  evalEvery: Math.max(50, Math.floor(steps / 12)),
  onRow: (row) => console.log(format(row)),
});
gpu.close();
const loadAtEnd = machineLoad();

const text = `# How fast the tiny ViT learns the generated dataset

Command: \`npx deno run -A bench/vit-learn.ts --images ${images} --steps ${steps} --batch ${batch} --lr ${lr} --warmup ${warmup} --init ${init}${augment ? ' --augment' : ''}${Object.keys(overrides).length ? ` --config '${JSON.stringify(overrides)}'` : ''}\`
(Deno ${Deno.version.deno}, ${gpu.runtime}). ${images} generated ${source[0]}×${source[1]} JPEGs, ${result.classes.length} classes
(${result.classes.join(', ')}), decoded once to ${result.config.imageSize}×${result.config.imageSize} (${fit}); ${result.train} train / ${result.held} held out (every 5th).
Tiny preset (${JSON.stringify(result.config)}), AdamW, warmup ${warmup} steps then cosine to ${steps}, weight decay 0.05,
gradient clipping at 1; ${augment ? 'augmentation: shifts of up to 4 px and mirroring; ' : ''}init: ${init === 'fan-in' ? 'matrices N(0, 1/fan-in), class token and positions N(0, 0.02²)' : `N(0, ${init}²)`}.
Training loss and accuracy are over the steps since the previous row.

${machineLines(loadAtStart, loadAtEnd).join('\n')}

| step | seconds | train loss | train accuracy | held-out loss | held-out accuracy |
|---|---|---|---|---|---|
${result.rows.map(format).join('\n')}
`;
await Deno.writeTextFile(outPath, text);
console.log(`wrote ${outPath}`);
const last = result.rows.at(-1);
args.done(`${result.rows.length} rows; step ${last?.step ?? '?'}: held-out accuracy ${last ? (last.heldAccuracy * 100).toFixed(1) : '?'}%`);
