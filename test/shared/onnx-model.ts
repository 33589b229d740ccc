// Writes a small seeded ONNX model (protobuf, opset 13) for the tandem/onnx tests: the repository
// makes its test models, it never downloads one. pixels [N,3,H,W] → Conv 3×3 (3→8, pad 1) → Relu
// → GlobalAveragePool → Flatten → "embedding" [N,8] → Gemm (8→classes) → "logits" [N,classes].
import { Rng } from '../../src/random/index.ts';

class Proto {
  #bytes: number[] = [];
  varint(field: number, value: number): this {
    this.#key(field, 0);
    this.#raw(value);
    return this;
  }
  bytes(field: number, data: Uint8Array): this {
    this.#key(field, 2);
    this.#raw(data.length);
    for (const b of data) this.#bytes.push(b);
    return this;
  }
  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }
  message(field: number, inner: Proto): this {
    return this.bytes(field, inner.finish());
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.#bytes);
  }
  #key(field: number, wire: number): void {
    this.#raw(field * 8 + wire);
  }
  #raw(value: number): void {
    let v = value;
    while (v >= 0x80) {
      this.#bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.#bytes.push(v);
  }
}

const FLOAT = 1;

function tensor(name: string, dims: number[], values: Float32Array): Proto {
  const t = new Proto();
  for (const d of dims) t.varint(1, d);
  return t
    .varint(2, FLOAT)
    .string(8, name)
    .bytes(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}

function valueInfo(name: string, dims: (number | string)[]): Proto {
  const shape = new Proto();
  for (const d of dims) shape.message(1, typeof d === 'number' ? new Proto().varint(1, d) : new Proto().string(2, d));
  const tensorType = new Proto().varint(1, FLOAT).message(2, shape);
  return new Proto().string(1, name).message(2, new Proto().message(1, tensorType));
}

function node(op: string, inputs: string[], outputs: string[], attributes: Proto[] = []): Proto {
  const n = new Proto();
  for (const i of inputs) n.string(1, i);
  for (const o of outputs) n.string(2, o);
  n.string(3, `${op.toLowerCase()}_${outputs[0]}`).string(4, op);
  for (const a of attributes) n.message(5, a);
  return n;
}

function ints(name: string, values: number[]): Proto {
  const a = new Proto().string(1, name);
  for (const v of values) a.varint(8, v);
  return a.varint(20, 7);
}

function seeded(rng: Rng, n: number, scale: number): Float32Array {
  return Float32Array.from({ length: n }, () => rng.range(-scale, scale));
}

/** The model's bytes; the same seed gives the same bytes. */
export function embeddingModel(seed = 1, height = 32, width = 32, classes = 4): Uint8Array {
  const rng = new Rng(seed);
  const graph = new Proto()
    .message(1, node('Conv', ['pixels', 'conv_w', 'conv_b'], ['conv'], [ints('kernel_shape', [3, 3]), ints('pads', [1, 1, 1, 1])]))
    .message(1, node('Relu', ['conv'], ['relu']))
    .message(1, node('GlobalAveragePool', ['relu'], ['pooled']))
    .message(1, node('Flatten', ['pooled'], ['embedding']))
    .message(1, node('Gemm', ['embedding', 'head_w', 'head_b'], ['logits']))
    .string(2, 'tandem-embedding')
    .message(5, tensor('conv_w', [8, 3, 3, 3], seeded(rng, 8 * 27, 0.3)))
    .message(5, tensor('conv_b', [8], seeded(rng, 8, 0.1)))
    .message(5, tensor('head_w', [8, classes], seeded(rng, 8 * classes, 0.5)))
    .message(5, tensor('head_b', [classes], seeded(rng, classes, 0.1)))
    .message(11, valueInfo('pixels', ['batch', 3, height, width]))
    .message(12, valueInfo('embedding', ['batch', 8]))
    .message(12, valueInfo('logits', ['batch', classes]));
  return new Proto().varint(1, 8).string(2, 'tandem-tests').message(7, graph).message(8, new Proto().string(1, '').varint(2, 13)).finish();
}
