// Training-time preprocessing of a u8 NHWC batch into normalised f32 NCHW at the model's size:
// per sample a crop box (random resized crop), an optional horizontal flip, and brightness and
// contrast jitter, all chosen on the CPU from a seeded stream and passed in `samples`. Bilinear
// sampling, as torchvision's RandomResizedCrop. One invocation per output pixel.

struct Params {
  src_width: u32,
  src_height: u32,
  out_width: u32,
  out_height: u32,
  images: u32,
  channels: u32,
  row_pitch: u32,
  _pad: u32,
  mean: vec4f,
  inv_std: vec4f,
}

// Per sample: crop x, y, width, height (source pixels), flip (0/1), brightness, contrast, unused.
struct Sample {
  crop: vec4f,
  flip: f32,
  brightness: f32,
  contrast: f32,
  _pad: f32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> samples: array<Sample>;

fn texel(image: u32, x: u32, y: u32, c: u32) -> f32 {
  let i = ((image * params.src_height + y) * params.src_width + x) * params.channels + c;
  return f32((src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let pixel = gid.y * params.row_pitch + gid.x;
  let hw = params.out_width * params.out_height;
  if (pixel >= hw * params.images) { return; }
  let image = pixel / hw;
  let within = pixel - image * hw;
  let oy = within / params.out_width;
  var ox = within - oy * params.out_width;
  let s = samples[image];
  if (s.flip > 0.5) { ox = params.out_width - 1u - ox; }
  let sx = s.crop.x + (f32(ox) + 0.5) * s.crop.z / f32(params.out_width) - 0.5;
  let sy = s.crop.y + (f32(oy) + 0.5) * s.crop.w / f32(params.out_height) - 0.5;
  let max_x = f32(params.src_width - 1u);
  let max_y = f32(params.src_height - 1u);
  let fx = clamp(sx, 0.0, max_x);
  let fy = clamp(sy, 0.0, max_y);
  let x0 = u32(floor(fx));
  let y0 = u32(floor(fy));
  let x1 = min(x0 + 1u, params.src_width - 1u);
  let y1 = min(y0 + 1u, params.src_height - 1u);
  let ax = fx - f32(x0);
  let ay = fy - f32(y0);
  for (var c = 0u; c < params.channels; c++) {
    let top = mix(texel(image, x0, y0, c), texel(image, x1, y0, c), ax);
    let bottom = mix(texel(image, x0, y1, c), texel(image, x1, y1, c), ax);
    var v = mix(top, bottom, ay) / 255.0;
    v = clamp((v - 0.5) * s.contrast + 0.5 + s.brightness, 0.0, 1.0);
    dst[(image * params.channels + c) * hw + within] = (v - params.mean[c]) * params.inv_std[c];
  }
}
