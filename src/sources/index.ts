export { ensureSyntheticFolder, listImageFolder, type LabelledFile, type SyntheticFolderOptions } from './folder.ts';
export { holdOut, shuffledEpoch, shuffledEpochs } from './sampling.ts';
export * from './synthetic/index.ts';
