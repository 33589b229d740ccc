// u8 NHWC batch (bytes packed four to a u32) -> f32 NCHW (or NHWC, for frameworks that take
// channels last), normalised per channel: out = (byte / 255 - mean[c]) / std[c]. One invocation
// per output pixel, all channels.

// 1: write channels last (NHWC, TensorFlow.js's layout); 0: channels first (NCHW).
override channels_last: u32 = 0u;

struct Params {
  pixels_per_image: u32,   // height * width
  images: u32,
  channels: u32,
  row_pitch: u32,          // invocations per dispatch row (2-D dispatch for large batches)
  mean: vec4f,
  inv_std: vec4f,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

fn byte_at(i: u32) -> f32 {
  return f32((src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let pixel = gid.y * params.row_pitch + gid.x;
  let hw = params.pixels_per_image;
  if (pixel >= hw * params.images) { return; }
  let image = pixel / hw;
  let within = pixel - image * hw;
  let c_count = params.channels;
  for (var c = 0u; c < c_count; c++) {
    let v = byte_at(pixel * c_count + c) / 255.0;
    let out_index = select((image * c_count + c) * hw + within, pixel * c_count + c, channels_last == 1u);
    dst[out_index] = (v - params.mean[c]) * params.inv_std[c];
  }
}
