// One short training run for the kill tests (test/shared/resume-scenarios.ts), as a user's script
// would run it on the built package, in Node or Deno:
//   node test/shared/resume-child.mjs DIR fresh|resume [SHARDS]      (deno run -A ... the same)
// Trains the tiny ViT for 2 epochs in batches of 8, augmented, seed 5: on 64 generated JPEGs (52
// after the held-out split), or with SHARDS on the tar shards in that folder (shards.json), streamed
// through a 20-sample shuffle buffer. After every step it appends the step's keys to DIR/keys.log
// with a synchronous write ("step key key ..."), and writes a training checkpoint to DIR/run.ckpt
// (a temporary file, then a rename). At the end it writes the final parameters to DIR/final.f32.
// With "resume" it continues from DIR/run.ckpt when there is one, and logs "resume STEP" first.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { decodeTrainingCheckpoint, runTraining, shardData, syntheticData } from '../../dist/train/index.js';

const [dir, mode, shards] = globalThis.Deno?.args ?? process.argv.slice(2);
const checkpointPath = `${dir}/run.ckpt`;
const log = (line) => appendFileSync(`${dir}/keys.log`, `${line}\n`);
let resumeFrom;
if (mode === 'resume' && existsSync(checkpointPath)) {
  resumeFrom = new Uint8Array(readFileSync(checkpointPath));
  log(`resume ${decodeTrainingCheckpoint(resumeFrom).state.step}`);
} else log('resume 0');
const data = shards
  ? shardData(JSON.parse(readFileSync(`${shards}/shards.json`, 'utf8')), shards, { bufferSize: 20 })
  : await syntheticData({ count: 64, seed: 3, width: 64, height: 48 });
const report = await runTraining(data, {
  epochs: 2,
  batchSize: 8,
  threads: 2,
  seed: 5,
  lr: 2e-3,
  augment: true,
  checkpointEvery: 1,
  onCheckpoint: async (bytes) => {
    writeFileSync(`${checkpointPath}.partial`, bytes);
    renameSync(`${checkpointPath}.partial`, checkpointPath);
  },
  onStepKeys: (step, keys) => log(`${step} ${keys.join(' ')}`),
  ...(resumeFrom ? { resumeFrom } : {}),
  onTrained: async (trainer) => writeFileSync(`${dir}/final.f32`, new Uint8Array((await trainer.readParams()).buffer)),
});
log(`done ${report.steps} ${report.failures}`);
