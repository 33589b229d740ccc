// The training room's door: a runtime-neutral training session (labelled byte sources → loader →
// ViT in WGSL) with events for live views, the loader it runs, and the sources it reads; and the
// GPT's session (text sources → textLoader → GptTrainer) with its checkpoints.
export { defaultTrainingOptions, trainingSettingDefaults, type TrainingOptions } from './options.ts';
export { runTraining } from './session.ts';
export {
  CheckpointError,
  decodeTrainingCheckpoint,
  encodeTrainingCheckpoint,
  type CheckpointErrorCode,
  type RunIdentity,
  type TrainingState,
} from './checkpoint.ts';
export type {
  EpochEvent,
  EpochRecord,
  PreviewEvent,
  StageOccupancy,
  StartEvent,
  StatsEvent,
  StepEvent,
  TrainingEvent,
  TrainReport,
} from './events.ts';
export { loaderStages, type LoaderStageOptions, type LoaderStages } from './loader.ts';
export {
  blobSource,
  memorySource,
  splitHeldOut,
  syntheticData,
  type LabelledSource,
  type LabelledData,
  type SyntheticDataOptions,
  type TrainStream,
  type PositionedStream,
  type StreamSource,
} from './sources.ts';
export { parquetData, shardData, type ShardDataOptions } from './shards.ts';
export { toRgba } from './preview.ts';
export { TrainingError } from './errors.ts';
export {
  trainText,
  type TextTrainingEvent,
  type TextTrainingLoaderOptions,
  type TextTrainingOptions,
  type TextTrainingReport,
  type TextTrainingResult,
} from './text-session.ts';
export { decodeTextCheckpoint, type TextCheckpoint, type TextCheckpointHeader } from './text-checkpoint.ts';
// The generated text corpus and its tokenizer.json, for examples and demos that train on it
// (beside syntheticData, the generated images: the text room holds loading only).
export {
  CORPUS_ALPHABET,
  CORPUS_BOS,
  CORPUS_EOS,
  CORPUS_VOCAB_SIZE,
  corpusDocument,
  corpusDocuments,
  corpusIds,
  corpusText,
  corpusTokenizerJson,
} from '../synthetic/index.ts';
