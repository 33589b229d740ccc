// The GPT room's door (`tandem/gpt`): a decoder-only transformer trained in WGSL on packed token
// batches (the ViT's kernels plus its own embedding, in-document causal attention and loss), its
// configuration and presets, and the CPU reference it is checked against.
export { gptDims, gptParamLayout, gptPresets, initGptParams, type GptConfig, type GptDims } from './config.ts';
export { GptTrainer, type GptBatch, type GptEvalReport, type GptLossReport, type GptTrainerOptions } from './model.ts';
export type { CompleteOptions } from './complete.ts';
export { labelledCrossEntropy, ReferenceGpt, type GptForward, type ReferenceBatch } from './reference.ts';
