// TypeScript doors to the WGSL kernels. Each method builds a Dispatch once — pipeline, bind group
// and its own small uniform buffer — so a training step only records `setBindGroup` +
// `dispatchWorkgroups` and allocates nothing. Offsets and strides are in f32 elements and live in
// the uniforms, so tensors inside one flat buffer need no binding-offset alignment.
import { invariant } from '../errors/index.ts';
import { readText } from '../runtime/index.ts';
import { onCpuAdapter, uniformBuffer } from '../gpu/internal.ts';
import {
  AttentionParams,
  ElementwiseParams,
  EmbedParams,
  LayerNormParams,
  LossParams,
  MatmulParams,
  OptimHyper,
  TokenEmbedParams,
  type OptimValues,
} from './params.ts';

export interface Dispatch {
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  groups: readonly [number, number, number];
  label: string;
}

export function record(pass: GPUComputePassEncoder, dispatches: readonly Dispatch[]): void {
  for (const d of dispatches) recordOne(pass, d);
}

export function recordOne(pass: GPUComputePassEncoder, d: Dispatch): void {
  pass.setPipeline(d.pipeline);
  pass.setBindGroup(0, d.bindGroup);
  pass.dispatchWorkgroups(d.groups[0], d.groups[1], d.groups[2]);
}

export interface MatmulSpec {
  a: GPUBuffer;
  b: GPUBuffer;
  c: GPUBuffer;
  M: number;
  N: number;
  K: number;
  transA?: boolean;
  transB?: boolean;
  lda?: number;
  ldb?: number;
  ldc?: number;
  offA?: number;
  offB?: number;
  offC?: number;
  alpha?: number;
  /** Adds bias[biasOff + n] to every row. */
  bias?: { buffer: GPUBuffer; offset: number };
  /** Adds a residual with C's layout. */
  residual?: GPUBuffer;
  accumulate?: boolean;
  /** Batched: `count` problems indexed (z / inner, z % inner), each operand with two strides. */
  batch?: { count: number; inner: number; a: [number, number]; b: [number, number]; c: [number, number] };
}

export interface LayerNormSpec {
  rows: number;
  D: number;
  xStride: number;
  yStride: number;
  gOff: number;
  bOff: number;
}

/** Where the GPT's token embedding reads its two tables in the flat parameters. */
export interface EmbedTables {
  V: number;
  context: number;
  D: number;
  wteOff: number;
  wpeOff: number;
}

export interface AttentionShape {
  B: number;
  H: number;
  T: number;
  hd: number;
}

const MAX_GROUPS = 65535;

/** Folds a 1-D launch of `n` threads into a 2-D grid; returns the groups and the row stride in threads. */
function fold(n: number, size: number): { groups: [number, number, number]; stride: number } {
  const total = Math.max(1, Math.ceil(n / size));
  const rows = Math.ceil(total / MAX_GROUPS);
  const x = Math.ceil(total / rows);
  return { groups: [x, rows, 1], stride: x * size };
}

/** A dispatch's storage buffers, by the names its WGSL gives them (`@binding(n) var<…> name`). */
type Entries = Record<string, GPUBuffer>;

/** A kernel's pipeline and where its WGSL binds each named buffer and its uniform block. */
interface Kernel {
  pipeline: GPUComputePipeline;
  bindings: ReadonlyMap<string, number>;
  uniformBinding: number;
}

/** `@group(0) @binding(n) var<…> name` of one WGSL source: each name's binding, and the uniform's. */
function bindingsOf(code: string): { bindings: Map<string, number>; uniformBinding: number } {
  const bindings = new Map<string, number>();
  let uniformBinding = -1;
  for (const m of code.matchAll(/@group\(0\)\s*@binding\((\d+)\)\s*var(?:<([^>]+)>)?\s+(\w+)/g)) {
    if (m[2] === 'uniform') uniformBinding = Number(m[1]);
    else bindings.set(m[3]!, Number(m[1]));
  }
  invariant(uniformBinding >= 0, 'vit: a kernel source declares no uniform block');
  return { bindings, uniformBinding };
}

/** Which matmul kernel a Kernels object runs; see Kernels.create. */
export type MatmulKernel = 'tiled' | 'direct';
const DIRECT_TILE = 32; // matmul-direct.wgsl: 8×8 threads × 4×4 outputs
/**
 * With the tiled kernel, a product whose output has fewer 64×64 tiles than this goes to the direct
 * kernel instead (32×32 tiles, four times the workgroups). Weight gradients have small outputs and a
 * long K (the rows of the batch): measured on an NVIDIA H200, the tiled kernel ran 64×128 over
 * K = 1088 on 2 workgroups at 1.9 GFLOP/s and the direct kernel at 14.2, and that product's
 * dispatches took 81% of the ViT step's GPU time (docs/bench/vit-h200.md).
 */
const SMALL_GRID = 64;

export class Kernels {
  readonly #device: GPUDevice;
  readonly #kernels: Map<string, Kernel>;
  readonly #dummy: GPUBuffer;
  readonly #owned: GPUBuffer[] = [];
  readonly #tile: number;
  readonly #smallGrid: number;
  readonly #layerNormEps: number;

  private constructor(
    device: GPUDevice,
    kernels: Map<string, Kernel>,
    readonly matmulKernel: MatmulKernel,
    tile: number,
    layerNormEps: number,
    smallGrid: number,
  ) {
    this.#tile = tile;
    this.#smallGrid = smallGrid;
    this.#layerNormEps = layerNormEps;
    this.#device = device;
    this.#kernels = kernels;
    this.#dummy = this.#own(device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }));
  }

  /**
   * `matmul`: 'tiled' (workgroup-memory tiles, for GPUs), 'direct' (no workgroup memory: about 3×
   * faster on lavapipe, see docs/vit.md) or 'auto' (the default: direct on CPU adapters);
   * `matmulTile` shapes the tiled kernel: [threads per side, outputs per thread per side],
   * product ≤ 64 (benchmarks compare them); `gelu` and `layerNormEps` as in ViTConfig.
   * `smallGrid`: with the tiled kernel, products whose output has fewer tiles than this run on
   * the direct kernel (default SMALL_GRID when `matmul` is 'auto' and no tile is given, else 0).
   * `decoder` (the GPT's): attention causal within documents, the loss averaged over the labelled
   * rows, and the token embedding.
   */
  static async create(
    device: GPUDevice,
    options: {
      matmul?: MatmulKernel | 'auto';
      matmulTile?: [number, number];
      gelu?: 'tanh' | 'erf';
      layerNormEps?: number;
      smallGrid?: number;
      decoder?: boolean;
    } = {},
  ): Promise<Kernels> {
    const [wg, tb] = options.matmulTile ?? [8, 8];
    if (wg * tb > 64 || tb > 8 || wg * wg > 256) throw new RangeError(`vit matmul tile ${wg}×${tb} unsupported`);
    const requested = options.matmul ?? 'auto';
    const auto = requested === 'auto';
    const matmul = requested === 'auto' ? (onCpuAdapter(device) && !options.matmulTile ? 'direct' : 'tiled') : requested;
    const direct = matmul === 'direct';
    const smallGrid = direct ? 0 : (options.smallGrid ?? (auto && !options.matmulTile ? SMALL_GRID : 0));
    const source = (file: string) => readText(new URL(`./${file}`, import.meta.url));
    const common = await source('matmul-common.wgsl');
    const files = {
      matmul: direct ? 'matmul-direct.wgsl' : 'matmul.wgsl',
      matmulDirect: 'matmul-direct.wgsl',
      layerNorm: 'layernorm.wgsl',
      elementwise: 'elementwise.wgsl',
      embed: 'embed.wgsl',
      loss: 'loss.wgsl',
      optim: 'optim.wgsl',
      attention: 'attention.wgsl',
      tokenEmbed: 'token-embed.wgsl',
    };
    const decoder = options.decoder === true;
    type ModuleName = keyof typeof files;
    const modules = new Map<ModuleName, { module: GPUShaderModule; bindings: Map<string, number>; uniformBinding: number }>();
    await Promise.all(
      Object.entries(files).map(async ([name, file]) => {
        if ((name === 'matmulDirect' && smallGrid === 0) || (name === 'tokenEmbed' && !decoder)) return;
        const code = (name === 'matmul' || name === 'matmulDirect' ? common : '') + (await source(file));
        modules.set(name as ModuleName, { module: device.createShaderModule({ code, label: `vit ${file}` }), ...bindingsOf(code) });
      }),
    );
    const tile = (transA: number, transB: number): Record<string, number> =>
      direct ? { TRANS_A: transA, TRANS_B: transB } : { TRANS_A: transA, TRANS_B: transB, WG: wg, TB: tb };
    const exactGelu = { exact_gelu: options.gelu === 'erf' ? 1 : 0 };
    // Each dispatch's name, its WGSL module and entry point, and its pipeline constants.
    const specs: [string, ModuleName, string, Record<string, number>?][] = [
      ['mm.nn', 'matmul', 'main', tile(0, 0)],
      ['mm.tn', 'matmul', 'main', tile(1, 0)],
      ['mm.nt', 'matmul', 'main', tile(0, 1)],
      ['ln.fwd', 'layerNorm', 'forward'],
      ['ln.bwd', 'layerNorm', 'backward'],
      ['ln.params', 'layerNorm', 'params_backward'],
      ['gelu.fwd', 'elementwise', 'gelu_forward', exactGelu],
      ['gelu.bwd', 'elementwise', 'gelu_backward', exactGelu],
      ['colsum', 'elementwise', 'col_sum'],
      ['softmax.fwd', 'elementwise', 'softmax_forward'],
      ['softmax.bwd', 'elementwise', 'softmax_backward'],
      ['patchify', 'embed', 'patchify'],
      ['tokens.fwd', 'embed', 'tokens_forward'],
      ['tokens.bwd', 'embed', 'tokens_backward'],
      ['attn.fwd', 'attention', 'forward', { CAUSAL: decoder ? 1 : 0 }],
      ['attn.rows', 'attention', 'backward_rows', { CAUSAL: decoder ? 1 : 0 }],
      ['attn.cols', 'attention', 'backward_cols', { CAUSAL: decoder ? 1 : 0 }],
      ['ce', 'loss', 'main', { LABELLED_MEAN: decoder ? 1 : 0 }],
      ['sumsq', 'optim', 'sum_squares'],
      ['finalize', 'optim', 'finalize'],
      ['adamw', 'optim', 'adamw'],
    ];
    if (smallGrid > 0)
      for (const [name, ta, tb] of [
        ['mm.nn', 0, 0],
        ['mm.tn', 1, 0],
        ['mm.nt', 0, 1],
      ] as const)
        specs.push([`${name}.small`, 'matmulDirect', 'main', { TRANS_A: ta, TRANS_B: tb }]);
    if (decoder) specs.push(['embed.fwd', 'tokenEmbed', 'forward'], ['embed.bwd', 'tokenEmbed', 'backward']);
    const made = await Promise.all(
      specs.map(async ([name, moduleName, entryPoint, constants]): Promise<[string, Kernel]> => {
        const { module, bindings, uniformBinding } = modules.get(moduleName)!;
        const compute: GPUProgrammableStage = constants ? { module, entryPoint, constants } : { module, entryPoint };
        const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute, label: `vit ${name}` });
        return [name, { pipeline, bindings, uniformBinding }];
      }),
    );
    return new Kernels(device, new Map(made), matmul, direct ? DIRECT_TILE : wg * tb, options.layerNormEps ?? 1e-5, smallGrid);
  }

  /** Frees the uniform buffers this object created (not the caller's buffers). */
  destroy(): void {
    for (const b of this.#owned) b.destroy();
    this.#owned.length = 0;
  }

  matmul(s: MatmulSpec): Dispatch {
    const ta = s.transA ?? false;
    const tb = s.transB ?? false;
    if (ta && tb) throw new RangeError('vit matmul: Aᵀ·Bᵀ is not provided');
    const batch = s.batch ?? { count: 1, inner: 1, a: [0, 0], b: [0, 0], c: [0, 0] };
    const flags = (s.bias ? 1 : 0) | (s.residual ? 2 : 0) | (s.accumulate ? 4 : 0);
    const u = MatmulParams.pack({
      M: s.M,
      N: s.N,
      K: s.K,
      inner: batch.inner,
      lda: s.lda ?? (ta ? s.M : s.K),
      ldb: s.ldb ?? (tb ? s.K : s.N),
      ldc: s.ldc ?? s.N,
      flags,
      offA: s.offA ?? 0,
      offB: s.offB ?? 0,
      offC: s.offC ?? 0,
      alpha: s.alpha ?? 1,
      sA1: batch.a[0],
      sA2: batch.a[1],
      sB1: batch.b[0],
      sB2: batch.b[1],
      sC1: batch.c[0],
      sC2: batch.c[1],
      biasOff: s.bias?.offset ?? 0,
    });
    const name = ta ? 'mm.tn' : tb ? 'mm.nt' : 'mm.nn';
    const entries: Entries = { a: s.a, b: s.b, c: s.c, bias: s.bias?.buffer ?? this.#dummy, res: s.residual ?? this.#dummy };
    const small = Math.ceil(s.N / this.#tile) * Math.ceil(s.M / this.#tile) < this.#smallGrid;
    const tile = small ? DIRECT_TILE : this.#tile;
    return this.#make(small ? `${name}.small` : name, entries, u, [Math.ceil(s.N / tile), Math.ceil(s.M / tile), batch.count]);
  }

  layerNorm(s: LayerNormSpec, x: GPUBuffer, w: GPUBuffer, y: GPUBuffer, stats: GPUBuffer): Dispatch {
    return this.#make('ln.fwd', { x, w, y, stats }, this.#lnParams(s, false), [s.rows, 1, 1]);
  }

  /** dx (+)= the input gradient; `accumulate` adds it to dx's residual gradient in place. */
  layerNormBackward(
    s: LayerNormSpec,
    dy: GPUBuffer,
    x: GPUBuffer,
    w: GPUBuffer,
    stats: GPUBuffer,
    dx: GPUBuffer,
    accumulate: boolean,
  ): Dispatch {
    return this.#make('ln.bwd', { x, w, dy, dx, st: stats }, this.#lnParams(s, accumulate), [s.rows, 1, 1]);
  }

  /** Gain and bias gradients written into `grads` at the spec's gOff / bOff. */
  layerNormParams(s: LayerNormSpec, dy: GPUBuffer, x: GPUBuffer, stats: GPUBuffer, grads: GPUBuffer): Dispatch {
    return this.#make('ln.params', { x, dy, st: stats, grads }, this.#lnParams(s, false), [Math.ceil(s.D / 64), 1, 1]);
  }

  /**
   * Fused attention forward: probabilities kept in `probs` [B,H,T,T], output heads into o [B·T, D].
   * A decoder's reads `docIds` [B·T] (each query sees the keys of its document up to itself).
   */
  attention(s: AttentionShape, qkv: GPUBuffer, probs: GPUBuffer, o: GPUBuffer, docIds = this.#dummy): Dispatch {
    return this.#make('attn.fwd', { qkv, probs, o, docIds }, this.#attnParams(s), this.#attnGroups(s));
  }

  /** Attention backward: dS (scratch [B,H,T,T]) and dq, dk, dv into dqkv; two dispatches. */
  attentionBackward(s: AttentionShape, qkv: GPUBuffer, probs: GPUBuffer, dO: GPUBuffer, dS: GPUBuffer, dqkv: GPUBuffer): Dispatch[] {
    const u = this.#uniform(this.#attnParams(s));
    const e = { qkv, dO, dS, dqkv, P: probs };
    return [this.#make('attn.rows', e, u, this.#attnGroups(s)), this.#make('attn.cols', e, u, this.#attnGroups(s))];
  }

  gelu(u: GPUBuffer, a: GPUBuffer, n: number): Dispatch {
    const f = fold(n, 256);
    return this.#make('gelu.fwd', { src: u, dst: a }, ElementwiseParams.pack({ n, stride: f.stride }), f.groups);
  }

  /** d (dL/da) becomes dL/du in place. */
  geluBackward(u: GPUBuffer, d: GPUBuffer, n: number): Dispatch {
    const f = fold(n, 256);
    return this.#make('gelu.bwd', { src: u, dst: d }, ElementwiseParams.pack({ n, stride: f.stride }), f.groups);
  }

  /** out[off + c] = Σ_r x[r, c]. */
  colSum(x: GPUBuffer, rows: number, cols: number, out: GPUBuffer, off: number): Dispatch {
    return this.#make('colsum', { src: x, dst: out }, ElementwiseParams.pack({ n: rows, cols, off }), [Math.ceil(cols / 64), 1, 1]);
  }

  softmax(s: GPUBuffer, rows: number, cols: number): Dispatch {
    const f = fold(rows, 64);
    return this.#make('softmax.fwd', { dst: s }, ElementwiseParams.pack({ n: rows, cols, stride: f.stride }), f.groups);
  }

  /** d (dL/dP) becomes dL/dS in place. */
  softmaxBackward(p: GPUBuffer, d: GPUBuffer, rows: number, cols: number): Dispatch {
    const f = fold(rows, 64);
    return this.#make('softmax.bwd', { src: p, dst: d }, ElementwiseParams.pack({ n: rows, cols, stride: f.stride }), f.groups);
  }

  patchify(images: GPUBuffer, patches: GPUBuffer, B: number, C: number, S: number, P: number): Dispatch {
    const total = B * C * S * S;
    const f = fold(total, 256);
    const u = EmbedParams.pack({ B, C, S, P, grid: S / P, total, stride: f.stride });
    return this.#make('patchify', { src: images, dst: patches }, u, f.groups);
  }

  tokens(pe: GPUBuffer, w: GPUBuffer, x: GPUBuffer, B: number, T: number, D: number, clsOff: number, posOff: number): Dispatch {
    const total = B * T * D;
    const f = fold(total, 256);
    const u = EmbedParams.pack({ B, T, D, total, clsOff, posOff, stride: f.stride });
    return this.#make('tokens.fwd', { src: pe, w, dst: x }, u, f.groups);
  }

  tokensBackward(
    dx: GPUBuffer,
    dpe: GPUBuffer,
    grads: GPUBuffer,
    B: number,
    T: number,
    D: number,
    clsOff: number,
    posOff: number,
  ): Dispatch {
    const u = EmbedParams.pack({ B, T, D, clsOff, posOff });
    return this.#make('tokens.bwd', { src: dx, dst: dpe, grads }, u, [Math.ceil((T * D) / 256), 1, 1]);
  }

  /** x [rows, D] = wte[inputs] + wpe[positions] (a decoder's). */
  tokenEmbedding(t: EmbedTables, rows: number, inputs: GPUBuffer, positions: GPUBuffer, params: GPUBuffer, x: GPUBuffer): Dispatch {
    const total = rows * t.D;
    const f = fold(total, 256);
    const u = TokenEmbedParams.pack({ rows, ...t, stride: f.stride, total });
    return this.#make('embed.fwd', { inputs, positions, w: params, x }, u, f.groups);
  }

  /** Adds the embedding's gradient to wte's (after the tied head's) and writes wpe's. */
  tokenEmbeddingBackward(t: EmbedTables, rows: number, inputs: GPUBuffer, positions: GPUBuffer, dx: GPUBuffer, grads: GPUBuffer): Dispatch {
    const total = (t.V + t.context) * t.D;
    const f = fold(total, 256);
    const u = TokenEmbedParams.pack({ rows, ...t, stride: f.stride, total });
    return this.#make('embed.bwd', { inputs, positions, dx, grads }, u, f.groups);
  }

  crossEntropy(logits: GPUBuffer, labels: GPUBuffer, dlogits: GPUBuffer, stats: GPUBuffer, B: number, K: number): Dispatch {
    return this.#make('ce', { logits, labels, dlogits, stats }, LossParams.pack({ B, K }), [1, 1, 1]);
  }

  /** Grad norm, schedule and AdamW: three dispatches sharing one hyper-parameter uniform. */
  optimizer(
    hyper: OptimValues,
    n: number,
    o: { grads: GPUBuffer; partial: GPUBuffer; state: GPUBuffer; w: GPUBuffer; m: GPUBuffer; v: GPUBuffer },
  ): Dispatch[] {
    const f = fold(n, 256);
    const uniform = this.#uniform(OptimHyper.pack({ ...hyper, stride: f.stride }));
    return [
      this.#make('sumsq', { grads: o.grads, partial: o.partial }, uniform, [256, 1, 1]),
      this.#make('finalize', { partial: o.partial, state: o.state }, uniform, [1, 1, 1]),
      this.#make('adamw', { grads: o.grads, w: o.w, m1: o.m, m2: o.v, st: o.state }, uniform, f.groups),
    ];
  }

  #attnParams(s: AttentionShape): ArrayBuffer {
    return AttentionParams.pack({ B: s.B, H: s.H, T: s.T, hd: s.hd, D: s.H * s.hd, scale: 1 / Math.sqrt(s.hd) });
  }

  #attnGroups(s: AttentionShape): [number, number, number] {
    return [Math.ceil((s.B * s.H * s.T) / 64), 1, 1];
  }

  #lnParams(s: LayerNormSpec, accumulate: boolean): ArrayBuffer {
    return LayerNormParams.pack({
      rows: s.rows,
      D: s.D,
      xStride: s.xStride,
      yStride: s.yStride,
      gOff: s.gOff,
      bOff: s.bOff,
      accumulate: accumulate ? 1 : 0,
      eps: this.#layerNormEps,
    });
  }

  #own(buffer: GPUBuffer): GPUBuffer {
    this.#owned.push(buffer);
    return buffer;
  }

  #uniform(data: ArrayBuffer): GPUBuffer {
    return this.#own(uniformBuffer(this.#device, data));
  }

  /** One dispatch: `entries` by their WGSL names, the uniform block packed from `params` (or shared). */
  #make(name: string, entries: Entries, params: ArrayBuffer | GPUBuffer, groups: [number, number, number]): Dispatch {
    const kernel = this.#kernels.get(name);
    invariant(kernel, `vit: no pipeline ${name}`);
    const { pipeline, bindings, uniformBinding } = kernel;
    const uniform = params instanceof ArrayBuffer ? this.#uniform(params) : params;
    const bound: GPUBindGroupEntry[] = [{ binding: uniformBinding, resource: { buffer: uniform } }];
    for (const [variable, buffer] of Object.entries(entries)) {
      const binding = bindings.get(variable);
      invariant(binding !== undefined, `vit ${name}: its WGSL declares no buffer named ${variable}`);
      bound.push({ binding, resource: { buffer } });
    }
    const bindGroup = this.#device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bound, label: `vit ${name}` });
    for (const g of groups) if (g > MAX_GROUPS) throw new RangeError(`vit ${name}: ${g} workgroups in one dimension`);
    return { pipeline, bindGroup, groups, label: name };
  }
}
