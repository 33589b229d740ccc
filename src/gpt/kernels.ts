// The GPT's own kernels, beside the ViT's (matmul, layer norm, GELU, column sums, AdamW): the
// embedding, attention within documents, and the loss over labelled positions. Built as the ViT
// builds its own: each dispatch once, with its bind group and uniform, so a step allocates nothing.
import { invariant } from '../errors/index.ts';
import { uniformBuffer } from '../gpu/internal.ts';
import { readText } from '../runtime/index.ts';
import type { AttentionShape, Dispatch } from '../vit/internal.ts';
import { GptAttentionParams, GptEmbedParams, GptLossParams } from './params.ts';

interface Kernel {
  pipeline: GPUComputePipeline;
  bindings: ReadonlyMap<string, number>;
  uniformBinding: number;
}

const MAX_GROUPS = 65535;

/** Folds `n` threads in workgroups of `size` into a 2-D grid; the row stride in threads. */
function fold(n: number, size: number): { groups: [number, number, number]; stride: number } {
  const total = Math.max(1, Math.ceil(n / size));
  const rows = Math.ceil(total / MAX_GROUPS);
  const x = Math.ceil(total / rows);
  return { groups: [x, rows, 1], stride: x * size };
}

/** Where a WGSL source binds each named storage buffer, and its uniform block. */
function bindingsOf(code: string): { bindings: Map<string, number>; uniformBinding: number } {
  const bindings = new Map<string, number>();
  let uniformBinding = -1;
  for (const m of code.matchAll(/@group\(0\)\s*@binding\((\d+)\)\s*var(?:<([^>]+)>)?\s+(\w+)/g)) {
    if (m[2] === 'uniform') uniformBinding = Number(m[1]);
    else if (m[3]) bindings.set(m[3], Number(m[1]));
  }
  invariant(uniformBinding >= 0, 'gpt: a kernel source declares no uniform block');
  return { bindings, uniformBinding };
}

const SPECS = [
  ['embed.fwd', 'embed.wgsl', 'forward'],
  ['embed.bwd', 'embed.wgsl', 'backward'],
  ['attn.fwd', 'attention.wgsl', 'forward'],
  ['attn.rows', 'attention.wgsl', 'backward_rows'],
  ['attn.cols', 'attention.wgsl', 'backward_cols'],
  ['ce', 'loss.wgsl', 'main'],
] as const;

/** Where the embedding reads its two tables in the flat parameters. */
export interface EmbedTables {
  V: number;
  context: number;
  D: number;
  wteOff: number;
  wpeOff: number;
}

export class GptKernels {
  readonly #device: GPUDevice;
  readonly #kernels: Map<string, Kernel>;
  readonly #owned: GPUBuffer[] = [];

  private constructor(device: GPUDevice, kernels: Map<string, Kernel>) {
    this.#device = device;
    this.#kernels = kernels;
  }

  static async create(device: GPUDevice): Promise<GptKernels> {
    const files = [...new Set(SPECS.map((s) => s[1]))];
    const modules = new Map(
      await Promise.all(
        files.map(async (file) => {
          const code = await readText(new URL(`./${file}`, import.meta.url));
          return [file, { module: device.createShaderModule({ code, label: `gpt ${file}` }), ...bindingsOf(code) }] as const;
        }),
      ),
    );
    const made = await Promise.all(
      SPECS.map(async ([name, file, entryPoint]): Promise<[string, Kernel]> => {
        const made = modules.get(file);
        invariant(made, `gpt: no module ${file}`);
        const { module, bindings, uniformBinding } = made;
        const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint }, label: `gpt ${name}` });
        return [name, { pipeline, bindings, uniformBinding }];
      }),
    );
    return new GptKernels(device, new Map(made));
  }

  /** Frees the uniform buffers this object created. */
  destroy(): void {
    for (const b of this.#owned) b.destroy();
    this.#owned.length = 0;
  }

  /** x [rows, D] = wte[inputs] + wpe[positions]. */
  embed(t: EmbedTables, rows: number, inputs: GPUBuffer, positions: GPUBuffer, params: GPUBuffer, x: GPUBuffer): Dispatch {
    const total = rows * t.D;
    const f = fold(total, 256);
    const u = GptEmbedParams.pack({ rows, ...t, stride: f.stride, total });
    return this.#make('embed.fwd', { inputs, positions, w: params, x }, u, f.groups);
  }

  /** Adds the embedding's gradient to wte's (after the head's) and writes wpe's. */
  embedBackward(t: EmbedTables, rows: number, inputs: GPUBuffer, positions: GPUBuffer, dx: GPUBuffer, grads: GPUBuffer): Dispatch {
    const total = (t.V + t.context) * t.D;
    const f = fold(total, 256);
    const u = GptEmbedParams.pack({ rows, ...t, stride: f.stride, total });
    return this.#make('embed.bwd', { inputs, positions, dx, grads }, u, f.groups);
  }

  attention(s: AttentionShape, qkv: GPUBuffer, docIds: GPUBuffer, probs: GPUBuffer, o: GPUBuffer): Dispatch {
    return this.#make('attn.fwd', { qkv, docIds, probs, o }, this.#attnParams(s), this.#attnGroups(s));
  }

  attentionBackward(s: AttentionShape, qkv: GPUBuffer, probs: GPUBuffer, dO: GPUBuffer, dS: GPUBuffer, dqkv: GPUBuffer): Dispatch[] {
    const u = this.#uniform(this.#attnParams(s));
    const e = { qkv, dO, dS, dqkv, P: probs };
    return [this.#make('attn.rows', e, u, this.#attnGroups(s)), this.#make('attn.cols', e, u, this.#attnGroups(s))];
  }

  crossEntropy(logits: GPUBuffer, labels: GPUBuffer, dlogits: GPUBuffer, stats: GPUBuffer, rows: number, V: number): Dispatch {
    return this.#make('ce', { logits, labels, dlogits, stats }, GptLossParams.pack({ rows, V }), [1, 1, 1]);
  }

  #attnParams(s: AttentionShape): ArrayBuffer {
    return GptAttentionParams.pack({ B: s.B, H: s.H, T: s.T, hd: s.hd, D: s.H * s.hd, scale: 1 / Math.sqrt(s.hd) });
  }

  #attnGroups(s: AttentionShape): [number, number, number] {
    return [Math.ceil((s.B * s.H * s.T) / 64), 1, 1];
  }

  #uniform(data: ArrayBuffer): GPUBuffer {
    const buffer = uniformBuffer(this.#device, data);
    this.#owned.push(buffer);
    return buffer;
  }

  #make(name: string, entries: Record<string, GPUBuffer>, params: ArrayBuffer | GPUBuffer, groups: [number, number, number]): Dispatch {
    const kernel = this.#kernels.get(name);
    invariant(kernel, `gpt: no pipeline ${name}`);
    const uniform = params instanceof ArrayBuffer ? this.#uniform(params) : params;
    const bound: GPUBindGroupEntry[] = [{ binding: kernel.uniformBinding, resource: { buffer: uniform } }];
    for (const [variable, buffer] of Object.entries(entries)) {
      const binding = kernel.bindings.get(variable);
      invariant(binding !== undefined, `gpt ${name}: its WGSL declares no buffer named ${variable}`);
      bound.push({ binding, resource: { buffer } });
    }
    for (const g of groups) if (g > MAX_GROUPS) throw new RangeError(`gpt ${name}: ${g} workgroups in one dimension`);
    const bindGroup = this.#device.createBindGroup({ layout: kernel.pipeline.getBindGroupLayout(0), entries: bound, label: `gpt ${name}` });
    return { pipeline: kernel.pipeline, bindGroup, groups, label: name };
  }
}
