// timm's `vit_*` weights (the names and layouts of timm's VisionTransformer state dict, as its
// safetensors files hold them) to and from Tandem's flat parameter layout. timm stores linear and
// convolution weights [out, in...]; Tandem's matmuls take [in, out], so 2-D views are transposed.
// The class token and positions drop timm's leading singleton axes.
import { dims, initParams, layerNormEps, paramLayout, type ViTConfig } from './config.ts';
import { readSafetensors, WeightsError, writeSafetensors, type NamedTensor, type Safetensors } from './safetensors.ts';

export interface TimmLoadOptions {
  /**
   * Attention heads, which the weights cannot tell. Default: the file's `heads` metadata (Tandem
   * writes it), else width / 64, the head width of timm's ViT-Ti, -S, -B and -L.
   */
  heads?: number;
  /** Classes to train. A count other than the file's, or a file without a head, gets a new seeded head. */
  classes?: number;
  /** Seed of a new head. */
  seed?: number;
}

export interface TimmWeights {
  config: ViTConfig;
  /** Tandem's flat layout (ViTTrainer's `params`). */
  params: Float32Array<ArrayBuffer>;
  /** True when the head was newly drawn for `classes` instead of read from the file. */
  headReplaced: boolean;
}

interface Mapping {
  tandem: string;
  timm: string;
  /** timm's shape of the tensor. */
  shape: number[];
  /** 2-D [out, rest] in timm, [rest, out] in Tandem. */
  transpose: boolean;
}

const HEAD = ['head.weight', 'head.bias'];

function mappings(c: ViTConfig, withHead: boolean): Mapping[] {
  const d = dims(c);
  const D = c.width;
  const m: Mapping[] = [];
  const add = (tandem: string, timm: string, shape: number[], transpose = false) => m.push({ tandem, timm, shape, transpose });
  add('patch.w', 'patch_embed.proj.weight', [D, c.channels, c.patchSize, c.patchSize], true);
  add('patch.b', 'patch_embed.proj.bias', [D]);
  add('cls', 'cls_token', [1, 1, D]);
  add('pos', 'pos_embed', [1, d.tokens, D]);
  for (let l = 0; l < c.depth; l++) {
    const b = `blocks.${l}`;
    add(`b${l}.ln1.g`, `${b}.norm1.weight`, [D]);
    add(`b${l}.ln1.b`, `${b}.norm1.bias`, [D]);
    add(`b${l}.qkv.w`, `${b}.attn.qkv.weight`, [3 * D, D], true);
    add(`b${l}.qkv.b`, `${b}.attn.qkv.bias`, [3 * D]);
    add(`b${l}.proj.w`, `${b}.attn.proj.weight`, [D, D], true);
    add(`b${l}.proj.b`, `${b}.attn.proj.bias`, [D]);
    add(`b${l}.ln2.g`, `${b}.norm2.weight`, [D]);
    add(`b${l}.ln2.b`, `${b}.norm2.bias`, [D]);
    add(`b${l}.fc1.w`, `${b}.mlp.fc1.weight`, [d.hidden, D], true);
    add(`b${l}.fc1.b`, `${b}.mlp.fc1.bias`, [d.hidden]);
    add(`b${l}.fc2.w`, `${b}.mlp.fc2.weight`, [D, d.hidden], true);
    add(`b${l}.fc2.b`, `${b}.mlp.fc2.bias`, [D]);
  }
  add('lnf.g', 'norm.weight', [D]);
  add('lnf.b', 'norm.bias', [D]);
  if (withHead) {
    add('head.w', HEAD[0]!, [c.classes, D], true);
    add('head.b', HEAD[1]!, [c.classes]);
  }
  return m;
}

function need(file: Safetensors, name: string, rank: number): NamedTensor {
  const t = file.tensors.get(name);
  if (!t) throw new WeightsError('missing-tensor', `timm weights: no tensor ${name}`);
  if (t.shape.length !== rank) throw new WeightsError('shape', `timm weights: ${name} has shape [${t.shape}], expected ${rank} dimensions`);
  return t;
}

/** The model a timm ViT state dict describes (its head's class count, if it has one, in `classes`). */
function configOf(file: Safetensors, o: TimmLoadOptions): { config: ViTConfig; fileClasses: number | undefined } {
  const [width, channels, patchSize] = need(file, 'patch_embed.proj.weight', 4).shape as [number, number, number, number];
  const tokens = need(file, 'pos_embed', 3).shape[1]!;
  const grid = Math.round(Math.sqrt(tokens - 1));
  if (grid * grid !== tokens - 1)
    throw new WeightsError('shape', `timm weights: pos_embed holds ${tokens} positions, not a class token and a square grid of patches`);
  let depth = 0;
  while (file.tensors.has(`blocks.${depth}.norm1.weight`)) depth++;
  if (depth === 0) throw new WeightsError('missing-tensor', 'timm weights: no tensor blocks.0.norm1.weight');
  const hidden = need(file, 'blocks.0.mlp.fc1.weight', 2).shape[0]!;
  const head = file.tensors.get(HEAD[0]!);
  const fileClasses = head?.shape.length === 2 ? head.shape[0] : undefined;
  const classes = o.classes ?? fileClasses;
  if (classes === undefined)
    throw new WeightsError('missing-tensor', 'timm weights: no tensor head.weight; pass `classes` to draw a new head');
  const meta = file.metadata;
  const heads = o.heads ?? (meta.heads ? Number(meta.heads) : width / 64);
  if (!Number.isInteger(heads) || heads < 1 || width % heads !== 0)
    throw new WeightsError('shape', `timm weights: width ${width} does not split into ${heads} heads; pass \`heads\``);
  const config: ViTConfig = {
    imageSize: grid * patchSize,
    patchSize,
    channels,
    width,
    depth,
    heads,
    mlpRatio: hidden / width,
    classes,
    gelu: meta.gelu === 'tanh' ? 'tanh' : 'erf',
    layerNormEps: meta.layer_norm_eps ? Number(meta.layer_norm_eps) : 1e-6,
  };
  return { config, fileClasses };
}

/**
 * Reads timm-layout ViT weights (safetensors) into Tandem's layout. Every tensor of the model must
 * be there with timm's shape, and nothing else may be (a variant Tandem does not build, such as
 * layer scale or global average pooling, is refused by name rather than half loaded).
 */
export function loadTimmWeights(bytes: Uint8Array, options: TimmLoadOptions = {}): TimmWeights {
  const file = readSafetensors(bytes);
  const { config, fileClasses } = configOf(file, options);
  const headReplaced = fileClasses !== config.classes;
  const layout = paramLayout(config);
  // Drawn first, so a replaced head is the same seeded head a new model would get.
  const params = initParams(config, options.seed ?? 1);
  const used = new Set<string>(headReplaced ? HEAD : []);
  for (const m of mappings(config, !headReplaced)) {
    const t = file.tensors.get(m.timm);
    if (!t) throw new WeightsError('missing-tensor', `timm weights: no tensor ${m.timm}`);
    if (t.shape.join() !== m.shape.join())
      throw new WeightsError('shape', `timm weights: ${m.timm} has shape [${t.shape}], this model needs [${m.shape}]`);
    used.add(m.timm);
    const target = layout.byName.get(m.tandem)!;
    const dst = params.subarray(target.offset, target.offset + target.size);
    if (m.transpose) transpose(t.data, m.shape[0]!, t.data.length / m.shape[0]!, dst);
    else dst.set(t.data);
  }
  const extra = [...file.tensors.keys()].filter((name) => !used.has(name));
  if (extra.length)
    throw new WeightsError(
      'unexpected-tensor',
      `timm weights: ${extra.length} tensor(s) this ViT has no place for: ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ', …' : ''}`,
    );
  return { config, params, headReplaced };
}

/** Writes Tandem's parameters as timm-layout safetensors (with the heads, GELU and ε as metadata). */
export function saveTimmWeights(config: ViTConfig, params: Float32Array): Uint8Array<ArrayBuffer> {
  const layout = paramLayout(config);
  if (params.length < layout.size)
    throw new WeightsError('shape', `timm weights: ${params.length} parameters, this model has ${layout.size}`);
  const tensors = new Map<string, NamedTensor>();
  for (const m of mappings(config, true)) {
    const source = layout.byName.get(m.tandem)!;
    const src = params.subarray(source.offset, source.offset + source.size);
    const data = new Float32Array(source.size);
    if (m.transpose) transpose(src, source.size / m.shape[0]!, m.shape[0]!, data);
    else data.set(src);
    tensors.set(m.timm, { shape: m.shape, data });
  }
  return writeSafetensors(tensors, {
    format: 'pt',
    heads: String(config.heads),
    gelu: config.gelu ?? 'tanh',
    layer_norm_eps: String(layerNormEps(config)),
  });
}

/** dst[c·rows + r] = src[r·cols + c]. */
function transpose(src: ArrayLike<number>, rows: number, cols: number, dst: Float32Array): void {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c]!;
}
