// WGSL uniform structs declared once in TypeScript and filled by field name. Each declaration
// lists the fields in the order and with the types of its `struct` in the .wgsl source (a test
// compares the two); offsets follow WGSL's uniform layout rules for the types used here, which for
// these types are also the storage layout (so a storage array's element, such as augmentation's
// per-sample `Sample`, is declared the same way and its stride is `bytes`).

export type UniformType = 'u32' | 'i32' | 'f32' | 'vec4f';
const SIZE: Record<UniformType, number> = { u32: 4, i32: 4, f32: 4, vec4f: 16 };

/** A value per field: a number for scalars, four numbers for vec4f; fields left out are 0. */
export type UniformValues<F extends string> = Partial<Record<F, number | readonly number[]>>;

export class UniformStruct<F extends string> {
  /** Size of the struct in a uniform buffer (a multiple of 16). */
  readonly bytes: number;
  readonly #offsets: ReadonlyArray<{ name: F; type: UniformType; offset: number }>;

  constructor(
    /** The struct's name in WGSL. */
    readonly name: string,
    readonly fields: ReadonlyArray<readonly [F, UniformType]>,
  ) {
    let offset = 0;
    this.#offsets = fields.map(([field, type]) => {
      offset = Math.ceil(offset / SIZE[type]) * SIZE[type];
      const placed = { name: field, type, offset };
      offset += SIZE[type];
      return placed;
    });
    this.bytes = Math.ceil(offset / 16) * 16;
  }

  /** Where `field` starts, in bytes from the struct's start. */
  offsetOf(field: F): number {
    const placed = this.#offsets.find((o) => o.name === field);
    if (placed === undefined) throw new RangeError(`${this.name} has no field ${field}`);
    return placed.offset;
  }

  /** The struct's bytes with every given field in place; throws on a value its type cannot hold. */
  pack(values: UniformValues<F>): ArrayBuffer {
    const buffer = new ArrayBuffer(this.bytes);
    const view = new DataView(buffer);
    for (const { name, type, offset } of this.#offsets) {
      const value = values[name];
      if (value === undefined) continue;
      const where = `${this.name}.${name}`;
      if (type === 'vec4f') {
        if (typeof value === 'number' || value.length > 4) throw new RangeError(`${where}: expected up to 4 numbers`);
        value.forEach((v, i) => {
          view.setFloat32(offset + 4 * i, v, true);
        });
        continue;
      }
      if (typeof value !== 'number') throw new RangeError(`${where}: expected a number`);
      if (type === 'f32') view.setFloat32(offset, value, true);
      else if (type === 'u32') {
        if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new RangeError(`${where}: ${value} is not a u32`);
        view.setUint32(offset, value, true);
      } else {
        if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) throw new RangeError(`${where}: ${value} is not an i32`);
        view.setInt32(offset, value, true);
      }
    }
    return buffer;
  }
}

/** A uniform buffer holding `data`, written at creation (ready for the first dispatch). */
export function uniformBuffer(device: GPUDevice, data: ArrayBuffer, label?: string): GPUBuffer {
  const size = Math.max(16, Math.ceil(data.byteLength / 16) * 16);
  const buffer = device.createBuffer({ size, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true, ...(label ? { label } : {}) });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data));
  buffer.unmap();
  return buffer;
}
