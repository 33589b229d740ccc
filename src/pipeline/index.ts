/** Tandem's pipeline engine: the only public door of src/pipeline. */
export { PipelineBuilder, customTask, workerTask } from './builder.ts';
export type { PipeOptions, SourceOptions } from './builder.ts';
export { Pipeline } from './pipeline.ts';
export type { MergeOptions, PipelineState } from './pipeline.ts';
export { PipelineBuildError, PipelineFailureBudgetError, PipelineStallError, WorkerTaskError } from './errors.ts';
export type { StageFailureSummary, StallInfo } from './errors.ts';
export type { FailureRecord } from './failures.ts';
export type { Executor } from './executor.ts';
export { WorkerPoolExecutor } from './worker-pool.ts';
export { formatStats, formatSplit, bottleneck, TIME_PARTS, type Bottleneck } from './bottleneck.ts';
export type { ConsumerStats, PipelineStats, StageStats, TimeSplit } from './stats.ts';
export { profilePipeline } from './profile.ts';
export type { ProfileOptions, StageProfile } from './profile.ts';
export { FILTERED, isEpochEnd } from './types.ts';
export type {
  Aggregator,
  BuildOptions,
  ConsumerContext,
  EpochEnd,
  FailureBudget,
  Filtered,
  Ordering,
  PipelineConfig,
  StageConfig,
  StageContext,
  StageFn,
  StagedAggregator,
  WorkerTask,
  CustomTask,
} from './types.ts';
