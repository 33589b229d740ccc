import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { denoWorkerThreads } from '../shared/cancel-scenarios.ts';
import { resumedTrainingEndsTheSame, stoppedTrainingEndsCleanly, tokenShardTrainingReports } from '../shared/text-train-scenarios.ts';

declare const Deno: {
  makeTempDir(): Promise<string>;
  remove(path: string, options: { recursive: boolean }): Promise<void>;
  test(name: string, fn: () => Promise<void>): void;
};

Deno.test('tandem train --tokens trains the tiny GPT from token shards in Deno (the last shard held out)', async () => {
  const dir = await Deno.makeTempDir();
  try {
    await tokenShardTrainingReports(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('trainText resumed from its step-12 checkpoint ends with the bytes of a run that never stopped (Deno)', async () => {
  const gpu = await acquireGpu();
  try {
    await resumedTrainingEndsTheSame(gpu);
  } finally {
    gpu.close();
  }
});

// Deno's worker threads counted from the OS (each named worker-N); a terminated worker's thread
// ends a moment later, so the count is read once it has fallen to `atMost` (within 5 s).
async function settledWorkerThreads(atMost: number): Promise<number> {
  const until = Date.now() + 5000;
  let n = (await denoWorkerThreads()) ?? 0;
  while (n > atMost && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    n = (await denoWorkerThreads()) ?? 0;
  }
  return n;
}

Deno.test('trainText stopped through its signal ends at once and leaves no tokenizer worker thread (Deno)', async () => {
  const gpu = await acquireGpu();
  try {
    await stoppedTrainingEndsCleanly(gpu, settledWorkerThreads);
  } finally {
    gpu.close();
  }
});
