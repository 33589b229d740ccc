// The demo's saved run, in the origin private file system (OPFS): the last training checkpoint of a
// run on the built-in dataset, and the settings it was started with, so a reload can continue it.
// Each file is written through createWritable, whose close() replaces the file whole: a reload or
// a crash mid-write leaves the previous checkpoint.
import type { DemoSettings } from './protocol.ts';

const CHECKPOINT = 'tandem-demo.ckpt';
const SETTINGS = 'tandem-demo.json';

export interface SavedRun {
  settings: DemoSettings;
  /** The step the checkpoint was taken at, and the run's steps. */
  step: number;
  steps: number;
}

async function directory(): Promise<FileSystemDirectoryHandle | undefined> {
  try {
    return await navigator.storage.getDirectory();
  } catch {
    return undefined; // no OPFS (an old browser, or storage refused): nothing is saved
  }
}

async function writeFile(name: string, data: BlobPart): Promise<void> {
  const dir = await directory();
  if (!dir) return;
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await writable.write(data);
  await writable.close();
}

/** Keeps a checkpoint; the settings file says which step it holds (written after it). */
export async function saveRun(bytes: Uint8Array<ArrayBuffer>, run: SavedRun): Promise<void> {
  await writeFile(CHECKPOINT, bytes);
  await writeFile(SETTINGS, JSON.stringify(run));
}

export async function savedRun(): Promise<SavedRun | undefined> {
  const dir = await directory();
  if (!dir) return undefined;
  try {
    await dir.getFileHandle(CHECKPOINT);
    return JSON.parse(await (await (await dir.getFileHandle(SETTINGS)).getFile()).text()) as SavedRun;
  } catch {
    return undefined;
  }
}

export async function savedCheckpoint(): Promise<Uint8Array | undefined> {
  const dir = await directory();
  if (!dir) return undefined;
  try {
    return new Uint8Array(await (await (await dir.getFileHandle(CHECKPOINT)).getFile()).arrayBuffer());
  } catch {
    return undefined;
  }
}

export async function forgetRun(): Promise<void> {
  const dir = await directory();
  for (const name of [CHECKPOINT, SETTINGS]) await dir?.removeEntry(name).catch(() => undefined);
}
