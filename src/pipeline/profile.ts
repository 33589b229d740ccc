/**
 * SPDL's profile_pipeline: run each stage alone over a sample of its real inputs at several
 * concurrencies, and recommend the smallest concurrency within 5% of the best throughput.
 */
import { PipelineBuilder } from './builder.ts';
import type { TimeSplit } from './stats.ts';
import type { PipelineConfig, StageConfig } from './types.ts';

export interface ProfileOptions {
  concurrencies?: readonly number[];
}

export interface StageProfile {
  readonly stage: string;
  /** `time`: where the stage's slot time went in that run (working, starved, blocked, resource). */
  readonly runs: readonly { concurrency: number; itemsPerSec: number; p50Ms: number; failed: number; time: TimeSplit }[];
  readonly recommended: number;
}

async function runStage(stage: StageConfig, inputs: readonly unknown[], concurrency: number) {
  const b = new PipelineBuilder<unknown>().addSource(inputs);
  if (stage.kind === 'pipe') {
    b.pipe(stage.task as never, { name: stage.name, concurrency, ordered: stage.ordered, queueSize: stage.queueSize });
  } else if (stage.kind === 'aggregate') {
    if (stage.create !== undefined) b.aggregate(stage.create, { name: stage.name });
    else b.aggregate(stage.size ?? 1, { name: stage.name, dropLast: stage.dropLast });
  } else b.disaggregate({ name: stage.name });
  const p = b.build();
  const outputs: unknown[] = [];
  const t0 = performance.now();
  for await (const x of p) outputs.push(x);
  const ms = performance.now() - t0;
  const s = p.stats().stages[1]!;
  return { outputs, itemsPerSec: (inputs.length / Math.max(ms, 1e-3)) * 1000, p50Ms: s.taskMs.p50, failed: s.failed, time: s.time };
}

export async function profilePipeline(
  builderOrConfig: PipelineConfig | { config(): PipelineConfig },
  inputs: Iterable<unknown>,
  opts: ProfileOptions = {},
): Promise<StageProfile[]> {
  const cfg =
    'config' in builderOrConfig && typeof builderOrConfig.config === 'function'
      ? builderOrConfig.config()
      : (builderOrConfig as PipelineConfig);
  const concurrencies = opts.concurrencies ?? [1, 2, 4, 8];
  let sample = [...inputs];
  const report: StageProfile[] = [];
  for (const stage of cfg.stages) {
    if (stage.kind !== 'pipe') {
      sample = (await runStage(stage, sample, 1)).outputs;
      continue;
    }
    const runs: StageProfile['runs'][number][] = [];
    let next: unknown[] = [];
    for (const c of concurrencies) {
      // Worker tasks transfer (detach) their input buffers: give each run its own copy.
      const input = typeof stage.task === 'function' ? sample : structuredClone(sample);
      const r = await runStage(stage, input, c);
      runs.push({ concurrency: c, itemsPerSec: r.itemsPerSec, p50Ms: r.p50Ms, failed: r.failed, time: r.time });
      next = r.outputs;
    }
    const best = Math.max(...runs.map((r) => r.itemsPerSec));
    const recommended = runs.find((r) => r.itemsPerSec >= 0.95 * best)?.concurrency ?? 1;
    report.push({ stage: stage.name, runs, recommended });
    sample = next;
  }
  return report;
}
