// The tar writer and the browser's picked/dropped folders: runtime-neutral (File and Blob exist in
// Node 20, Deno and Chromium), shared by the three tiers.
import {
  listDroppedItems,
  listFileList,
  listPickedDirectory,
  readPicked,
  readTar,
  TarWriter,
  webDatasetSamples,
  type DataTransferItemLike,
  type DirectoryEntryLike,
  type DirectoryHandleLike,
  type FileEntryLike,
  type PickedFolder,
} from '../../src/sources/index.ts';
import { TAR_END_BYTES, tarMemberBytes } from '../../src/sources/tar-writer.ts';
import { check } from './assert.ts';
import { collect } from './async.ts';
import { bytesEqual, payload, streamOf } from './tar-helpers.ts';

/** A nested folder as { "path/to/file": bytes }. */
const tree: Record<string, Uint8Array> = {
  'cat/001.jpg': payload(300, 1),
  'cat/002.png': payload(200, 2),
  'dog/a.jpeg': payload(100, 3),
  'dog/notes.txt': payload(10, 4),
  'dog/deeper/b.jpg': payload(50, 5),
  'loose.jpg': payload(20, 6),
};

/** A FileSystemDirectoryHandle-like view of `files` at folder `dir` ('' = the root). */
function fakeHandle(files: Record<string, Uint8Array>, dir: string): DirectoryHandleLike {
  const prefix = dir === '' ? '' : `${dir}/`;
  const names = new Set(
    Object.keys(files)
      .filter((p) => p.startsWith(prefix))
      .map((p) => p.slice(prefix.length).split('/')[0]!),
  );
  return {
    kind: 'directory',
    name: dir.slice(dir.lastIndexOf('/') + 1),
    async *values() {
      for (const name of names) {
        const path = `${prefix}${name}`;
        const data = files[path];
        if (data) yield { kind: 'file' as const, name, getFile: async () => new File([data.slice()], name) };
        else yield fakeHandle(files, path);
      }
    },
  };
}

/** A FileSystemEntry-like view (what DataTransferItem.webkitGetAsEntry returns) of `files` at `path`. */
function fakeEntry(files: Record<string, Uint8Array>, path: string): FileEntryLike | DirectoryEntryLike {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const data = files[path];
  if (data) return { isFile: true, isDirectory: false, name, file: (ok) => ok(new File([data.slice()], name)) };
  const below = [
    ...new Set(
      Object.keys(files)
        .filter((p) => p.startsWith(`${path}/`))
        .map((p) => `${path}/${p.slice(path.length + 1).split('/')[0]}`),
    ),
  ];
  return {
    isFile: false,
    isDirectory: true,
    name,
    createReader: () => {
      let handedOut = false;
      return {
        // Like Chromium: the entries in batches (here one), then an empty batch, asynchronously.
        readEntries: (ok) => {
          const batch = handedOut ? [] : below.map((p) => fakeEntry(files, p));
          handedOut = true;
          setTimeout(() => ok(batch), 0);
        },
      };
    },
  };
}

const describe = (folder: PickedFolder) => `${folder.classes.join(',')} | ${folder.files.map((f) => `${f.path}:${f.label}`).join(' ')}`;
const expected = 'cat,dog | cat/001.jpg:0 cat/002.png:0 dog/a.jpeg:1 dog/deeper/b.jpg:1 loose.jpg:-1';

export const fileScenarios: Record<string, () => Promise<void>> = {
  async 'tar writer: members (long names too) read back through readTar and webDatasetSamples; sizes are predicted'() {
    const chunks: Uint8Array[] = [];
    const writer = new TarWriter((chunk) => void chunks.push(chunk.slice()));
    const long = `${'d'.repeat(120)}/000000001.jpg`;
    const members: Array<[string, Uint8Array]> = [
      ['000000000.jpg', payload(1000, 1)],
      ['000000000.cls', new TextEncoder().encode('3')],
      [long, payload(512, 2)],
      ['empty.bin', new Uint8Array(0)],
    ];
    let predicted = TAR_END_BYTES;
    for (const [name, data] of members) {
      await writer.add(name, data);
      predicted += tarMemberBytes(name, data.length);
    }
    await writer.end();
    const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
    check(bytes.length === predicted && writer.bytesWritten === predicted, `size ${bytes.length} vs predicted ${predicted}`);
    const read = await collect(readTar(streamOf(bytes, 333)));
    check(read.map((m) => m.name).join('|') === members.map(([n]) => n).join('|'), read.map((m) => m.name).join('|'));
    check(
      read.every((m, i) => bytesEqual(m.data, members[i]![1])),
      'bytes round-trip',
    );
    const samples = await collect(webDatasetSamples(streamOf(bytes)));
    check(samples.length === 3 && 'files' in samples[0]! && Object.keys(samples[0].files).sort().join() === 'cls,jpg', 'grouped by key');
    let refused = false;
    await writer.add('../x', new Uint8Array(1)).catch((e: unknown) => (refused = e instanceof RangeError));
    check(refused, 'the writer refuses names the reader would refuse');
  },

  async 'picked folder (directory handle): classes from first-level folders, images only'() {
    const folder = await listPickedDirectory(fakeHandle(tree, ''));
    check(describe(folder) === expected, describe(folder));
    check(bytesEqual(await readPicked(folder.files[0]!), tree['cat/001.jpg']), 'bytes of a picked file');
  },

  async 'directory input (FileList with webkitRelativePath): the root folder is dropped'() {
    const list = Object.entries(tree).map(([path, data]) => {
      const file = new File([data.slice()], path.slice(path.lastIndexOf('/') + 1));
      Object.defineProperty(file, 'webkitRelativePath', { value: `root/${path}` });
      return file;
    });
    const folder = listFileList(list);
    check(describe(folder) === expected, describe(folder));
  },

  async 'dropped items: one folder is the root; several folders are the classes'() {
    const item = (entry: FileEntryLike | DirectoryEntryLike): DataTransferItemLike => ({ kind: 'file', webkitGetAsEntry: () => entry });
    const rooted = Object.fromEntries(Object.entries(tree).map(([path, data]) => [`root/${path}`, data]));
    const one = await listDroppedItems([item(fakeEntry(rooted, 'root'))]);
    check(describe(one) === expected, `one folder: ${describe(one)}`);
    const several = await listDroppedItems([
      item(fakeEntry(tree, 'cat')),
      item(fakeEntry(tree, 'dog')),
      item(fakeEntry(tree, 'loose.jpg')),
    ]);
    check(describe(several) === expected, `several: ${describe(several)}`);
  },
};
