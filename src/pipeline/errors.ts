import { TandemError } from '../errors/index.ts';

export interface StageFailureSummary {
  readonly stage: string;
  readonly failures: number;
  readonly firstError: unknown;
}

export class PipelineFailureBudgetError extends TandemError {
  override readonly name = 'PipelineFailureBudgetError';
  readonly code = 'failure-budget';
  readonly stages: readonly StageFailureSummary[];

  constructor(budget: string, stages: readonly StageFailureSummary[]) {
    const causes = stages.map((s) => `${s.stage}: ${s.failures} failed, first: ${errorText(s.firstError)}`).join('; ');
    super(`failure budget exceeded (${budget}) — ${causes}`, { cause: stages[0]?.firstError });
    this.stages = stages;
  }
}

/** A pipeline built the wrong way round: a second source, or none. */
export class PipelineBuildError extends TandemError {
  override readonly name = 'PipelineBuildError';
  constructor(
    readonly code: 'source-already-set' | 'no-source',
    message: string,
  ) {
    super(message);
  }
}

export interface StallInfo {
  readonly stage: string;
  readonly inflight: number;
  readonly inputQueued: number;
}

export class PipelineStallError extends TandemError {
  override readonly name = 'PipelineStallError';
  readonly code = 'stalled';
  readonly stalled: readonly StallInfo[];

  constructor(timeoutMs: number, stalled: readonly StallInfo[]) {
    const busy = stalled.filter((s) => s.inflight > 0).map((s) => `${s.stage} (${s.inflight} in flight)`);
    const empty = stalled.filter((s) => s.inputQueued === 0).map((s) => s.stage);
    super(
      `no item for ${timeoutMs} ms; tasks in flight: ${busy.join(', ') || 'none'}; ` + `empty input queue: ${empty.join(', ') || 'none'}`,
    );
    this.stalled = stalled;
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** An error a worker task threw with a `code` (a TandemError there), as the host receives it. */
export class WorkerTaskError extends TandemError {
  constructor(
    /** The class name the error had in the worker, e.g. `DecodeError`. */
    override readonly name: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
