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

/** Mean and 1/std per channel (4, unused ones 0 and 1) as the f32 values the kernels get. */
export function meanAndInverseStd(mean: readonly number[], std: readonly number[]): { mean: number[]; invStd: number[] } {
  const channels = [0, 1, 2, 3];
  return { mean: channels.map((c) => Math.fround(mean[c] ?? 0)), invStd: channels.map((c) => Math.fround(1 / (std[c] ?? 1))) };
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
