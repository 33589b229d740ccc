// DecodePoolOptions.moduleBase: the decode modules served from another folder (a self-hosted
// mirror). A pool made with it decodes in both modes from the copies there, and a folder without
// them is a typed error naming the URL, not a hang.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { DecodeError, DecodePool } from '../../src/decode/index.ts';

const dist = new URL('../../wasm/dist/', import.meta.url).pathname;
const load = async (name: string) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

it('a pool made with moduleBase loads the modules from there and decodes the same bytes, in both modes', async () => {
  const mirror = join(mkdtempSync(join(tmpdir(), 'tandem-mirror-')), 'decode');
  mkdirSync(mirror);
  for (const f of ['tandem-decode.mjs', 'tandem-decode.wasm', 'tandem-decode-st.mjs', 'tandem-decode-st.wasm'])
    copyFileSync(join(dist, f), join(mirror, f));
  const bytes = await load('photo-landscape.jpg');
  const request = { width: 64, height: 48 };
  const reference = await DecodePool.create({ threads: 1 });
  try {
    const want = (await reference.decode(bytes, request)).pixels;
    for (const mode of ['pthreads', 'workers'] as const) {
      const pool = await DecodePool.create({ threads: 1, mode, moduleBase: pathToFileURL(mirror) });
      try {
        expect(pool.mode).toBe(mode);
        expect((await pool.decode(bytes, request)).pixels).toEqual(want);
      } finally {
        await pool.close();
      }
    }
  } finally {
    await reference.close();
  }
});

it('a moduleBase without the modules is a DecodeError naming the URL', async () => {
  const empty = pathToFileURL(mkdtempSync(join(tmpdir(), 'tandem-no-mirror-')));
  for (const mode of ['pthreads', 'workers'] as const) {
    const error = await DecodePool.create({ threads: 1, mode, moduleBase: empty }).catch((e: unknown) => e);
    expect(error instanceof DecodeError && error.code === 'module-unavailable' && error.message.includes(empty.href), String(error)).toBe(
      true,
    );
  }
});
