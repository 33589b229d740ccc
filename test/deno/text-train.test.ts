import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { resumedTrainingEndsTheSame, tokenShardTrainingReports } from '../shared/text-train-scenarios.ts';

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
