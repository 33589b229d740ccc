// Tandem's front door: the pipeline engine, the wasm decode pool and batcher, the GPU transfer
// and preprocessing, and the sources. Each is also importable on its own (tandem/pipeline, ...).
export * from './pipeline/index.ts';
export * from './decode/index.ts';
export * from './gpu/index.ts';
export * from './sources/index.ts';
