// Tandem's snappy decoder (src/parquet/snappy.ts) against two others: hyparquet's JavaScript port
// and hysnappy (Google's snappy in wasm), on blocks written by hyparquet-writer's compressor and by
// hand: incompressible bytes (one long literal), repeating runs (overlapping back references), text,
// and every truncation of a block, which must throw, never write out of bounds.
import { snappyUncompress as hyparquetSnappy } from 'hyparquet/src/snappy.js';
import { snappyCompress } from 'hyparquet-writer/src/snappy.js';
import { snappyUncompress as hysnappy } from 'hysnappy';
import { describe, expect, it } from 'vitest';
import { snappyUncompress } from '../../src/parquet/snappy.ts';
import { Rng } from '../../src/random/index.ts';
import { sampleImages } from '../shared/transfer-scenarios.ts';

function inputs(): Uint8Array[] {
  const rng = new Rng(7);
  const random = new Uint8Array(200_000).map(() => rng.next() & 255);
  const runs = new Uint8Array(100_000).map((_, i) => [0, 1, 2][Math.floor(i / 37) % 3] ?? 0);
  const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog, '.repeat(3000));
  const mixed = new Uint8Array([...random.subarray(0, 5000), ...runs.subarray(0, 5000), ...text.subarray(0, 5000)]);
  const jpegs = sampleImages(6, 160).map((x) => x.bytes);
  return [new Uint8Array(0), new Uint8Array([42]), random, runs, text, mixed, ...jpegs];
}

describe('snappy (Tandem) against hyparquet and hysnappy', () => {
  it('decodes what a snappy compressor wrote, byte for byte, as both others do', () => {
    for (const raw of inputs()) {
      const block = snappyCompress(raw);
      const ours = snappyUncompress(block, raw.length);
      expect(Buffer.from(ours).equals(Buffer.from(raw))).toBe(true);
      const theirs = new Uint8Array(raw.length);
      hyparquetSnappy(block, theirs);
      expect(Buffer.from(theirs).equals(Buffer.from(ours))).toBe(true);
      expect(Buffer.from(hysnappy(block, raw.length)).equals(Buffer.from(ours))).toBe(true);
    }
  });

  it('an overlapping back reference repeats its pattern (offset 1 and 3, hand-written blocks)', () => {
    // preamble 10; literal "ab" (tag 0b000001_00); copy len 8 offset 1 (tag 1: len-4=4 → bits 2-4, offset 1).
    expect([...snappyUncompress(new Uint8Array([10, 0x04, 97, 98, 0x11, 1]), 10)]).toEqual([97, 98, ...Array(8).fill(98)]);
    // preamble 9; literal "xyz" then copy len 6 offset 3 (2-byte offset form: tag (6-1)<<2|2).
    expect(String.fromCharCode(...snappyUncompress(new Uint8Array([9, 0x08, 120, 121, 122, (5 << 2) | 2, 3, 0]), 9))).toBe('xyzxyzxyz');
  });

  it('a cut or corrupt block throws an Error; it never writes past its output', () => {
    const raw = inputs()[5] ?? new Uint8Array(0);
    const block = snappyCompress(raw);
    for (let cut = 0; cut < block.length; cut += Math.max(1, Math.floor(block.length / 97))) {
      expect(() => snappyUncompress(block.subarray(0, cut), raw.length)).toThrow(RangeError);
    }
    expect(() => snappyUncompress(block, raw.length - 1)).toThrow(/page says/);
    // A copy whose offset reaches before the output's start.
    expect(() => snappyUncompress(new Uint8Array([5, 0x00, 97, 0x05, 9]), 5)).toThrow(/outside/);
  });
});
