// One decoded video frame -> f32 NHWC slots of a clip buffer: crop/fit area -> Tandem's antialiased
// bilinear resize (wasm/src/resize.c: a triangle filter widened by the downscale factor, taps
// renormalised at the edges, horizontal pass first and rounded to 8 bits, then the vertical pass,
// rounded again) -> optional horizontal flip -> (byte / 255 - mean[c]) / std[c]. One invocation per
// output pixel, written to every slot the frame serves (slots[slot_begin .. slot_begin + slot_count)).
//
// The file has three sections, joined by frame-pass.ts: the frame as a layer of a plain
// rgba8unorm array texture (copied from the VideoFrame; a clip's frames take a layer each and go
// in one submit) or as a texture_external (imported), then the shared body.

// @section texture
@group(0) @binding(0) var frame: texture_2d_array<f32>;

fn source_rgb(p: vec2i) -> vec3f {
  return textureLoad(frame, p, params.layer, 0).rgb;
}

// @section external
@group(0) @binding(0) var frame: texture_external;

fn source_rgb(p: vec2i) -> vec3f {
  return textureLoad(frame, vec2u(p)).rgb;
}

// @section body
struct Params {
  out_width: u32,
  out_height: u32,
  channels: u32,           // 3 or 4 (alpha 255)
  flip: u32,               // 1: mirror the output horizontally
  in_width: u32,
  in_height: u32,
  slot_begin: u32,         // first entry of `slots` this frame writes
  slot_count: u32,
  row_pitch: u32,          // invocations per dispatch row
  slot_floats: u32,        // out_height * out_width * channels
  layer: u32,              // the texture routes: the frame's layer of the array texture
  pad1: u32,
  area: vec4f,             // source rectangle x, y, w, h in frame pixels (fractional)
  mean: vec4f,
  inv_std: vec4f,
}

@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<storage, read> slots: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

// Taps of output sample i along an axis of `size` input samples spread over [start, start + span):
// first tap, tap count, the filter's centre and its scale (resize.c's plan_axis).
struct Axis {
  lo: i32,
  hi: i32,
  center: f32,
  filter_scale: f32,
  sum: f32,
}

fn plan_axis(i: u32, size: u32, start: f32, span: f32, out: u32) -> Axis {
  let scale = span / f32(out);
  let filter_scale = max(scale, 1.0);
  let center = start + (f32(i) + 0.5) * scale;
  var lo = i32(floor(center - filter_scale + 0.5));
  var hi = i32(floor(center + filter_scale + 0.5));
  lo = max(lo, 0);
  hi = min(hi, i32(size));
  var sum = 0.0;
  for (var k = lo; k < hi; k++) { sum += weight(k, center, filter_scale); }
  if (sum <= 0.0) {
    // No tap under the filter (an area past the edge): the nearest sample, as resize.c does.
    lo = clamp(i32(center), 0, i32(size) - 1);
    hi = lo + 1;
    sum = 1.0;
    return Axis(lo, hi, f32(lo) + 0.5, 1.0, 1.0);
  }
  return Axis(lo, hi, center, filter_scale, sum);
}

fn weight(k: i32, center: f32, filter_scale: f32) -> f32 {
  return max(0.0, 1.0 - abs((f32(k) - center + 0.5) / filter_scale));
}

fn to_byte(v: f32) -> f32 {
  return clamp(floor(v + 0.5), 0.0, 255.0);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let pixel = gid.y * params.row_pitch + gid.x;
  let w = params.out_width;
  if (pixel >= w * params.out_height) { return; }
  let y = pixel / w;
  let x_out = pixel - y * w;
  let x = select(x_out, w - 1u - x_out, params.flip == 1u);
  let ax = plan_axis(x, params.in_width, params.area.x, params.area.z, w);
  let ay = plan_axis(y, params.in_height, params.area.y, params.area.w, params.out_height);
  var acc = vec3f(0.0);
  for (var ky = ay.lo; ky < ay.hi; ky++) {
    var row = vec3f(0.0);
    for (var kx = ax.lo; kx < ax.hi; kx++) {
      let byte = to_byte3(source_rgb(vec2i(kx, ky)) * 255.0);
      row += byte * weight(kx, ax.center, ax.filter_scale);
    }
    acc += to_byte3(row / ax.sum) * weight(ky, ay.center, ay.filter_scale);
  }
  let rgb = to_byte3(acc / ay.sum) / 255.0;
  let value = vec4f(rgb, 1.0);
  let c_count = params.channels;
  for (var s = 0u; s < params.slot_count; s++) {
    let base = slots[params.slot_begin + s] * params.slot_floats + pixel * c_count;
    for (var c = 0u; c < c_count; c++) {
      dst[base + c] = (value[c] - params.mean[c]) * params.inv_std[c];
    }
  }
}

fn to_byte3(v: vec3f) -> vec3f {
  return vec3f(to_byte(v.x), to_byte(v.y), to_byte(v.z));
}
