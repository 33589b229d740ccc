// Two processes, RANK=0 and RANK=1 of WORLD_SIZE=2, read the same HTTP shards (served on
// 127.0.0.1) as `tandem train --shards URL` does: per epoch, their samples together are the
// dataset exactly once, with no sample in both.
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { writeFolderShards } from '../../src/sources/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';

const repo = new URL('../../', import.meta.url).pathname;
const deno = join(repo, 'node_modules', '.bin', 'deno');

it('two ranks over the same HTTP shards read the dataset exactly once per epoch, without overlap', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-ranks-'));
  for (let i = 0; i < 60; i++) {
    const s = renderSample(5, i, { width: 64, height: 48, classes: 3 });
    mkdirSync(join(dir, 'data', `c${s.label}`), { recursive: true });
    writeFileSync(
      join(dir, 'data', `c${s.label}`, `${String(i).padStart(3, '0')}.jpg`),
      encodeJpeg(s.rgb, s.width, s.height, { quality: 80 }),
    );
  }
  const manifest = await writeFolderShards(join(dir, 'data'), { out: join(dir, 'shards'), perShard: 6, seed: 1 });
  expect(manifest.shards.length).toBe(10);
  const server = createServer((req, res) => {
    const file = join(dir, 'shards', decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!file.startsWith(join(dir, 'shards')) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200);
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const runRank = (rank: number) =>
      new Promise<{ perEpoch: number; epochs: string[][] }>((resolve, reject) =>
        execFile(
          deno,
          ['run', '-A', '--no-check', join(repo, 'test/fixtures/rank-reader.ts'), url],
          { env: { ...process.env, RANK: String(rank), WORLD_SIZE: '2' } },
          (error, stdout, stderr) =>
            error ? reject(new Error(`rank ${rank}: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!)),
        ),
      );
    const [r0, r1] = await Promise.all([runRank(0), runRank(1)]);
    const all = manifest.samples;
    expect(r0.perEpoch + r1.perEpoch).toBe(all);
    for (const epoch of [0, 1]) {
      const a = r0.epochs[epoch]!;
      const b = r1.epochs[epoch]!;
      expect(a.length).toBe(r0.perEpoch);
      expect(b.length).toBe(r1.perEpoch);
      const keyOf = (k: string) => k.replace(/^.*\//, ''); // shard file and sample key
      expect(a.filter((k) => b.includes(k))).toEqual([]);
      expect(new Set([...a, ...b].map(keyOf)).size).toBe(all);
    }
    // A new epoch is a new order, not a replay.
    expect(r0.epochs[0]).not.toEqual(r0.epochs[1]);
  } finally {
    server.close();
  }
}, 120_000);
