import type { StageCounters } from './counters.ts';
import type { FailureBudget } from './types.ts';

/** What a running stage may ask of the pipeline that owns it. */
export interface RunContext {
  readonly signal: AbortSignal;
  readonly stopped: boolean;
  /** Records a failed item (stage + input + error); stops the pipeline if a budget breaks. */
  fail(stage: StageCounters, budget: FailureBudget | undefined, input: unknown, error: unknown): void;
  /** Re-checks budgets when a rate budget's `minItems` is reached without a failure. */
  checkBudget(stage: StageCounters | undefined, budget: FailureBudget | undefined): void;
  /** Stops the pipeline; consumers see `error` from their next `next()`. */
  fatal(error: unknown): void;
}
