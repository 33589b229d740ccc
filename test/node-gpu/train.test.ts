import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  cliResumesFromItsCheckpoint,
  failedOpenReleasesWhatItMade,
  shortTrainingRunReports,
  trainingFromShards,
  trainingFromTimmWeights,
} from '../shared/train-scenarios.ts';

it('tandem train runs end to end: files → wasm decode → GPU ring → WGSL augment → ViT steps → evaluation → JSON + HTML reports', {
  timeout: 300_000,
}, async () => {
  const report = await shortTrainingRunReports(mkdtempSync(join(tmpdir(), 'tandem-')));
  expect(report.epochs).toHaveLength(2);
});

it('tandem shards, then tandem train --shards: the generated dataset streamed from tar shards', { timeout: 300_000 }, async () => {
  const report = await trainingFromShards(mkdtempSync(join(tmpdir(), 'tandem-shards-')));
  expect(report.steps).toBe(12);
});

it('a training session that fails while opening stops the pool threads it started', { timeout: 60_000 }, failedOpenReleasesWhatItMade);

it('tandem train --weights fine-tunes from timm-layout weights with a new head; --save-weights writes them back', {
  timeout: 300_000,
}, async () => {
  await trainingFromTimmWeights(mkdtempSync(join(tmpdir(), 'tandem-weights-')));
});

it('tandem train --checkpoint, then --resume: continues at the checkpoint; another seed is refused by name', {
  timeout: 300_000,
}, async () => {
  await cliResumesFromItsCheckpoint(mkdtempSync(join(tmpdir(), 'tandem-resume-cli-')));
});
