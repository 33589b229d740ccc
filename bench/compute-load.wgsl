// A synthetic compute load for bench/upload.ts: reads every word of the batch and spins on it.
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
@group(0) @binding(2) var<uniform> iterations: u32;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.y * groups.x * 256u + gid.x;
  if (i >= arrayLength(&input)) { return; }
  var v = input[i];
  for (var k = 0u; k < iterations; k++) { v = v * 1664525u + 1013904223u; }
  sink[i] = v;
}
