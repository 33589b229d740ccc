// One short training run for the kill tests (test/shared/resume-scenarios.ts), through `tandem
// train`'s own code (runTrain, src/cli/train.ts): its atomic checkpoint writer and its --resume.
//   node test/shared/resume-child.mjs DIR fresh|resume EVERY files|shards|parquet DATA   (deno run -A ... the same)
// Node runs the built package (dist/, which the scenario rebuilds when src/ has changed); Deno runs
// the TypeScript sources themselves, so neither can train on stale code.
// Trains the tiny ViT for 2 epochs in batches of 8, augmented, seed 5, on the image folder DATA
// (every 5th image held out), the tar shards in DATA (shards.json) or the Parquet files DATA (a,b), with a checkpoint at DIR/run.ckpt
// every EVERY steps and at the end. It appends to DIR/keys.log with synchronous writes: "run MODE"
// first, "resume STEP" when Tandem says it resumed, each step's keys ("step key key ..."), "done
// STEPS FAILURES" at the end, or "error NAME CODE message" when the run throws. The final weights
// go to DIR/final.safetensors. With "resume" it passes --resume DIR/run.ckpt when that file exists.
import { appendFileSync, existsSync } from 'node:fs';
import process from 'node:process';

const { runTrain } = await import(globalThis.Deno ? '../../src/cli/train.ts' : '../../dist/cli/train.js');
const [dir, mode, every, kind, data] = globalThis.Deno?.args ?? process.argv.slice(2);
const checkpoint = `${dir}/run.ckpt`;
const log = (line) => appendFileSync(`${dir}/keys.log`, `${line}\n`);
log(`run ${mode}`);
try {
  const report = await runTrain({
    ...(kind === 'shards' ? { shards: data } : kind === 'parquet' ? { parquet: data.split(',') } : { data }),
    images: 0,
    epochs: 2,
    batchSize: 8,
    threads: 2,
    seed: 5,
    lr: 2e-3,
    augment: true,
    checkpoint,
    checkpointEvery: Number(every),
    ...(mode === 'resume' && existsSync(checkpoint) ? { resume: checkpoint } : {}),
    onStepKeys: (step, keys) => log(`${step} ${keys.join(' ')}`),
    saveWeights: `${dir}/final.safetensors`,
    // Tandem's own word for where it resumed: "resuming from PATH at step N".
    log: (line) => {
      const resumed = /^resuming from .* at step (\d+)$/.exec(line);
      if (resumed) log(`resume ${resumed[1]}`);
    },
  });
  log(`done ${report.steps} ${report.failures}`);
} catch (error) {
  log(`error ${error?.name} ${error?.code ?? '-'} ${String(error?.message ?? error).replaceAll('\n', ' ')}`);
  process.exitCode = 1;
}
