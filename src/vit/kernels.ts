// TypeScript doors to the WGSL kernels. Each method builds a Dispatch once — pipeline, bind group
// and its own small uniform buffer — so a training step only records `setBindGroup` +
// `dispatchWorkgroups` and allocates nothing. Offsets and strides are in f32 elements and live in
// the uniforms, so tensors inside one flat buffer need no binding-offset alignment.
import { readText } from '../runtime/index.ts';
import { onCpuAdapter, uniformBuffer } from '../gpu/index.ts';
import {
  AttentionParams,
  ElementwiseParams,
  EmbedParams,
  LayerNormParams,
  LossParams,
  MatmulParams,
  OptimHyper,
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

type Entries = Record<number, GPUBuffer>;

/** Which matmul kernel a Kernels object runs; see Kernels.create. */
export type MatmulKernel = 'tiled' | 'direct';
const DIRECT_TILE = 32; // matmul-direct.wgsl: 8×8 threads × 4×4 outputs

export class Kernels {
  readonly #device: GPUDevice;
  readonly #pipelines: Map<string, GPUComputePipeline>;
  readonly #dummy: GPUBuffer;
  readonly #owned: GPUBuffer[] = [];
  readonly #tile: number;

  private constructor(
    device: GPUDevice,
    pipelines: Map<string, GPUComputePipeline>,
    readonly matmulKernel: MatmulKernel,
    tile: number,
  ) {
    this.#tile = tile;
    this.#device = device;
    this.#pipelines = pipelines;
    this.#dummy = this.#own(device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }));
  }

  /**
   * `matmul`: 'tiled' (workgroup-memory tiles, for GPUs), 'direct' (no workgroup memory: about 3×
   * faster on lavapipe, see docs/vit.md) or 'auto' (the default: direct on CPU adapters);
   * `matmulTile` shapes the tiled kernel: [threads per side, outputs per thread per side],
   * product ≤ 64 (benchmarks compare them).
   */
  static async create(
    device: GPUDevice,
    options: { matmul?: MatmulKernel | 'auto'; matmulTile?: [number, number] } = {},
  ): Promise<Kernels> {
    const [wg, tb] = options.matmulTile ?? [8, 8];
    if (wg * tb > 64 || tb > 8 || wg * wg > 256) throw new RangeError(`vit matmul tile ${wg}×${tb} unsupported`);
    const matmul =
      !options.matmul || options.matmul === 'auto' ? (onCpuAdapter(device) && !options.matmulTile ? 'direct' : 'tiled') : options.matmul;
    const direct = matmul === 'direct';
    const source = (file: string) => readText(new URL(`./${file}`, import.meta.url));
    const load = async (file: string, prefix = '') =>
      device.createShaderModule({ code: prefix + (await source(file)), label: `vit ${file}` });
    const common = await source('matmul-common.wgsl');
    const [mm, ln, ew, em, lo, op, at] = await Promise.all([
      load(direct ? 'matmul-direct.wgsl' : 'matmul.wgsl', common),
      ...['layernorm.wgsl', 'elementwise.wgsl', 'embed.wgsl', 'loss.wgsl', 'optim.wgsl', 'attention.wgsl'].map((file) => load(file)),
    ]);
    const tile = (transA: number, transB: number): Record<string, number> =>
      direct ? { TRANS_A: transA, TRANS_B: transB } : { TRANS_A: transA, TRANS_B: transB, WG: wg, TB: tb };
    const specs: [string, GPUShaderModule, string, Record<string, number>?][] = [
      ['mm.nn', mm!, 'main', tile(0, 0)],
      ['mm.tn', mm!, 'main', tile(1, 0)],
      ['mm.nt', mm!, 'main', tile(0, 1)],
      ['ln.fwd', ln!, 'forward'],
      ['ln.bwd', ln!, 'backward'],
      ['ln.params', ln!, 'params_backward'],
      ['gelu.fwd', ew!, 'gelu_forward'],
      ['gelu.bwd', ew!, 'gelu_backward'],
      ['colsum', ew!, 'col_sum'],
      ['softmax.fwd', ew!, 'softmax_forward'],
      ['softmax.bwd', ew!, 'softmax_backward'],
      ['patchify', em!, 'patchify'],
      ['tokens.fwd', em!, 'tokens_forward'],
      ['tokens.bwd', em!, 'tokens_backward'],
      ['attn.fwd', at!, 'forward'],
      ['attn.rows', at!, 'backward_rows'],
      ['attn.cols', at!, 'backward_cols'],
      ['ce', lo!, 'main'],
      ['sumsq', op!, 'sum_squares'],
      ['finalize', op!, 'finalize'],
      ['adamw', op!, 'adamw'],
    ];
    const made = await Promise.all(
      specs.map(async ([name, module, entryPoint, constants]) => {
        const compute: GPUProgrammableStage = constants ? { module, entryPoint, constants } : { module, entryPoint };
        return [name, await device.createComputePipelineAsync({ layout: 'auto', compute, label: `vit ${name}` })] as const;
      }),
    );
    return new Kernels(device, new Map(made), matmul, direct ? DIRECT_TILE : wg * tb);
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
    const entries: Entries = { 0: s.a, 1: s.b, 2: s.c, 3: s.bias?.buffer ?? this.#dummy, 4: s.residual ?? this.#dummy };
    return this.#make(name, entries, u, [Math.ceil(s.N / this.#tile), Math.ceil(s.M / this.#tile), batch.count], 5);
  }

  layerNorm(s: LayerNormSpec, x: GPUBuffer, w: GPUBuffer, y: GPUBuffer, stats: GPUBuffer): Dispatch {
    return this.#make('ln.fwd', { 0: x, 1: w, 2: y, 3: stats }, this.#lnParams(s, false), [s.rows, 1, 1], 4);
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
    return this.#make('ln.bwd', { 0: x, 1: w, 5: dy, 6: dx, 7: stats }, this.#lnParams(s, accumulate), [s.rows, 1, 1], 4);
  }

  /** Gain and bias gradients written into `grads` at the spec's gOff / bOff. */
  layerNormParams(s: LayerNormSpec, dy: GPUBuffer, x: GPUBuffer, stats: GPUBuffer, grads: GPUBuffer): Dispatch {
    return this.#make('ln.params', { 0: x, 5: dy, 7: stats, 8: grads }, this.#lnParams(s, false), [Math.ceil(s.D / 64), 1, 1], 4);
  }

  /** Fused attention forward: probabilities kept in `probs` [B,H,T,T], output heads into o [B·T, D]. */
  attention(s: AttentionShape, qkv: GPUBuffer, probs: GPUBuffer, o: GPUBuffer): Dispatch {
    return this.#make('attn.fwd', { 0: qkv, 1: probs, 2: o }, this.#attnParams(s), this.#attnGroups(s), 6);
  }

  /** Attention backward: dS (scratch [B,H,T,T]) and dq, dk, dv into dqkv; two dispatches. */
  attentionBackward(s: AttentionShape, qkv: GPUBuffer, probs: GPUBuffer, dO: GPUBuffer, dS: GPUBuffer, dqkv: GPUBuffer): Dispatch[] {
    const u = this.#uniform(this.#attnParams(s));
    const e = { 0: qkv, 3: dO, 4: dS, 5: dqkv, 7: probs };
    return [this.#make('attn.rows', e, u, this.#attnGroups(s), 6), this.#make('attn.cols', e, u, this.#attnGroups(s), 6)];
  }

  gelu(u: GPUBuffer, a: GPUBuffer, n: number): Dispatch {
    const f = fold(n, 256);
    return this.#make('gelu.fwd', { 0: u, 1: a }, ElementwiseParams.pack({ n, stride: f.stride }), f.groups, 2);
  }

  /** d (dL/da) becomes dL/du in place. */
  geluBackward(u: GPUBuffer, d: GPUBuffer, n: number): Dispatch {
    const f = fold(n, 256);
    return this.#make('gelu.bwd', { 0: u, 1: d }, ElementwiseParams.pack({ n, stride: f.stride }), f.groups, 2);
  }

  /** out[off + c] = Σ_r x[r, c]. */
  colSum(x: GPUBuffer, rows: number, cols: number, out: GPUBuffer, off: number): Dispatch {
    return this.#make('colsum', { 0: x, 1: out }, ElementwiseParams.pack({ n: rows, cols, off }), [Math.ceil(cols / 64), 1, 1], 2);
  }

  softmax(s: GPUBuffer, rows: number, cols: number): Dispatch {
    const f = fold(rows, 64);
    return this.#make('softmax.fwd', { 1: s }, ElementwiseParams.pack({ n: rows, cols, stride: f.stride }), f.groups, 2);
  }

  /** d (dL/dP) becomes dL/dS in place. */
  softmaxBackward(p: GPUBuffer, d: GPUBuffer, rows: number, cols: number): Dispatch {
    const f = fold(rows, 64);
    return this.#make('softmax.bwd', { 0: p, 1: d }, ElementwiseParams.pack({ n: rows, cols, stride: f.stride }), f.groups, 2);
  }

  patchify(images: GPUBuffer, patches: GPUBuffer, B: number, C: number, S: number, P: number): Dispatch {
    const total = B * C * S * S;
    const f = fold(total, 256);
    const u = EmbedParams.pack({ B, C, S, P, grid: S / P, total, stride: f.stride });
    return this.#make('patchify', { 0: images, 2: patches }, u, f.groups, 4);
  }

  tokens(pe: GPUBuffer, w: GPUBuffer, x: GPUBuffer, B: number, T: number, D: number, clsOff: number, posOff: number): Dispatch {
    const total = B * T * D;
    const f = fold(total, 256);
    const u = EmbedParams.pack({ B, T, D, total, clsOff, posOff, stride: f.stride });
    return this.#make('tokens.fwd', { 0: pe, 1: w, 2: x }, u, f.groups, 4);
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
    return this.#make('tokens.bwd', { 0: dx, 2: dpe, 3: grads }, u, [Math.ceil((T * D) / 256), 1, 1], 4);
  }

  crossEntropy(logits: GPUBuffer, labels: GPUBuffer, dlogits: GPUBuffer, stats: GPUBuffer, B: number, K: number): Dispatch {
    return this.#make('ce', { 0: logits, 1: labels, 2: dlogits, 3: stats }, LossParams.pack({ B, K }), [1, 1, 1], 4);
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
      this.#make('sumsq', { 0: o.grads, 1: o.partial }, uniform, [256, 1, 1], 3),
      this.#make('finalize', { 1: o.partial, 2: o.state }, uniform, [1, 1, 1], 3),
      this.#make('adamw', { 0: o.grads, 4: o.w, 5: o.m, 6: o.v, 7: o.state }, uniform, f.groups, 3),
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
      eps: 1e-5,
    });
  }

  #own(buffer: GPUBuffer): GPUBuffer {
    this.#owned.push(buffer);
    return buffer;
  }

  #uniform(data: ArrayBuffer): GPUBuffer {
    return this.#own(uniformBuffer(this.#device, data));
  }

  #make(
    name: string,
    entries: Entries,
    params: ArrayBuffer | GPUBuffer,
    groups: [number, number, number],
    uniformBinding: number,
  ): Dispatch {
    const pipeline = this.#pipelines.get(name);
    if (!pipeline) throw new Error(`vit: no pipeline ${name}`);
    const uniform = params instanceof ArrayBuffer ? this.#uniform(params) : params;
    const all = { ...entries, [uniformBinding]: uniform };
    const bindGroup = this.#device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: Object.entries(all).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } })),
      label: `vit ${name}`,
    });
    for (const g of groups) if (g > MAX_GROUPS) throw new RangeError(`vit ${name}: ${g} workgroups in one dimension`);
    return { pipeline, bindGroup, groups, label: name };
  }
}
