// Standalone repro of an abort at exit in Deno 2.9.6 (no Tandem code): one WebGPU device, one
// compute dispatch, destroy, under `deno test`. See README.md next to this file.
Deno.test('one compute dispatch', async () => {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const device = await adapter.requestDevice();
  const module = device.createShaderModule({
    code: '@group(0) @binding(0) var<storage, read_write> v: array<u32>; @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3u) { v[i.x] = v[i.x] * 2u + 1u; }',
  });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const buf = device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 4096, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(16);
  pass.end();
  enc.copyBufferToBuffer(buf, 0, read, 0, 4096);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  if (new Uint32Array(read.getMappedRange())[0] !== 1) throw new Error('bad result');
  read.unmap();
  device.destroy();
});
