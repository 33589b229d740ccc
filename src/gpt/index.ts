// The GPT room's door (`tandem/gpt`): a decoder-only transformer trained in WGSL on packed token
// batches (the ViT's kernels plus its own embedding, in-document causal attention and loss), its
// configuration and presets (the CPU reference it is checked against is Tandem's own, in reference.ts).
export { gptDims, gptParamLayout, gptPresets, initGptParams, type GptConfig, type GptDims } from './config.ts';
export { GptTrainer, type GptBatch, type GptEvalReport, type GptLossReport, type GptTrainerOptions } from './model.ts';
export type { CompleteOptions } from './complete.ts';
