/** The failure report and the budgets that turn too many failures into a stop. */
import { PipelineFailureBudgetError } from './errors.ts';
import { asError } from '../errors/index.ts';
import type { StageCounters } from './counters.ts';
import type { FailureBudget, FailureRecord } from './types.ts';

export type { FailureRecord } from './types.ts';

/** Fields that name an item, tried in this order: a failure record leads with the first found. */
const NAMING_FIELDS = ['key', 'path', 'url', 'name', 'id'] as const;

/** The input's own name: the first naming field that holds a string. */
function nameOf(x: unknown): string | undefined {
  if (x === null || typeof x !== 'object' || ArrayBuffer.isView(x)) return typeof x === 'string' ? x : undefined;
  const record = x as Record<string, unknown>;
  const field = NAMING_FIELDS.find((f) => typeof record[f] === 'string');
  return field === undefined ? undefined : (record[field] as string);
}

export function describeInput(x: unknown): string {
  if (ArrayBuffer.isView(x)) return `${x.constructor.name}(${x.byteLength} bytes)`;
  if (x instanceof ArrayBuffer) return `ArrayBuffer(${x.byteLength} bytes)`;
  if (Array.isArray(x)) return `Array(${x.length})`;
  let s: string;
  try {
    // Byte buffers become their size, so that what names the item is not cut off behind them.
    const summarise = (_k: string, v: unknown) => (ArrayBuffer.isView(v) ? `${v.constructor.name}(${v.byteLength} bytes)` : v);
    s = typeof x === 'string' ? x : (JSON.stringify(x, summarise) ?? String(x));
    if (x !== null && typeof x === 'object') {
      const field = NAMING_FIELDS.find((f) => typeof (x as Record<string, unknown>)[f] === 'string');
      if (field) s = `${field} ${JSON.stringify((x as Record<string, unknown>)[field])}: ${s}`;
    }
  } catch {
    s = String(x);
  }
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

export function budgetText(b: FailureBudget): string {
  const parts: string[] = [];
  if (b.maxFailures !== undefined) parts.push(`maxFailures ${b.maxFailures}`);
  if (b.maxFailureRate !== undefined) parts.push(`maxFailureRate ${b.maxFailureRate} after ${b.minItems ?? 0} items`);
  return parts.join(', ');
}

/** True when `failed` out of `processed` breaks the budget. */
export function exceeds(b: FailureBudget | undefined, failed: number, processed: number): boolean {
  if (b === undefined) return false;
  if (b.maxFailures !== undefined && failed > b.maxFailures) return true;
  if (b.maxFailureRate !== undefined && processed >= (b.minItems ?? 0) && processed > 0) {
    return failed / processed > b.maxFailureRate;
  }
  return false;
}

/**
 * Every failure is counted and passed to `onFailure`; the first `keep` are also kept as records,
 * so a long run over data with broken items does not grow without bound.
 */
export class FailureLog {
  readonly records: FailureRecord[] = [];
  total = 0;

  constructor(
    private readonly describe: (x: unknown) => string,
    private readonly overall: FailureBudget | undefined,
    private readonly keep = 10_000,
    private readonly onFailure?: (record: FailureRecord) => void,
  ) {}

  /** Records one failed item; returns the budget error to stop with, if a budget is now broken. */
  add(
    stage: StageCounters,
    budget: FailureBudget | undefined,
    input: unknown,
    error: unknown,
    all: readonly StageCounters[],
    sourceItems: number,
  ): PipelineFailureBudgetError | undefined {
    stage.failed++;
    if (stage.firstError === undefined) stage.firstError = error;
    this.total++;
    let text: string;
    try {
      text = this.describe(input);
    } catch {
      text = '<undescribable input>';
    }
    const record: FailureRecord = { key: nameOf(input) ?? text, stage: stage.name, input: text, error: asError(error) };
    if (this.records.length < this.keep) this.records.push(record);
    try {
      this.onFailure?.(record);
    } catch {
      // The listener's own error must not turn one failed item into a failed pipeline.
    }
    return this.check(stage, budget, all, sourceItems);
  }

  check(
    stage: StageCounters | undefined,
    budget: FailureBudget | undefined,
    all: readonly StageCounters[],
    sourceItems: number,
  ): PipelineFailureBudgetError | undefined {
    if (stage !== undefined && exceeds(budget, stage.failed, stage.failed + stage.filtered + stage.ok)) {
      return new PipelineFailureBudgetError(`stage ${stage.name}: ${budgetText(budget ?? {})}`, summaries([stage]));
    }
    if (exceeds(this.overall, this.total, sourceItems)) {
      return new PipelineFailureBudgetError(`overall: ${budgetText(this.overall ?? {})}`, summaries(all));
    }
    return undefined;
  }
}

function summaries(stages: readonly StageCounters[]) {
  return stages.filter((s) => s.failed > 0).map((s) => ({ stage: s.name, failures: s.failed, firstError: s.firstError }));
}
