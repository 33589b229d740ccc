import { describe, test } from 'vitest';
import { fileScenarios } from '../shared/sources-files-scenarios.ts';

describe('sources: tar writer, picked and dropped folders', () => {
  for (const [name, body] of Object.entries(fileScenarios)) test(name, body, 20_000);
});

// What the tar writer produces must open in the tools users already have.
test('GNU tar lists and extracts a shard the tar writer wrote (long names too)', async () => {
  const { execFileSync } = await import('node:child_process');
  const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { TarWriter } = await import('../../src/sources/index.ts');
  const dir = await mkdtemp(`${tmpdir()}/tandem-tar-`);
  try {
    const chunks: Uint8Array[] = [];
    const writer = new TarWriter((c) => void chunks.push(c.slice()));
    const long = `${'x'.repeat(130)}/000000001.jpg`;
    await writer.add('000000000.jpg', new Uint8Array([1, 2, 3]));
    await writer.add(long, new Uint8Array(700).fill(7));
    await writer.end();
    await writeFile(`${dir}/s.tar`, Buffer.concat(chunks));
    const listing = execFileSync('tar', ['-tf', `${dir}/s.tar`], { encoding: 'utf8' })
      .trim()
      .split('\n');
    if (listing.join('|') !== `000000000.jpg|${long}`) throw new Error(`tar lists ${listing.join('|')}`);
    execFileSync('tar', ['-xf', `${dir}/s.tar`, '-C', dir]);
    const extracted = await readFile(`${dir}/${long}`);
    if (extracted.length !== 700 || extracted.some((b) => b !== 7)) throw new Error('extracted bytes differ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
