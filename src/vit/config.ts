// The ViT's shape, its presets, and the layout of every parameter tensor in one flat buffer. Shared
// by the CPU reference and the GPU trainer so both index parameters the same way.
import { seededFloats } from '../random/index.ts';

export interface ViTConfig {
  imageSize: number;
  patchSize: number;
  channels: number;
  width: number;
  depth: number;
  heads: number;
  mlpRatio: number;
  classes: number;
  /** GELU form: 'tanh' (the approximation; the default) or 'erf' (exact, as timm's ViTs and PyTorch's nn.GELU). */
  gelu?: 'tanh' | 'erf';
  /** LayerNorm epsilon (default 1e-5; timm's ViTs use 1e-6). */
  layerNormEps?: number;
}

/** The LayerNorm epsilon of a config (1e-5 unless it says otherwise). */
export function layerNormEps(c: ViTConfig): number {
  return c.layerNormEps ?? 1e-5;
}

export const presets = {
  /** Trains on a CPU WebGPU adapter (lavapipe, SwiftShader) in minutes. */
  tiny: { imageSize: 32, patchSize: 8, channels: 3, width: 64, depth: 2, heads: 4, mlpRatio: 2, classes: 10 },
  /** A ViT-Ti-like model for 64×64 images; wants a real GPU for real training. */
  small: { imageSize: 64, patchSize: 8, channels: 3, width: 192, depth: 6, heads: 3, mlpRatio: 4, classes: 100 },
  /** ViT-B/16's shape (86 M parameters): real GPUs only (its parameter buffer exceeds 128 MiB bindings). */
  vitB16: { imageSize: 224, patchSize: 16, channels: 3, width: 768, depth: 12, heads: 12, mlpRatio: 4, classes: 1000 },
  /** timm's vit_tiny_patch16_224 (5.7 M parameters), exact GELU and LayerNorm ε 1e-6 as timm builds it. */
  vitTiny16: {
    imageSize: 224,
    patchSize: 16,
    channels: 3,
    width: 192,
    depth: 12,
    heads: 3,
    mlpRatio: 4,
    classes: 1000,
    gelu: 'erf',
    layerNormEps: 1e-6,
  },
} as const satisfies Record<string, ViTConfig>;

export interface Dims {
  grid: number; // patches per side
  patches: number; // patches per image
  tokens: number; // patches + class token
  patchDim: number; // channels · patch²
  headDim: number;
  hidden: number; // MLP hidden width
}

export function dims(c: ViTConfig): Dims {
  if (c.imageSize % c.patchSize !== 0) throw new RangeError(`vit: image ${c.imageSize} is not a multiple of patch ${c.patchSize}`);
  if (c.width % c.heads !== 0) throw new RangeError(`vit: width ${c.width} is not a multiple of heads ${c.heads}`);
  const grid = c.imageSize / c.patchSize;
  return {
    grid,
    patches: grid * grid,
    tokens: grid * grid + 1,
    patchDim: c.channels * c.patchSize * c.patchSize,
    headDim: c.width / c.heads,
    hidden: Math.round(c.width * c.mlpRatio),
  };
}

export interface TensorSpec {
  name: string;
  shape: number[];
  size: number;
  /** Element offset in the flat parameter buffer; a multiple of 64 so tensors bind at 256-byte offsets. */
  offset: number;
  /** Weight decay applies to matrices only (not biases, norms, class token or positions). */
  decay: boolean;
  init: 'normal' | 'zeros' | 'ones';
}

export interface ParamLayout {
  tensors: TensorSpec[];
  byName: Map<string, TensorSpec>;
  /** Total elements including alignment padding. */
  size: number;
  /** Elements [0, decayEnd) take weight decay: decayed tensors are laid out first. */
  decayEnd: number;
}

/** Adds one tensor to a layout being built. */
export type AddTensor = (name: string, shape: number[], init: TensorSpec['init'], decay?: boolean) => void;

/** The pre-LN blocks' tensors, named and ordered as both models' kernels and references index them. */
export function addBlockTensors(add: AddTensor, depth: number, D: number, hidden: number): void {
  for (let l = 0; l < depth; l++) {
    add(`b${l}.ln1.g`, [D], 'ones');
    add(`b${l}.ln1.b`, [D], 'zeros');
    add(`b${l}.qkv.w`, [D, 3 * D], 'normal', true);
    add(`b${l}.qkv.b`, [3 * D], 'zeros');
    add(`b${l}.proj.w`, [D, D], 'normal', true);
    add(`b${l}.proj.b`, [D], 'zeros');
    add(`b${l}.ln2.g`, [D], 'ones');
    add(`b${l}.ln2.b`, [D], 'zeros');
    add(`b${l}.fc1.w`, [D, hidden], 'normal', true);
    add(`b${l}.fc1.b`, [hidden], 'zeros');
    add(`b${l}.fc2.w`, [hidden, D], 'normal', true);
    add(`b${l}.fc2.b`, [D], 'zeros');
  }
}

const ALIGN = 64;

/** The tensors `build` adds in one flat buffer: the decayed ones first, each at a multiple of ALIGN. */
export function layoutTensors(build: (add: AddTensor) => void): ParamLayout {
  const specs: Omit<TensorSpec, 'offset' | 'size'>[] = [];
  build((name, shape, init, decay = false) => specs.push({ name, shape, init, decay }));
  const ordered = [...specs.filter((s) => s.decay), ...specs.filter((s) => !s.decay)];
  const tensors: TensorSpec[] = [];
  let offset = 0;
  let decayEnd = 0;
  for (const s of ordered) {
    const size = s.shape.reduce((a, b) => a * b, 1);
    tensors.push({ ...s, size, offset });
    offset += Math.ceil(size / ALIGN) * ALIGN;
    if (s.decay) decayEnd = offset;
  }
  return { tensors, byName: new Map(tensors.map((t) => [t.name, t])), size: offset, decayEnd };
}

export function paramLayout(c: ViTConfig): ParamLayout {
  const d = dims(c);
  const D = c.width;
  return layoutTensors((add) => {
    add('patch.w', [d.patchDim, D], 'normal', true);
    add('patch.b', [D], 'zeros');
    add('cls', [D], 'normal');
    add('pos', [d.tokens, D], 'normal');
    addBlockTensors(add, c.depth, D, d.hidden);
    add('lnf.g', [D], 'ones');
    add('lnf.b', [D], 'zeros');
    add('head.w', [D, c.classes], 'normal', true);
    add('head.b', [c.classes], 'zeros');
  });
}

/** The project's seeded generator, so the same seed gives the same weights everywhere. */
export const rng = seededFloats;

/**
 * Seeded initial parameters. `std: 'fan-in'` (the default) draws each matrix from N(0, 1/fan-in)
 * and the class token and positions from N(0, 0.02²): on the generated dataset the tiny preset
 * learns several times faster than with ViT-B's N(0, 0.02²) everywhere (docs/vit.md). A number
 * draws every normal tensor from N(0, std²). Draws are truncated at two standard deviations.
 */
export function initParams(c: ViTConfig, seed = 1, std: number | 'fan-in' = 'fan-in'): Float32Array<ArrayBuffer> {
  return initTensors(paramLayout(c), seed, (t) => (std !== 'fan-in' ? std : t.decay ? 1 / Math.sqrt(t.shape[0] ?? 1) : 0.02));
}

/** Seeded values for a layout: ones, zeros, or N(0, scale(t)²) truncated at two standard deviations. */
export function initTensors(layout: ParamLayout, seed: number, scale: (t: TensorSpec) => number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(layout.size);
  const next = rng(seed);
  for (const t of layout.tensors) {
    const std = scale(t);
    for (let i = 0; i < t.size; i++) {
      let v = 0;
      if (t.init === 'ones') v = 1;
      else if (t.init === 'normal') {
        const u = Math.max(next(), 1e-12);
        const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
        v = Math.max(-2, Math.min(2, z)) * std;
      }
      out[t.offset + i] = v;
    }
  }
  return out;
}

export interface TrainConfig {
  lr: number;
  minLr: number;
  warmupSteps: number;
  totalSteps: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Clip the global gradient norm to this (0 disables). */
  clipNorm: number;
}

export const defaultTrain: TrainConfig = {
  lr: 1e-3,
  minLr: 1e-5,
  warmupSteps: 20,
  totalSteps: 1000,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0.05,
  clipNorm: 1,
};

/** Learning rate of (1-based) step t: linear warmup, then cosine decay to minLr, flat after totalSteps. */
export function learningRate(t: TrainConfig, step: number): number {
  if (step <= t.warmupSteps) return (t.lr * step) / Math.max(1, t.warmupSteps);
  const span = Math.max(1, t.totalSteps - t.warmupSteps);
  const progress = Math.min(1, (step - t.warmupSteps) / span);
  return t.minLr + 0.5 * (t.lr - t.minLr) * (1 + Math.cos(Math.PI * progress));
}
