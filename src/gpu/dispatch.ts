// Small helpers shared by the GPU kernels.

export const WORKGROUP_SIZE = 256;
const MAX_GROUPS_PER_DIM = 65535;

/** Workgroup counts (x, y) covering `invocations` 1-D work items, and the row pitch in items. */
export function dispatchGrid(invocations: number): { groups: [number, number]; rowPitch: number } {
  const groups = Math.max(1, Math.ceil(invocations / WORKGROUP_SIZE));
  const rows = Math.ceil(groups / MAX_GROUPS_PER_DIM);
  const x = Math.ceil(groups / rows);
  return { groups: [x, rows], rowPitch: x * WORKGROUP_SIZE };
}

export function align4(bytes: number): number {
  return Math.ceil(bytes / 4) * 4;
}

/** Mean and 1/std as the 8 floats the kernels' uniform blocks expect. */
export function meanAndInverseStd(mean: readonly number[], std: readonly number[]): Float32Array {
  const out = new Float32Array(8);
  for (let c = 0; c < 4; c++) {
    out[c] = mean[c] ?? 0;
    out[4 + c] = 1 / (std[c] ?? 1);
  }
  return out;
}

/** Bind groups made once per (input, output) buffer pair, for kernels fed from a buffer ring. */
export class BindGroupPairs {
  #groups = new WeakMap<GPUBuffer, WeakMap<GPUBuffer, GPUBindGroup>>();

  get(input: GPUBuffer, output: GPUBuffer, make: (input: GPUBuffer, output: GPUBuffer) => GPUBindGroup): GPUBindGroup {
    let byOutput = this.#groups.get(input);
    if (!byOutput) this.#groups.set(input, (byOutput = new WeakMap()));
    let group = byOutput.get(output);
    if (!group) byOutput.set(output, (group = make(input, output)));
    return group;
  }
}

/** Records one compute pass of `pipeline` over a 2-D grid of workgroups. */
export function encodePass(
  encoder: GPUCommandEncoder,
  label: string,
  pipeline: GPUComputePipeline,
  bindGroup: GPUBindGroup,
  groups: readonly [number, number],
): void {
  const pass = encoder.beginComputePass({ label });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(groups[0], groups[1]);
  pass.end();
}
