// A folder of images chosen on the page, labelled by its first subfolder (ImageNet layout), through
// the library's picked-folder source (src/sources/picked.ts): showDirectoryPicker where the browser
// has it, else <input webkitdirectory>, or a folder dropped on the page. Files stay lazy Blobs; the
// training worker reads each when the loader asks for it. Files outside a class folder are left out.
import {
  listDroppedItems,
  listFileList,
  listPickedDirectory,
  type DataTransferItemLike,
  type DirectoryHandleLike,
  type PickedFolder,
} from '../src/sources/index.ts';

export interface PickedImages {
  images: { key: string; label: number; file: Blob }[];
  classes: string[];
}

function toImages(folder: PickedFolder): PickedImages {
  const images = folder.files.filter((f) => f.label >= 0).map((f) => ({ key: f.path, label: f.label, file: f.file }));
  if (images.length === 0) throw new Error('no images inside class subfolders (expected <folder>/<class>/<image>)');
  return { images, classes: folder.classes };
}

export function hasDirectoryPicker(): boolean {
  return 'showDirectoryPicker' in globalThis;
}

export async function pickWithDirectoryPicker(): Promise<PickedImages> {
  const picker = (globalThis as unknown as { showDirectoryPicker(): Promise<DirectoryHandleLike> }).showDirectoryPicker;
  return toImages(await listPickedDirectory(await picker()));
}

export function fromFileList(files: ArrayLike<File>): PickedImages {
  return toImages(listFileList(files));
}

/** Call inside the drop handler: the entries must be taken before it returns. */
export function fromDrop(items: DataTransferItemList): Promise<PickedImages> {
  // DOM's FileSystemEntry types are the structural *Like types the source is written against.
  return listDroppedItems(items as unknown as ArrayLike<DataTransferItemLike>).then(toImages);
}
