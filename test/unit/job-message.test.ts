import { expect, it } from 'vitest';
import { JOB_BYTES, JOB_MESSAGE_BYTES, JOB_WORDS, writeJobMessage } from '../../src/decode/abi.ts';

it("a job's message is bounded in bytes: long non-ASCII text stays inside its record, in whole characters", () => {
  const heap = new Uint8Array(3 * JOB_BYTES).fill(0xaa);
  const second = JOB_BYTES;
  writeJobMessage(heap, second, `décodage échoué: ${'€'.repeat(200)}`);
  const field = heap.subarray(second + JOB_WORDS * 4, second + JOB_BYTES);
  const end = field.indexOf(0);
  expect(end).toBeGreaterThan(JOB_MESSAGE_BYTES - 4); // filled up to the last whole character
  expect(end).toBeLessThan(JOB_MESSAGE_BYTES);
  expect(field.subarray(end).every((b) => b === 0)).toBe(true);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(field.subarray(0, end));
  expect(text.startsWith('décodage échoué: €€')).toBe(true);
  // The records before and after, and this record's own words, are untouched.
  expect(heap.subarray(0, second + JOB_WORDS * 4).every((b) => b === 0xaa)).toBe(true);
  expect(heap.subarray(second + JOB_BYTES).every((b) => b === 0xaa)).toBe(true);
});
