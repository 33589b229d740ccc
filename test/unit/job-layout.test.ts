// The job record is declared twice: the C struct (wasm/src/tandem_decode.h) and the TypeScript
// field list (src/decode/abi.ts). The C static-asserts its size and a few offsets, and at start the
// pool compares the word count; this test compares every field, name and position, so a swapped or
// missing field in the middle fails here instead of decoding into the wrong words.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { JOB_MESSAGE_BYTES, JOB_WORDS } from '../../src/decode/abi.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

function cFields(): { names: string[]; messageBytes: number } {
  const struct = /typedef struct td_job \{([\s\S]*?)\} td_job;/.exec(read('wasm/src/tandem_decode.h'))?.[1];
  if (!struct) throw new Error('struct td_job not found');
  const code = struct.replace(/\/\*[\s\S]*?\*\//g, '');
  const names: string[] = [];
  for (const declaration of code.matchAll(/int32_t\s+([^;]+);/g)) names.push(...declaration[1]!.split(',').map((n) => n.trim()));
  const message = /char\s+message\[(\d+)\];/.exec(code);
  return { names, messageBytes: Number(message?.[1]) };
}

function tsFields(): string[] {
  const body = /export const enum Field \{([\s\S]*?)\n\}/.exec(read('src/decode/abi.ts'))?.[1];
  if (!body) throw new Error('enum Field not found');
  return body
    .split('\n')
    .map((line) => line.replace(/\/\/.*$/, '').trim())
    .filter(Boolean)
    .map((line) => line.replace(/\s*=\s*0\s*,?$|,$/g, ''));
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c, i: number) => (i ? '_' : '') + c.toLowerCase());

it('every field of the C job record has the TypeScript field of the same name at the same word', () => {
  const c = cFields();
  const ts = tsFields().map(snake);
  expect(c.names.length).toBe(JOB_WORDS);
  expect(ts).toEqual(c.names);
  expect(c.messageBytes).toBe(JOB_MESSAGE_BYTES);
});

it('every job kind of C (td_kind) has the TypeScript JobKind of the same value', () => {
  const c = /enum td_kind \{([\s\S]*?)\};/.exec(read('wasm/src/tandem_decode.h'))?.[1] ?? '';
  const kinds = [...c.matchAll(/TD_KIND_(\w+)\s*=\s*(\d+)/g)].map((m) => [snake(m[1]!.toLowerCase()), Number(m[2])]);
  const body = /export const enum JobKind \{([\s\S]*?)\n\}/.exec(read('src/decode/abi.ts'))?.[1] ?? '';
  const ts = [...body.matchAll(/(\w+)\s*=\s*(\d+)/g)].map((m) => [snake(m[1]!), Number(m[2])]);
  expect(kinds.length).toBe(7);
  expect(ts).toEqual(kinds);
});
