// Every ViT WGSL kernel against the f64 CPU reference (relative error ≤ 1e-3). Runtime-neutral:
// each function throws on failure and returns one line per comparison.
import type { Kernels } from '../../src/vit/kernels.ts';
import { defaultTrain, type TrainConfig } from '../../src/vit/config.ts';
import { optimValues } from '../../src/vit/params.ts';
import { adamwStep, patchify } from '../../src/vit/reference.ts';
import {
  addBias,
  colSum,
  crossEntropy,
  gelu,
  geluGrad,
  layerNorm,
  layerNormBackward,
  matmul,
  softmaxBackward,
  softmaxRows,
} from '../../src/vit/reference-ops.ts';
import { check } from './assert.ts';
import { close, random, read, run, upload, zeros } from './vit-helpers.ts';

export async function matmulVariantsMatchCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const [M, N, K] = [70, 45, 37]; // several tiles in every dimension, none full
  const a = random(M * K, 1);
  const b = random(K * N, 2);
  const bias = random(N + 3, 3);
  const r = random(M * N, 4);
  const ga = upload(device, a);
  const gb = upload(device, b);
  const gbias = upload(device, bias);
  const gr = upload(device, r);
  // A·B with alpha, bias at an offset, and a residual.
  const c1 = zeros(device, M * N);
  await run(device, [k.matmul({ a: ga, b: gb, c: c1, M, N, K, alpha: 0.5, bias: { buffer: gbias, offset: 3 }, residual: gr })]);
  const want1 = addBias(matmul(a, b, M, K, N, false, false, undefined, false, 0.5), bias.subarray(3), M, N).map((v, i) => v + r[i]!);
  close('A·B + bias + residual', await read(device, c1, M * N), want1, 1e-3, log);
  // Aᵀ·B: a stored [K, M] is reused as [M2=K.., ...]; here A is (37×70)ᵀ, B is 37×45 → 70×45; accumulate.
  const at = random(K * M, 5);
  const c2 = upload(device, r);
  await run(device, [k.matmul({ a: upload(device, at), b: gb, c: c2, M, N, K, transA: true, accumulate: true })]);
  close('Aᵀ·B (+= C)', await read(device, c2, M * N), matmul(at, b, M, K, N, true, false, Float64Array.from(r), true), 1e-3, log);
  // A·Bᵀ with B stored [N, K].
  const bt = random(N * K, 6);
  const c3 = zeros(device, M * N);
  await run(device, [k.matmul({ a: ga, b: upload(device, bt), c: c3, M, N, K, transB: true })]);
  close('A·Bᵀ', await read(device, c3, M * N), matmul(a, bt, M, K, N, false, true), 1e-3, log);
  return log.concat(await batchedMatchesCpu(device, k));
}

/** Attention-shaped batches: (image, head) slices of a packed qkv matrix, as the model uses them. */
async function batchedMatchesCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const [B, H, T, hd] = [3, 2, 17, 5];
  const D = H * hd;
  const qkv = random(B * T * 3 * D, 7);
  const g = upload(device, qkv);
  const s = zeros(device, B * H * T * T);
  const o = zeros(device, B * T * D);
  const dv = zeros(device, B * T * 3 * D);
  const alpha = 1 / Math.sqrt(hd);
  const batch = (sa: [number, number], sb: [number, number], sc: [number, number]) => ({ count: B * H, inner: H, a: sa, b: sb, c: sc });
  const qkvS: [number, number] = [T * 3 * D, hd];
  const sS: [number, number] = [H * T * T, T * T];
  const oS: [number, number] = [T * D, hd];
  await run(device, [
    k.matmul({ a: g, b: g, c: s, M: T, N: T, K: hd, transB: true, lda: 3 * D, ldb: 3 * D, offB: D, alpha, batch: batch(qkvS, qkvS, sS) }),
    k.matmul({ a: s, b: g, c: o, M: T, N: hd, K: T, ldb: 3 * D, ldc: D, offB: 2 * D, batch: batch(sS, qkvS, oS) }),
    k.matmul({ a: s, b: o, c: dv, M: T, N: hd, K: T, transA: true, ldb: D, ldc: 3 * D, offC: 2 * D, batch: batch(sS, oS, qkvS) }),
  ]);
  const slice = (src: Float64Array, rows: number, cols: number, ld: number, off: number) =>
    Float64Array.from({ length: rows * cols }, (_, i) => src[off + Math.floor(i / cols) * ld + (i % cols)]!);
  const wantS = new Float64Array(B * H * T * T);
  const wantO = new Float64Array(B * T * D);
  const wantDv = new Float64Array(B * T * 3 * D);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const q = slice(qkv, T, hd, 3 * D, b * T * 3 * D + h * hd);
      const kk = slice(qkv, T, hd, 3 * D, b * T * 3 * D + D + h * hd);
      const v = slice(qkv, T, hd, 3 * D, b * T * 3 * D + 2 * D + h * hd);
      const sc = matmul(q, kk, T, hd, T, false, true, undefined, false, alpha);
      wantS.set(sc, (b * H + h) * T * T);
      const ov = matmul(sc, v, T, T, hd);
      const dvv = matmul(sc, ov, T, T, hd, true);
      for (let i = 0; i < T; i++)
        for (let e = 0; e < hd; e++) {
          wantO[(b * T + i) * D + h * hd + e] = ov[i * hd + e]!;
          wantDv[(b * T + i) * 3 * D + 2 * D + h * hd + e] = dvv[i * hd + e]!;
        }
    }
  close('batched Q·Kᵀ (strided heads)', await read(device, s, wantS.length), wantS, 1e-3, log);
  close('batched S·V', await read(device, o, wantO.length), wantO, 1e-3, log);
  close('batched Sᵀ·O into a qkv slice', await read(device, dv, wantDv.length), wantDv, 1e-3, log);
  return log;
}

export async function layerNormMatchesCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const [rows, D] = [5, 70];
  const xs = random(rows * 2 * D, 11, 3); // strided rows: every other block of D, like class tokens
  const x = Float64Array.from({ length: rows * D }, (_, i) => xs[Math.floor(i / D) * 2 * D + (i % D)]!);
  const w = random(2 * 128, 12).map((v, i) => (i < 128 ? 1 + v : v)); // gain at 0, bias at 128
  const dy = random(rows * D, 13);
  const dres = random(rows * 2 * D, 14);
  const spec = { rows, D, xStride: 2 * D, yStride: D, gOff: 0, bOff: 128 };
  const gx = upload(device, xs);
  const gw = upload(device, w);
  const y = zeros(device, rows * D);
  const stats = zeros(device, 2 * rows);
  const dx = upload(device, dres);
  const grads = zeros(device, 256);
  const gdy = upload(device, dy);
  await run(device, [
    k.layerNorm(spec, gx, gw, y, stats),
    k.layerNormBackward(spec, gdy, gx, gw, stats, dx, true),
    k.layerNormParams(spec, gdy, gx, stats, grads),
  ]);
  const ref = layerNorm(x, w.subarray(0, D), w.subarray(128, 128 + D), rows, D);
  close('layer norm forward', await read(device, y, rows * D), ref.y, 1e-3, log);
  const dxWant = new Float64Array(rows * D);
  const dg = new Float64Array(D);
  const db = new Float64Array(D);
  layerNormBackward(dy, x, w.subarray(0, D), ref, rows, D, dxWant, dg, db);
  const dxGot = await read(device, dx, rows * 2 * D);
  const full = Float64Array.from(dres);
  for (let i = 0; i < rows * D; i++) full[Math.floor(i / D) * 2 * D + (i % D)]! += dxWant[i]!;
  close('layer norm backward (strided, += residual grad)', dxGot, full, 1e-3, log);
  close('layer norm d gain', await read(device, grads, D), dg, 1e-3, log);
  close('layer norm d bias', await read(device, grads, D, 128), db, 1e-3, log);
  return log;
}

export async function elementwiseMatchCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const n = 1000;
  const u = random(n, 21, 6);
  const up = random(n, 22);
  const gu = upload(device, u);
  const a = zeros(device, n);
  const d = upload(device, up);
  const [rows, cols] = [40, 17];
  const s = random(rows * cols, 23, 5);
  const dp = random(rows * cols, 24);
  const gs = upload(device, s);
  const gdp = upload(device, dp);
  const sums = zeros(device, 64 + cols);
  await run(device, [
    k.gelu(gu, a, n),
    k.geluBackward(gu, d, n),
    k.softmax(gs, rows, cols),
    k.softmaxBackward(gs, gdp, rows, cols),
    k.colSum(gdp, rows, cols, sums, 64),
  ]);
  close('gelu forward', await read(device, a, n), u.map(gelu), 1e-3, log);
  close(
    'gelu backward',
    await read(device, d, n),
    up.map((v, i) => v * geluGrad(u[i]!)),
    1e-3,
    log,
  );
  const p = Float64Array.from(s);
  softmaxRows(p, rows, cols);
  close('softmax forward', await read(device, gs, rows * cols), p, 1e-3, log);
  const ds = Float64Array.from(dp);
  softmaxBackward(p, ds, rows, cols);
  close('softmax backward', await read(device, gdp, rows * cols), ds, 1e-3, log);
  const cs = new Float64Array(cols);
  colSum(ds, rows, cols, cs);
  close('column sum (bias grad)', await read(device, sums, cols, 64), cs, 1e-3, log);
  return log;
}

export async function embedAndLossMatchCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const cfg = { imageSize: 16, patchSize: 4, channels: 3, width: 8, depth: 1, heads: 2, mlpRatio: 2, classes: 3 };
  const B = 2;
  const T = 17;
  const D = 8;
  const images = random(B * 3 * 16 * 16, 31);
  const patches = zeros(device, B * 16 * 48);
  const pe = random(B * 16 * D, 32);
  const w = random(64 + T * D, 33); // cls at 0, pos at 64
  const x = zeros(device, B * T * D);
  const dx = random(B * T * D, 34);
  const dpe = zeros(device, B * 16 * D);
  const grads = zeros(device, 64 + T * D);
  await run(device, [
    k.patchify(upload(device, images), patches, B, 3, 16, 4),
    k.tokens(upload(device, pe), upload(device, w), x, B, T, D, 0, 64),
    k.tokensBackward(upload(device, dx), dpe, grads, B, T, D, 0, 64),
  ]);
  close('patchify', await read(device, patches, B * 16 * 48), patchify(images, cfg, B), 1e-6, log);
  const wantX = new Float64Array(B * T * D);
  const wantG = new Float64Array(64 + T * D);
  const wantDpe = new Float64Array(B * 16 * D);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let i = 0; i < D; i++) {
        const o = (b * T + t) * D + i;
        wantX[o] = w[64 + t * D + i]! + (t === 0 ? w[i]! : pe[(b * 16 + t - 1) * D + i]!);
        wantG[64 + t * D + i]! += dx[o]!;
        if (t === 0) wantG[i]! += dx[o]!;
        else wantDpe[(b * 16 + t - 1) * D + i] = dx[o]!;
      }
  close('tokens forward', await read(device, x, B * T * D), wantX, 1e-6, log);
  const got = await read(device, grads, 64 + T * D);
  close('tokens backward (cls, pos)', got, wantG, 1e-5, log);
  close('tokens backward (patch rows)', await read(device, dpe, B * 16 * D), wantDpe, 1e-6, log);
  // Cross-entropy over more rows than the workgroup, with one padding label.
  const [Bc, K] = [70, 10];
  const logits = random(Bc * K, 35, 4);
  const labels = Int32Array.from({ length: Bc }, (_, i) => (i === 5 ? -1 : (i * 7) % K));
  const dl = zeros(device, Bc * K);
  const stats = zeros(device, 4);
  await run(device, [k.crossEntropy(upload(device, logits), upload(device, labels), dl, stats, Bc, K)]);
  const ce = crossEntropy(logits, labels, Bc, K);
  const st = await read(device, stats, 4);
  close('cross-entropy loss', [st[0]! / Bc], [ce.loss], 1e-3, log);
  check(
    st[1] === Bc - 1 && st[2] === ce.correct && st[3] === 1,
    `cross-entropy counts ${Array.from(st)} (want ${Bc - 1}, ${ce.correct}, 1)`,
  );
  close('cross-entropy dlogits', await read(device, dl, Bc * K), ce.dlogits, 1e-3, log);
  return log;
}

/** Grad norm, clipping, schedule and AdamW over three steps, against the CPU optimizer. */
export async function optimizerMatchesCpu(
  device: GPUDevice,
  k: Kernels,
  t: TrainConfig = { ...defaultTrain, warmupSteps: 2, totalSteps: 5, lr: 0.01 },
): Promise<string[]> {
  const log: string[] = [];
  const n = 100_000;
  const decayEnd = 64_000;
  const p = random(n, 41);
  const state = { m: new Float64Array(n), v: new Float64Array(n), step: 0 };
  const hyper = optimValues(n, decayEnd, t);
  const w = upload(device, p);
  const g = zeros(device, n);
  const m = zeros(device, n);
  const v = zeros(device, n);
  const st = zeros(device, 8);
  const optimizer = k.optimizer(hyper, n, { grads: g, partial: zeros(device, 256), state: st, w, m, v });
  for (let step = 0; step < 3; step++) {
    const grads = random(n, 50 + step, step === 1 ? 1e-3 : 0.05); // step 1's norm is under the clip
    device.queue.writeBuffer(g, 0, Float32Array.from(grads));
    await run(device, optimizer);
    const before = Float64Array.from(p);
    const lr = adamwStep(p, grads, state, t, decayEnd);
    const s = await read(device, st, 6);
    close(`step ${step + 1} lr`, [s[1]!], [lr], 1e-5, log);
    // Compare the updates, not the parameters: an update is ~lr, far below the parameters' scale.
    const got = await read(device, w, n);
    close(
      `step ${step + 1} update`,
      got.map((x, i) => x - before[i]!),
      p.map((x, i) => x - before[i]!),
      1e-3,
      log,
    );
  }
  close('AdamW first moment', await read(device, m, n), state.m, 1e-3, log);
  close('AdamW second moment', await read(device, v, n), state.v, 1e-3, log);
  return log;
}

/** Fused attention forward and backward against per-(image, head) reference matmuls + softmax. */
export async function attentionMatchesCpu(device: GPUDevice, k: Kernels): Promise<string[]> {
  const log: string[] = [];
  const [B, H, T, hd] = [3, 2, 17, 5];
  const D = H * hd;
  const qkv = random(B * T * 3 * D, 61);
  const dO = random(B * T * D, 62);
  const g = upload(device, qkv);
  const probs = zeros(device, B * H * T * T);
  const o = zeros(device, B * T * D);
  const dS = zeros(device, B * H * T * T);
  const dqkv = zeros(device, B * T * 3 * D);
  const shape = { B, H, T, hd };
  await run(device, [k.attention(shape, g, probs, o), ...k.attentionBackward(shape, g, probs, upload(device, dO), dS, dqkv)]);
  const scale = 1 / Math.sqrt(hd);
  const wantP = new Float64Array(B * H * T * T);
  const wantO = new Float64Array(B * T * D);
  const wantD = new Float64Array(B * T * 3 * D);
  const get = (src: Float64Array, rowLen: number, b: number, off: number) =>
    Float64Array.from({ length: T * hd }, (_, i) => src[(b * T + Math.floor(i / hd)) * rowLen + off + (i % hd)]!);
  const put = (dst: Float64Array, rowLen: number, b: number, off: number, x: Float64Array) => {
    for (let i = 0; i < T * hd; i++) dst[(b * T + Math.floor(i / hd)) * rowLen + off + (i % hd)] = x[i]!;
  };
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const [q, kk, v] = [0, 1, 2].map((part) => get(qkv, 3 * D, b, part * D + h * hd)) as [Float64Array, Float64Array, Float64Array];
      const dOh = get(dO, D, b, h * hd);
      const p = matmul(q, kk, T, hd, T, false, true);
      softmaxRows(p, T, T, scale);
      wantP.set(p, (b * H + h) * T * T);
      put(wantO, D, b, h * hd, matmul(p, v, T, T, hd));
      const ds = matmul(dOh, v, T, hd, T, false, true);
      put(wantD, 3 * D, b, 2 * D + h * hd, matmul(p, dOh, T, T, hd, true));
      softmaxBackward(p, ds, T, T);
      put(wantD, 3 * D, b, h * hd, matmul(ds, kk, T, T, hd, false, false, undefined, false, scale));
      put(wantD, 3 * D, b, D + h * hd, matmul(ds, q, T, T, hd, true, false, undefined, false, scale));
    }
  close('attention probabilities', await read(device, probs, wantP.length), wantP, 1e-3, log);
  close('attention output', await read(device, o, wantO.length), wantO, 1e-3, log);
  close('attention backward dq, dk, dv', await read(device, dqkv, wantD.length), wantD, 1e-3, log);
  return log;
}

/** Every kernel scenario by name, for the tiers to run in a loop. */
export const kernelScenarios: Record<string, (device: GPUDevice, k: Kernels) => Promise<string[]>> = {
  'matmul A·B, Aᵀ·B, A·Bᵀ (bias, residual, accumulate, batched attention strides)': matmulVariantsMatchCpu,
  'fused multi-head attention forward and backward': attentionMatchesCpu,
  'layer norm forward, backward, gain/bias gradients': layerNormMatchesCpu,
  'GELU, softmax (forward, backward), column sums': elementwiseMatchCpu,
  'patchify, token assembly (forward, backward), cross-entropy': embedAndLossMatchCpu,
  'grad norm + clipping, warmup/cosine schedule, AdamW': optimizerMatchesCpu,
};
