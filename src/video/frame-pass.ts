// A decoded VideoFrame → f32 NHWC slots of a caller's GPU buffer, in one compute dispatch per frame
// (frame-pass.wgsl), with no copy of the pixels through the CPU. The frame reaches the shader by the
// first route this device accepts, tried in this order and remembered:
//   'external'  importExternalTexture (zero copy where the frame lives in GPU memory);
//   'copy'      copyExternalImageToTexture of the frame into a layer of an rgba8unorm texture;
//   'bitmap'    createImageBitmap(frame), then copyExternalImageToTexture of the bitmap.
// Headless Chromium on SwiftShader refuses VideoFrame sources in both WebGPU entry points
// ("Failed to import texture from video"), so there the route is 'bitmap'.
//
// Submits: on the texture routes a frame is copied into a layer of its own and closed at once, and
// a clip's dispatches go in one submit (one per `layers` frames when its frames are large: the
// layers hold at most MAX_LAYER_BYTES). An external texture lives only while its frame is open,
// so on that route each frame is submitted and closed at once: holding a clip's frames open until
// one submit could stall a hardware decoder, whose pool of output frames is small.
import { DecodeError } from '../decode/index.ts';
import { UniformStruct } from '../gpu/internal.ts';
import { readText } from '../runtime/index.ts';
import { type ClipFrameTarget, MAX_DOWNSCALE, sourceArea } from './frame-target.ts';

export type { ClipFrameTarget } from './frame-target.ts';

/** `struct Params` of frame-pass.wgsl. */
export const FramePassParams = new UniformStruct('Params', [
  ['out_width', 'u32'],
  ['out_height', 'u32'],
  ['channels', 'u32'],
  ['flip', 'u32'],
  ['in_width', 'u32'],
  ['in_height', 'u32'],
  ['slot_begin', 'u32'],
  ['slot_count', 'u32'],
  ['row_pitch', 'u32'],
  ['slot_floats', 'u32'],
  ['layer', 'u32'],
  ['pad1', 'u32'],
  ['area', 'vec4f'],
  ['mean', 'vec4f'],
  ['inv_std', 'vec4f'],
] as const);

export type FrameRoute = 'external' | 'copy' | 'bitmap';

const WORKGROUP = 256;
const MAX_GROUPS = 65535;
/** Each frame's uniforms sit at its layer × this (the uniform offset alignment every device takes). */
const PARAMS_STRIDE = 256;
/** Layers of the texture routes' array texture: at most this many, holding at most MAX_LAYER_BYTES. */
const MAX_LAYERS = 64;
const MAX_LAYER_BYTES = 16 << 20;

/** Splits frame-pass.wgsl into its `// @section NAME` parts. */
function sections(code: string): Record<string, string> {
  const out: Record<string, string> = {};
  let name = 'head';
  for (const line of code.split('\n')) {
    const m = /^\/\/ @section (\w+)\s*$/.exec(line);
    if (m?.[1]) name = m[1];
    else out[name] = `${out[name] ?? ''}${line}\n`;
  }
  return out;
}

/** Array layers of the texture for frames of this size. */
function layersFor(width: number, height: number): number {
  return Math.max(1, Math.min(MAX_LAYERS, Math.floor(MAX_LAYER_BYTES / (width * height * 4))));
}

/** The compiled pass for one device; the route found to work is kept for every later frame. */
export class FramePass {
  readonly device: GPUDevice;
  /** The pipelines reading the frame as a layer of an rgba8unorm texture and as a texture_external. */
  readonly texturePipeline: GPUComputePipeline;
  readonly externalPipeline: GPUComputePipeline | undefined;
  #route: FrameRoute;
  /** What finished clips gave back, for the next clips: buffers and textures are made once, not per clip. */
  readonly #spare: ClipResources[] = [];
  #closed = false;

  private constructor(device: GPUDevice, texture: GPUComputePipeline, external: GPUComputePipeline | undefined, route: FrameRoute) {
    this.device = device;
    this.texturePipeline = texture;
    this.externalPipeline = external;
    this.#route = route;
  }

  static async create(device: GPUDevice, options: { route?: FrameRoute } = {}): Promise<FramePass> {
    const code = sections(await readText(new URL('./frame-pass.wgsl', import.meta.url)));
    const compile = async (kind: 'external' | 'texture') => {
      const module = device.createShaderModule({ code: (code[kind] ?? '') + (code.body ?? ''), label: `tandem frame pass ${kind}` });
      // Explicit, for the uniforms' dynamic offset: each frame's dispatch reads its own block.
      const frame: GPUBindGroupLayoutEntry =
        kind === 'external'
          ? { binding: 0, visibility: GPUShaderStage.COMPUTE, externalTexture: {} }
          : { binding: 0, visibility: GPUShaderStage.COMPUTE, texture: { sampleType: 'float', viewDimension: '2d-array' } };
      const layout = device.createBindGroupLayout({
        label: `tandem frame pass ${kind}`,
        entries: [
          frame,
          { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
          { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
          { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true } },
        ],
      });
      return device.createComputePipelineAsync({
        layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: 'main' },
        label: `tandem frame pass ${kind}`,
      });
    };
    const texture = await compile('texture');
    // A device without texture_external support still has the texture routes.
    const external = await compile('external').catch(() => undefined);
    return new FramePass(device, texture, external, external ? (options.route ?? 'external') : 'copy');
  }

  /** The route frames take now: where one is refused, the next is tried and kept. */
  get route(): FrameRoute {
    return this.#route;
  }

  /** Refuses a route for the rest of this pass's life (after the device refused a frame). */
  demote(): void {
    this.#route = this.#route === 'external' ? 'copy' : 'bitmap';
  }

  /** A clip's buffers: a spare set whose slot list holds `slotBytes`, else the largest spare grown, else new. */
  takeResources(slotBytes: number): ClipResources {
    const fits = this.#spare.findIndex((r) => r.slots.size >= slotBytes);
    const taken = fits >= 0 ? this.#spare.splice(fits, 1)[0] : this.#spare.pop();
    const params =
      taken?.params ??
      this.device.createBuffer({
        size: PARAMS_STRIDE * MAX_LAYERS,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        label: 'tandem frame pass params',
      });
    let slots = taken?.slots;
    if (!slots || slots.size < slotBytes) {
      slots?.destroy();
      slots = this.device.createBuffer({
        size: Math.max(256, slotBytes),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
        label: 'tandem frame pass slots',
      });
    }
    return { params, slots, texture: taken?.texture };
  }

  /**
   * Takes a finished clip's buffers back. Reusing them is safe: the next clip's writes into them are
   * queue operations, ordered after the work this clip submitted.
   */
  giveBack(r: ClipResources): void {
    if (this.#closed) destroyResources(r);
    else this.#spare.push(r);
  }

  /** Destroys the spare buffers and textures; clips still running destroy theirs when they finish. */
  close(): void {
    this.#closed = true;
    for (const r of this.#spare.splice(0)) destroyResources(r);
  }
}

/** One clip's GPU objects: its uniforms (a block per layer), its slot list and the array texture frames are copied into. */
interface ClipResources {
  params: GPUBuffer;
  slots: GPUBuffer;
  texture: GPUTexture | undefined;
}

function destroyResources(r: ClipResources): void {
  r.params.destroy();
  r.slots.destroy();
  r.texture?.destroy();
}

/**
 * One clip's writes: its uniforms and the slot list (the target's slot indices in the order frames
 * serve them) live in two small buffers taken from the FramePass's spares (made only when none
 * fits) and given back by close(); each frame writes its range of the list. The texture routes
 * copy each frame into the next layer of one array texture and record its dispatch; the clip's
 * dispatches are submitted together when the layers run out, before an external frame's submit,
 * and at close(). One bind group serves every frame of the clip of one size.
 */
export class ClipPass {
  readonly #pass: FramePass;
  readonly #target: ClipFrameTarget;
  readonly #resources: ClipResources;
  readonly #uniform: ArrayBuffer;
  readonly #view: DataView;
  #frameSize = [0, 0];
  #groups: [number, number] = [1, 1];
  /** The texture routes' bind group, for the texture it binds. */
  #textureGroup: { texture: GPUTexture; group: GPUBindGroup } | undefined;
  /** The texture routes' dispatches not yet submitted, and the next free layer. */
  #pending: GPUCommandEncoder | undefined;
  #layer = 0;
  #closed = false;

  constructor(pass: FramePass, target: ClipFrameTarget, slotOrder: Uint32Array<ArrayBuffer>, norm: { mean: number[]; invStd: number[] }) {
    this.#pass = pass;
    this.#target = target;
    const device = pass.device;
    const pixels = target.width * target.height;
    const groups = Math.max(1, Math.ceil(pixels / WORKGROUP));
    const rows = Math.ceil(groups / MAX_GROUPS);
    this.#groups = [Math.ceil(groups / rows), rows];
    this.#uniform = FramePassParams.pack({
      out_width: target.width,
      out_height: target.height,
      channels: target.channels,
      flip: target.flip ? 1 : 0,
      row_pitch: this.#groups[0] * WORKGROUP,
      slot_floats: pixels * target.channels,
      mean: norm.mean,
      inv_std: norm.invStd,
    });
    this.#view = new DataView(this.#uniform);
    this.#resources = pass.takeResources(slotOrder.byteLength);
    device.queue.writeBuffer(this.#resources.slots, 0, slotOrder);
  }

  /**
   * Writes `frame` into slots slotOrder[begin .. begin + count) and closes it: at once on the
   * texture routes, once its work is submitted on the external one (also on a throw). Rejects with
   * a DecodeError 'bad-request' when the crop leaves the frame.
   */
  async write(frame: VideoFrame, begin: number, count: number): Promise<void> {
    if (this.#closed) {
      frame.close();
      throw new DecodeError('closed', 'the clip pass was closed before this frame');
    }
    let bitmap: ImageBitmap | undefined;
    let open: VideoFrame | undefined = frame;
    try {
      const width = frame.displayWidth;
      const height = frame.displayHeight;
      if (width !== this.#frameSize[0] || height !== this.#frameSize[1]) this.#plan(width, height);
      const device = this.#pass.device;
      let external: GPUExternalTexture | undefined;
      if (this.#pass.route === 'external' && this.#pass.externalPipeline) {
        try {
          external = device.importExternalTexture({ source: frame });
        } catch {
          this.#pass.demote();
        }
      }
      if (external) {
        // Its uniforms take block 0: what is pending reads its own blocks, so it goes first.
        this.flush();
        this.#encode(0, begin, count, this.#pass.externalPipeline as GPUComputePipeline, this.#bindGroup(external, 'external'));
        this.flush();
        return;
      }
      const texture = this.#textureFor(width, height);
      if (this.#layer === texture.depthOrArrayLayers) this.flush();
      const layer = this.#layer++;
      const destination = { texture, origin: [0, 0, layer] };
      if (this.#pass.route === 'copy') {
        try {
          device.queue.copyExternalImageToTexture({ source: frame }, destination, [width, height]);
        } catch {
          this.#pass.demote();
        }
      }
      if (this.#pass.route === 'bitmap') {
        bitmap = await createImageBitmap(frame);
        frame.close();
        open = undefined;
        device.queue.copyExternalImageToTexture({ source: bitmap }, destination, [width, height]);
      }
      // The copy took the frame's pixels: it is closed now, not at the submit.
      open?.close();
      open = undefined;
      this.#encode(layer, begin, count, this.#pass.texturePipeline, this.#textureBindGroup());
    } finally {
      open?.close();
      bitmap?.close();
    }
  }

  /** Writes the frame's uniforms into block `layer` and records its dispatch. */
  #encode(layer: number, begin: number, count: number, pipeline: GPUComputePipeline, group: GPUBindGroup): void {
    const device = this.#pass.device;
    this.#view.setUint32(FramePassParams.offsetOf('slot_begin'), begin, true);
    this.#view.setUint32(FramePassParams.offsetOf('slot_count'), count, true);
    this.#view.setUint32(FramePassParams.offsetOf('layer'), layer, true);
    device.queue.writeBuffer(this.#resources.params, layer * PARAMS_STRIDE, this.#uniform);
    this.#pending ??= device.createCommandEncoder({ label: 'tandem frame pass' });
    const pass = this.#pending.beginComputePass({ label: 'tandem frame pass' });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group, [layer * PARAMS_STRIDE]);
    pass.dispatchWorkgroups(this.#groups[0], this.#groups[1]);
    pass.end();
  }

  /** Submits the dispatches recorded so far; the layers are free again for later copies. */
  flush(): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#layer = 0;
    if (!pending) return;
    this.#pass.device.queue.submit([pending.finish()]);
  }

  #plan(width: number, height: number): void {
    const area = sourceArea(width, height, this.#target);
    if (!area) throw new DecodeError('bad-request', `crop ${JSON.stringify(this.#target.crop)} leaves the ${width}×${height} frame`);
    if (area.w / this.#target.width > MAX_DOWNSCALE || area.h / this.#target.height > MAX_DOWNSCALE)
      throw new DecodeError(
        'bad-request',
        `a downscale over ${MAX_DOWNSCALE}× (${area.w}×${area.h} to ${this.#target.width}×${this.#target.height})`,
      );
    this.#view.setUint32(FramePassParams.offsetOf('in_width'), width, true);
    this.#view.setUint32(FramePassParams.offsetOf('in_height'), height, true);
    const at = FramePassParams.offsetOf('area');
    [area.x, area.y, area.w, area.h].forEach((v, i) => {
      this.#view.setFloat32(at + 4 * i, v, true);
    });
    this.#frameSize = [width, height];
  }

  #bindGroup(source: GPUBindingResource, kind: 'external' | 'texture'): GPUBindGroup {
    const pipeline = kind === 'external' ? (this.#pass.externalPipeline as GPUComputePipeline) : this.#pass.texturePipeline;
    return this.#pass.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: source },
        { binding: 1, resource: { buffer: this.#target.buffer } },
        { binding: 2, resource: { buffer: this.#resources.slots } },
        { binding: 3, resource: { buffer: this.#resources.params, size: FramePassParams.bytes } },
      ],
    });
  }

  /** The texture routes' bind group: made once per texture (a frame size), not per frame. */
  #textureBindGroup(): GPUBindGroup {
    const texture = this.#resources.texture as GPUTexture;
    if (this.#textureGroup?.texture !== texture)
      this.#textureGroup = { texture, group: this.#bindGroup(texture.createView({ dimension: '2d-array' }), 'texture') };
    return this.#textureGroup.group;
  }

  #textureFor(width: number, height: number): GPUTexture {
    const t = this.#resources.texture;
    if (t && t.width === width && t.height === height) return t;
    // The recorded dispatches read the old texture: they go before it is destroyed.
    this.flush();
    t?.destroy();
    this.#resources.texture = this.#pass.device.createTexture({
      size: [width, height, layersFor(width, height)],
      format: 'rgba8unorm',
      usage: GPUTextureUsage.COPY_DST | GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.RENDER_ATTACHMENT,
      label: 'tandem frame pass source',
    });
    return this.#resources.texture;
  }

  /** Submits what is recorded and gives the clip's buffers and texture back to the pass for the next clips. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.#textureGroup = undefined;
    this.#pass.giveBack(this.#resources);
  }
}
