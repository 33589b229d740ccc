export { ensureSyntheticFolder, listImageFolder, type LabelledFile, type SyntheticFolderOptions } from './folder.ts';
export * from './synthetic/index.ts';
