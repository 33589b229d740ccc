/**
 * How fast the tiny ViT learns the project's generated dataset (shapes on textured backgrounds,
 * 500×375 JPEGs, four classes), as held-out accuracy against training steps:
 *   npx deno run -A bench/vit-learn.ts [--images 4096] [--steps 3000] [--batch 32] [--lr 2e-3]
 *     [--warmup 100] [--init fan-in|0.02] [--augment] [--config '{"patchSize":4}']
 *     [--fit cover|stretch|contain] [--source 500x375] [--out docs/vit-learn.md]
 * The images are decoded once by the wasm pool to 32×32 and normalised on the CPU, so the figures
 * measure learning and the GPU step alone (the loader is measured by bench/overlap.ts). Every 5th
 * image is held out. Matrices start at N(0, 1/fan-in) (`--init fan-in`, the trainer's default) or
 * every normal tensor at N(0, s²) (`--init s`). `--augment` shifts each training image by up to 4 pixels (edges
 * repeated) and mirrors half of them, a fresh draw every time (the shapes keep their class).
 * The work itself is test/shared/vit-dataset-learning.ts, shared with the node-gpu accuracy test.
 */
import { acquireGpu } from '../src/gpu/index.ts';
import type { ViTConfig } from '../src/vit/index.ts';
import { learnGeneratedDataset, type LearningRow } from '../test/shared/vit-dataset-learning.ts';

declare const Deno: { args: string[]; writeTextFile(path: string, text: string): Promise<void>; version: { deno: string } };

const flag = (name: string, fallback: string) =>
  Deno.args.includes(`--${name}`) ? Deno.args[Deno.args.indexOf(`--${name}`) + 1]! : fallback;
const images = Number(flag('images', '4096'));
const steps = Number(flag('steps', '3000'));
const batch = Number(flag('batch', '32'));
const lr = Number(flag('lr', '2e-3'));
const warmup = Number(flag('warmup', '100'));
const init = flag('init', 'fan-in');
const outPath = flag('out', 'docs/vit-learn.md');
const augment = Deno.args.includes('--augment');
const overrides = JSON.parse(flag('config', '{}')) as Partial<ViTConfig>;
const fit = flag('fit', 'cover') as 'cover' | 'stretch' | 'contain';
const source = flag('source', '500x375').split('x').map(Number) as [number, number];

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

const text = `# How fast the tiny ViT learns the generated dataset

Command: \`npx deno run -A bench/vit-learn.ts --images ${images} --steps ${steps} --batch ${batch} --lr ${lr} --warmup ${warmup} --init ${init}${augment ? ' --augment' : ''}${Object.keys(overrides).length ? ` --config '${JSON.stringify(overrides)}'` : ''}\`
(Deno ${Deno.version.deno}, ${gpu.runtime}). ${images} generated ${source[0]}×${source[1]} JPEGs, ${result.classes.length} classes
(${result.classes.join(', ')}), decoded once to ${result.config.imageSize}×${result.config.imageSize} (${fit}); ${result.train} train / ${result.held} held out (every 5th).
Tiny preset (${JSON.stringify(result.config)}), AdamW, warmup ${warmup} steps then cosine to ${steps}, weight decay 0.05,
gradient clipping at 1; ${augment ? 'augmentation: shifts of up to 4 px and mirroring; ' : ''}init: ${init === 'fan-in' ? 'matrices N(0, 1/fan-in), class token and positions N(0, 0.02²)' : `N(0, ${init}²)`}.
Training loss and accuracy are over the steps since the previous row.

| step | seconds | train loss | train accuracy | held-out loss | held-out accuracy |
|---|---|---|---|---|---|
${result.rows.map(format).join('\n')}
`;
await Deno.writeTextFile(outPath, text);
console.log(`wrote ${outPath}`);
