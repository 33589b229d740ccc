// The byte layout the trainers' checkpoints share (and the text session's, around a GPT's): a u32
// magic, the JSON header's byte length, the header padded to 4 bytes, then the body. A trainer's
// body is its parameters, AdamW moments and optimizer state, each buffer read back whole.
import { readBuffer } from '../gpu/index.ts';
import { WeightsError } from './safetensors.ts';

/** `magic`, the header as JSON and the body's parts, in one byte array. */
export function encodeFramed(magic: number, header: unknown, body: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const start = 8 + Math.ceil(json.length / 4) * 4;
  const out = new Uint8Array(start + body.reduce((n, part) => n + part.length, 0));
  const view = new DataView(out.buffer);
  view.setUint32(0, magic, true);
  view.setUint32(4, json.length, true);
  out.set(json, 8);
  let at = start;
  for (const part of body) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The header and body of `encodeFramed`'s bytes; WeightsError ('truncated', 'malformed') naming `what` otherwise. */
export function decodeFramed(bytes: Uint8Array, magic: number, what: string): { header: Record<string, unknown>; body: Uint8Array } {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) throw new WeightsError('truncated', `${what}: shorter than its header`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== magic) throw new WeightsError('malformed', `${what}: not a Tandem ${what}`);
  const length = view.getUint32(4, true);
  const start = 8 + Math.ceil(length / 4) * 4;
  if (start > bytes.length) throw new WeightsError('truncated', `${what}: the header is cut short`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + length)));
  } catch {
    throw new WeightsError('malformed', `${what}: the header is not JSON`);
  }
  if (typeof header !== 'object' || header === null) throw new WeightsError('malformed', `${what}: the header is not an object`);
  return { header: header as Record<string, unknown>, body: bytes.subarray(start) };
}

/** What a trainer's checkpoint says about the model it holds. */
export interface TrainerHeader {
  format: string;
  version: 1;
  config: object;
  train: object;
  size: number;
}

/** A trainer's checkpoint: its header, then `buffers` (parameters, moments, state) read back whole. */
export async function saveTrainer(device: GPUDevice, magic: number, header: TrainerHeader, buffers: GPUBuffer[]): Promise<Uint8Array> {
  const parts = await Promise.all(buffers.map(async (b) => new Uint8Array(await readBuffer(device, b))));
  return encodeFramed(magic, header, parts);
}

/** Writes a checkpoint of `saveTrainer` into `buffers`; WeightsError ('shape') when its model is not `expected`'s. */
export function loadTrainer(
  device: GPUDevice,
  bytes: Uint8Array,
  magic: number,
  expected: Pick<TrainerHeader, 'format' | 'config' | 'size'>,
  buffers: GPUBuffer[],
): void {
  const what = `${expected.format} checkpoint`;
  const { header, body } = decodeFramed(bytes, magic, what);
  if (JSON.stringify(header.config) !== JSON.stringify(expected.config) || header.size !== expected.size)
    throw new WeightsError(
      'shape',
      `${what}: checkpoint shape ${JSON.stringify(header.config)} does not match ${JSON.stringify(expected.config)}`,
    );
  if (buffers.reduce((n, b) => n + b.size, 0) > body.length) throw new WeightsError('truncated', `${what}: truncated checkpoint`);
  const copy = new Uint8Array(body); // at offset 0: a Node Buffer may be a view into a shared pool
  let at = 0;
  for (const target of buffers) {
    device.queue.writeBuffer(target, 0, copy, at, target.size);
    at += target.size;
  }
}
