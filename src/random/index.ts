// Seeded pseudo-random numbers: synthetic data, shuffles, augmentation, merges, weight init.
//
// Everything here works on 32-bit integers with Math.imul so results are bit-identical in every
// JS engine (Node, Deno, Chromium): the synthetic dataset must be the same bytes everywhere, since
// tests and benchmarks compare across runtimes.

/** Murmur3's 32-bit finaliser: a cheap bijective mixer with good avalanche. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hashes (seed, index, salt) to a uint32. The index may exceed 2^32 (up to 2^53), so its high
 * word is folded in too. Different salts give unrelated values for the same (seed, index), which
 * is how one sample draws its label and its pixels from independent streams.
 */
export function hash3(seed: number, index: number, salt = 0): number {
  const lo = index >>> 0;
  const hi = Math.floor(index / 4294967296) >>> 0;
  let h = mix32((seed >>> 0) ^ 0x9e3779b9);
  h = mix32(h ^ lo);
  h = mix32((h + Math.imul(hi, 0x27d4eb2f)) ^ 0x165667b1);
  return mix32(h ^ Math.imul(salt >>> 0, 0x61c88647));
}

/**
 * mulberry32: tiny state, passes the usual statistical batteries well enough for image texture
 * and layout, and far faster than anything cryptographic.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next uint32. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }

  /** Uniform float in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.float();
  }

  /** Uniform integer in [0, n). The float route keeps the bias below 2^-32 * n, ample here. */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /**
   * A child stream seeded from this one's next value and a salt, so a sub-task (e.g. per-pixel
   * noise) can consume any amount without shifting the draws that follow it here.
   */
  fork(salt: number): Rng {
    return new Rng(hash3(this.next(), salt, 0x5eed));
  }
}

/**
 * The stream for item `index` of a dataset with `seed`. Random access by design: image i never
 * depends on how many numbers images 0..i-1 consumed, so workers can render any shard directly.
 */
export function streamFor(seed: number, index: number, salt = 0): Rng {
  return new Rng(hash3(seed, index, salt));
}

/** A seeded generator as a plain function returning floats in [0, 1). */
export function seededFloats(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.float();
}
