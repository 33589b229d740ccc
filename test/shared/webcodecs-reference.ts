// The CPU reference for the WebCodecs frame pass, written from the wasm path's definitions rather
// than from the WGSL: the whole-pixel source area of wasm/src/image.c's plan_geometry, the
// fixed-point two-pass resize of wasm/src/resize.c (horizontal first, both rounded to 8 bits), a
// horizontal flip of the result, then (v / 255 − mean) / std as NormalizeKernel computes it.
import type { ClipFrameTarget } from '../../src/video/webcodecs.ts';
import type { RgbaFrame } from './webcodecs-clips.ts';

const ONE = 1 << 22;

interface Area {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** image.c's plan_geometry (the area td_scale_frame gives a video frame) for a frame of fw × fh pixels. */
export function referenceArea(fw: number, fh: number, t: Pick<ClipFrameTarget, 'width' | 'height' | 'fit' | 'crop'>): Area {
  const W = t.width;
  const H = t.height;
  const c = t.crop ?? { x: 0, y: 0, width: fw, height: fh };
  let r = { x: Math.floor(c.x), y: Math.floor(c.y), w: Math.max(1, Math.floor(c.width + 0.5)), h: Math.max(1, Math.floor(c.height + 0.5)) };
  if (t.fit === 'cover') {
    const s = Math.max(W / r.w, H / r.h);
    const cw = Math.min(r.w, Math.floor(W / s + 0.5));
    const ch = Math.min(r.h, Math.floor(H / s + 0.5));
    r = { x: r.x + Math.floor((r.w - cw) / 2), y: r.y + Math.floor((r.h - ch) / 2), w: cw, h: ch };
  }
  return r;
}

/** resize.c's plan_axis: per output sample, its first tap and integer weights summing to ONE. */
function planAxis(size: number, start: number, span: number, out: number): { first: number; weights: number[] }[] {
  const scale = span / out;
  const support = Math.max(scale, 1);
  const plan: { first: number; weights: number[] }[] = [];
  for (let i = 0; i < out; i++) {
    const center = start + (i + 0.5) * scale;
    const lo = Math.max(0, Math.floor(center - support + 0.5));
    const hi = Math.min(size, Math.floor(center + support + 0.5));
    const w: number[] = [];
    for (let k = lo; k < hi; k++) w.push(Math.max(0, 1 - Math.abs((k - center + 0.5) / support)));
    const sum = w.reduce((a, b) => a + b, 0);
    if (!(sum > 0)) {
      plan.push({ first: Math.min(size - 1, Math.max(0, Math.floor(center))), weights: [ONE] });
      continue;
    }
    const wi = w.map((v) => Math.round((v / sum) * ONE));
    let biggest = 0;
    wi.forEach((v, k) => {
      if (v > (wi[biggest] as number)) biggest = k;
    });
    wi[biggest] = (wi[biggest] as number) + ONE - wi.reduce((a, b) => a + b, 0);
    plan.push({ first: lo, weights: wi });
  }
  return plan;
}

const toByte = (acc: number) => Math.min(255, Math.max(0, Math.floor((acc + ONE / 2) / ONE)));

/** The target's bytes (H · W · 3, RGB) for one frame: area → resize → flip. */
export function referenceBytes(frame: RgbaFrame, t: Pick<ClipFrameTarget, 'width' | 'height' | 'fit' | 'crop' | 'flip'>): Uint8Array {
  const a = referenceArea(frame.width, frame.height, t);
  const px = planAxis(frame.width, a.x, a.w, t.width);
  const py = planAxis(frame.height, a.y, a.h, t.height);
  const rows = new Uint8Array(frame.height * t.width * 3);
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < t.width; x++) {
      const { first, weights } = px[x] as { first: number; weights: number[] };
      for (let c = 0; c < 3; c++) {
        let acc = 0;
        weights.forEach((w, k) => {
          acc += (frame.rgba[(y * frame.width + first + k) * 4 + c] as number) * w;
        });
        rows[(y * t.width + x) * 3 + c] = toByte(acc);
      }
    }
  const out = new Uint8Array(t.height * t.width * 3);
  for (let y = 0; y < t.height; y++) {
    const { first, weights } = py[y] as { first: number; weights: number[] };
    for (let x = 0; x < t.width; x++)
      for (let c = 0; c < 3; c++) {
        let acc = 0;
        weights.forEach((w, k) => {
          acc += (rows[((first + k) * t.width + x) * 3 + c] as number) * w;
        });
        const xo = t.flip ? t.width - 1 - x : x;
        out[(y * t.width + xo) * 3 + c] = toByte(acc);
      }
  }
  return out;
}

/**
 * The largest |v_gpu − v_ref| over a slot, on the 0..1 scale before normalisation: the GPU's f32
 * values are mapped back with the target's mean and std (alpha, where written, must be 1).
 */
export function maxSlotDiff(gpu: Float32Array, slot: number, ref: Uint8Array, t: ClipFrameTarget): number {
  const C = t.channels;
  const mean = t.mean ?? [0.485, 0.456, 0.406, 0];
  const std = t.std ?? [0.229, 0.224, 0.225, 1];
  const hw = t.width * t.height;
  const base = (t.firstFrame + slot) * hw * C;
  let worst = 0;
  for (let p = 0; p < hw; p++)
    for (let c = 0; c < C; c++) {
      const v = (gpu[base + p * C + c] as number) * (std[c] as number) + (mean[c] as number);
      const want = c < 3 ? (ref[p * 3 + c] as number) / 255 : 1;
      worst = Math.max(worst, Math.abs(v - want));
    }
  return worst;
}
