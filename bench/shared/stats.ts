// The statistics and number formatting every benchmark uses, one definition each: a figure called
// "median" in docs/bench/*.md means median() below, whichever benchmark wrote it.

/** Sorted copy, ascending. */
const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/**
 * The median: the middle value for an odd count, the mean of the two middle values for an even
 * count; NaN for no values.
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) by linear interpolation between the closest ranks (numpy's default,
 * Hyndman–Fan type 7): quantile(xs, 0.5) is the median, 0 the minimum, 1 the maximum. NaN for no values.
 */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const s = sorted(xs);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return lo === hi ? s[lo]! : s[lo]! + (h - lo) * (s[hi]! - s[lo]!);
}

/** Median, minimum and maximum (NaN each for no values): the "median (min, max)" of the tables. */
export function spread(xs: readonly number[]): { median: number; min: number; max: number } {
  if (xs.length === 0) return { median: NaN, min: NaN, max: NaN };
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

/** `x` with `digits` decimals, or `missing` when it is not a finite number (not measured, 0 ÷ 0). */
export function fixed(x: number | undefined, digits = 2, missing = 'n/a'): string {
  return x === undefined || !Number.isFinite(x) ? missing : x.toFixed(digits);
}

/** A ratio as the tables print it: "1.74×" (`missing` when it is not a finite number). */
export function times(ratio: number | undefined, digits = 2, missing = 'n/a'): string {
  const text = fixed(ratio, digits, missing);
  return text === missing ? missing : `${text}×`;
}
