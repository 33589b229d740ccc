// Browser sources: a folder the user picked (showDirectoryPicker, or <input webkitdirectory>) or
// items dropped on the page, as a labelled file list in ImageNet layout (class = first folder below
// the root). The browser objects come in as parameters, typed structurally, so tests can build
// File objects and fake handles. Files are lazy Blobs: nothing is read until a stage reads it.

export interface PickedFile {
  /** Path below the picked root, e.g. "cat/001.jpg". */
  path: string;
  /** Index of className among the sorted classes; -1 for files not inside a class folder. */
  label: number;
  className: string;
  file: Blob;
}

export interface PickedFolder {
  files: PickedFile[];
  classes: string[];
}

/** The parts of FileSystemDirectoryHandle / FileSystemFileHandle used here. */
export interface FileHandleLike {
  kind: 'file';
  name: string;
  getFile(): Promise<Blob>;
}
export interface DirectoryHandleLike {
  kind: 'directory';
  name: string;
  values(): AsyncIterable<FileHandleLike | DirectoryHandleLike>;
}

/** The parts of the older FileSystemEntry API (DataTransferItem.webkitGetAsEntry). */
export interface FileEntryLike {
  isFile: true;
  isDirectory: false;
  name: string;
  file(success: (file: File) => void, failure?: (error: unknown) => void): void;
}
export interface DirectoryEntryLike {
  isFile: false;
  isDirectory: true;
  name: string;
  createReader(): {
    readEntries(success: (entries: Array<FileEntryLike | DirectoryEntryLike>) => void, failure?: (error: unknown) => void): void;
  };
}
export interface DataTransferItemLike {
  kind: string;
  webkitGetAsEntry(): FileEntryLike | DirectoryEntryLike | null;
}

const IMAGE_EXTENSIONS = /\.(jpe?g|png|webp|bmp|gif)$/i;

/** Labels files by their first path segment; sorted class names give labels 0..K-1. */
export function labelByFolder(found: Iterable<{ path: string; file: Blob }>, accept: RegExp = IMAGE_EXTENSIONS): PickedFolder {
  const kept = [...found].filter((f) => accept.test(f.path)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const classOf = (path: string) => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '');
  const classes = [...new Set(kept.map((f) => classOf(f.path)).filter((c) => c !== ''))].sort();
  const labels = new Map(classes.map((c, i) => [c, i]));
  const files = kept.map((f) => ({ path: f.path, file: f.file, className: classOf(f.path), label: labels.get(classOf(f.path)) ?? -1 }));
  return { files, classes };
}

async function* walkHandle(dir: DirectoryHandleLike, prefix: string): AsyncGenerator<{ path: string; file: Blob }> {
  for await (const entry of dir.values()) {
    const path = `${prefix}${entry.name}`;
    if (entry.kind === 'file') yield { path, file: await entry.getFile() };
    else yield* walkHandle(entry, `${path}/`);
  }
}

/** A folder picked with `await showDirectoryPicker()`. */
export async function listPickedDirectory(root: DirectoryHandleLike, accept?: RegExp): Promise<PickedFolder> {
  const found: Array<{ path: string; file: Blob }> = [];
  for await (const f of walkHandle(root, '')) found.push(f);
  return labelByFolder(found, accept);
}

/** The FileList of `<input type="file" webkitdirectory>`: paths are "root/class/file"; the root is dropped. */
export function listFileList(files: ArrayLike<File>, accept?: RegExp): PickedFolder {
  const found = Array.from(files, (file) => {
    const relative = file.webkitRelativePath || file.name;
    return { path: relative.includes('/') ? relative.slice(relative.indexOf('/') + 1) : relative, file };
  });
  return labelByFolder(found, accept);
}

function readAllEntries(dir: DirectoryEntryLike): Promise<Array<FileEntryLike | DirectoryEntryLike>> {
  const reader = dir.createReader();
  const all: Array<FileEntryLike | DirectoryEntryLike> = [];
  // readEntries hands out batches (Chromium: 100 at a time) until an empty one.
  return new Promise((resolve, reject) => {
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) return resolve(all);
        all.push(...batch);
        next();
      }, reject);
    next();
  });
}

async function* walkEntry(entry: FileEntryLike | DirectoryEntryLike, prefix: string): AsyncGenerator<{ path: string; file: Blob }> {
  const path = `${prefix}${entry.name}`;
  if (entry.isFile) yield { path, file: await new Promise<File>((resolve, reject) => entry.file(resolve, reject)) };
  else for (const child of await readAllEntries(entry)) yield* walkEntry(child, `${path}/`);
}

/**
 * Items dropped on the page (`event.dataTransfer.items`). Call it inside the drop handler: the
 * entries must be taken before the handler returns. One dropped folder is the root; several
 * dropped folders are the classes; dropped loose files have label -1.
 */
export function listDroppedItems(items: ArrayLike<DataTransferItemLike>, accept?: RegExp): Promise<PickedFolder> {
  const entries = Array.from(items, (item) => (item.kind === 'file' ? item.webkitGetAsEntry() : null)).filter((e) => e !== null);
  const single = entries.length === 1 && entries[0]!.isDirectory ? entries[0] : undefined;
  return (async () => {
    const found: Array<{ path: string; file: Blob }> = [];
    const roots = single ? await readAllEntries(single as DirectoryEntryLike) : entries;
    for (const entry of roots) for await (const f of walkEntry(entry, '')) found.push(f);
    return labelByFolder(found, accept);
  })();
}

/** A picked file's bytes (for a pipeline's read stage). */
export const readPicked = async (picked: PickedFile): Promise<Uint8Array> => new Uint8Array(await picked.file.arrayBuffer());
