// Every uniform struct a WGSL kernel reads is declared once in TypeScript (src/gpu/uniforms.ts),
// and the two must agree field for field: a field added, removed, renamed, retyped or moved in the
// .wgsl without its declaration (or the other way round) fails here, not as garbage on the GPU.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AugmentParams, AugmentSample, SAMPLE_FLOATS } from '../../src/gpu/augment.ts';
import { NormalizeParams } from '../../src/gpu/normalize.ts';
import type { UniformStruct } from '../../src/gpu/uniforms.ts';
import {
  AttentionParams,
  ElementwiseParams,
  EmbedParams,
  LayerNormParams,
  LossParams,
  MatmulParams,
  OptimHyper,
  TokenEmbedParams,
} from '../../src/vit/params.ts';
import { FramePassParams } from '../../src/video/frame-pass.ts';

const src = new URL('../../src/', import.meta.url).pathname;

/** The TypeScript declaration of each .wgsl file's uniform struct. */
const DECLARED: Record<string, UniformStruct<string>> = {
  'gpu/augment.wgsl': AugmentParams,
  'gpu/normalize.wgsl': NormalizeParams,
  'vit/attention.wgsl': AttentionParams,
  'vit/elementwise.wgsl': ElementwiseParams,
  'vit/embed.wgsl': EmbedParams,
  'vit/layernorm.wgsl': LayerNormParams,
  'vit/loss.wgsl': LossParams,
  'vit/matmul-common.wgsl': MatmulParams,
  'vit/optim.wgsl': OptimHyper,
  'video/frame-pass.wgsl': FramePassParams,
  'vit/token-embed.wgsl': TokenEmbedParams,
};

/** The struct a file binds as `var<uniform>`, as [name, [field, type][]], from the WGSL source. */
function uniformStruct(wgsl: string): [string, Array<[string, string]>] | undefined {
  const type = /var<uniform>\s+\w+\s*:\s*(\w+)/.exec(wgsl.replace(/\/\/.*$/gm, ''))?.[1];
  return type === undefined ? undefined : [type, structFields(wgsl, type)];
}

/** The fields of WGSL struct `type`, as [field, type][]. */
function structFields(wgsl: string, type: string): Array<[string, string]> {
  const code = wgsl.replace(/\/\/.*$/gm, '');
  const body = new RegExp(`struct\\s+${type}\\s*\\{([^}]*)\\}`).exec(code)?.[1];
  if (body === undefined) throw new Error(`struct ${type} not found`);
  const fields = body
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
    .map((f) => f.split(':').map((part) => part.trim()) as [string, string]);
  return fields;
}

describe('uniform struct declarations match the WGSL', () => {
  const files = readdirSync(src, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.wgsl'));
  it('every file that binds a uniform struct has a declaration, and every declaration a file', () => {
    const binding = files.filter((f) => uniformStruct(readFileSync(join(src, f), 'utf8')) !== undefined).sort();
    expect(binding).toEqual(Object.keys(DECLARED).sort());
  });
  for (const [file, declared] of Object.entries(DECLARED)) {
    it(`${file}: ${declared.name}`, () => {
      const [name, fields] = uniformStruct(readFileSync(join(src, file), 'utf8'))!;
      expect(declared.name).toBe(name);
      expect(declared.fields.map(([f, t]) => [f, t])).toEqual(fields);
    });
  }
});

describe('storage struct declarations match the WGSL', () => {
  it('gpu/augment.wgsl: Sample, the per-sample parameters (their stride is SAMPLE_FLOATS)', () => {
    const fields = structFields(readFileSync(join(src, 'gpu/augment.wgsl'), 'utf8'), AugmentSample.name);
    expect(AugmentSample.fields.map(([f, t]) => [f, t])).toEqual(fields);
    expect(SAMPLE_FLOATS * 4).toBe(AugmentSample.bytes);
    expect(/array<Sample>/.test(readFileSync(join(src, 'gpu/augment.wgsl'), 'utf8'))).toBe(true);
  });
});

describe('UniformStruct.pack', () => {
  it('places fields by WGSL alignment and rounds the size to 16 bytes', () => {
    expect(NormalizeParams.bytes).toBe(48);
    expect(AugmentParams.bytes).toBe(64);
    expect(MatmulParams.bytes).toBe(80);
    expect(FramePassParams.bytes).toBe(96);
    expect(FramePassParams.offsetOf('area')).toBe(48);
    const packed = new DataView(AugmentParams.pack({ images: 3, row_pitch: 7, mean: [0.5, 0.25], inv_std: [2, 4, 8, 16] }));
    expect(packed.getUint32(16, true)).toBe(3);
    expect(packed.getUint32(24, true)).toBe(7);
    expect([packed.getFloat32(32, true), packed.getFloat32(36, true), packed.getFloat32(40, true)]).toEqual([0.5, 0.25, 0]);
    expect(packed.getFloat32(60, true)).toBe(16);
    expect(new DataView(MatmulParams.pack({ alpha: 0.5, biasOff: 9 })).getFloat32(44, true)).toBe(0.5);
    expect(new DataView(MatmulParams.pack({ alpha: 0.5, biasOff: 9 })).getUint32(72, true)).toBe(9);
  });
  it('refuses a value its field cannot hold', () => {
    expect(() => LossParams.pack({ B: -1 })).toThrow(/Params\.B: -1 is not a u32/);
    expect(() => LossParams.pack({ K: 1.5 })).toThrow(/not a u32/);
    expect(() => NormalizeParams.pack({ mean: [1, 2, 3, 4, 5] })).toThrow(/up to 4 numbers/);
  });
});
