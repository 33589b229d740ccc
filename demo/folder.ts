// A folder of images picked on the page, labelled by its first subfolder (ImageNet layout):
// through showDirectoryPicker where the browser has it, else <input webkitdirectory>.
// Files stay lazy Blobs; the training worker reads each when the loader asks for it.

export interface PickedImage {
  key: string;
  label: number;
  file: Blob;
}
export interface PickedImages {
  images: PickedImage[];
  classes: string[];
}

const IMAGE = /\.(jpe?g|png|webp|bmp|gif)$/i;

interface DirectoryHandle {
  kind: 'directory';
  name: string;
  values(): AsyncIterable<DirectoryHandle | { kind: 'file'; name: string; getFile(): Promise<File> }>;
}

async function* walk(dir: DirectoryHandle, prefix: string): AsyncGenerator<{ path: string; file: Blob }> {
  for await (const entry of dir.values()) {
    if (entry.kind === 'file') yield { path: `${prefix}${entry.name}`, file: await entry.getFile() };
    else yield* walk(entry, `${prefix}${entry.name}/`);
  }
}

/** Paths below the picked root, e.g. "cat/001.jpg": class = first segment, sorted → labels. */
export function labelByFolder(found: readonly { path: string; file: Blob }[]): PickedImages {
  const kept = found.filter((f) => IMAGE.test(f.path) && f.path.includes('/')).sort((a, b) => (a.path < b.path ? -1 : 1));
  const classOf = (path: string) => path.slice(0, path.indexOf('/'));
  const classes = [...new Set(kept.map((f) => classOf(f.path)))].sort();
  return { images: kept.map((f) => ({ key: f.path, label: classes.indexOf(classOf(f.path)), file: f.file })), classes };
}

export function hasDirectoryPicker(): boolean {
  return 'showDirectoryPicker' in globalThis;
}

export async function pickWithDirectoryPicker(): Promise<PickedImages> {
  const picker = (globalThis as unknown as { showDirectoryPicker(): Promise<DirectoryHandle> }).showDirectoryPicker;
  const root = await picker();
  const found: { path: string; file: Blob }[] = [];
  for await (const f of walk(root, '')) found.push(f);
  return labelByFolder(found);
}

/** `<input type=file webkitdirectory>` gives "root/class/file" paths: drop the root. */
export function fromFileList(files: ArrayLike<File>): PickedImages {
  return labelByFolder(Array.from(files, (file) => {
    const path = file.webkitRelativePath || file.name;
    return { path: path.slice(path.indexOf('/') + 1), file };
  }));
}
