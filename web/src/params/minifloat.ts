// The float8 types of ONNX (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) and float4e2m1: which values each holds
// and how a typed number is stored, as the server stores it (src/ir/commands/tensor_json.cpp): rounded
// to nearest even; beyond the largest finite value saturated to it, as ONNX's Cast does by default
// (saturate=1); an infinity kept where the type has one (float8e5m2) and saturated elsewhere; NaN the
// type's NaN (float4e2m1 has none: refused).

export interface MiniFloat {
  mantBits: number;
  /** Exponent of the smallest normal binade (1 - bias); subnormals share its quantum. */
  minExp: number;
  max: number;
  hasInf: boolean;
  hasNaN: boolean;
  /** No negative zero (the FNUZ types: their negative-zero code is the NaN). */
  noNegZero: boolean;
}

export const MINIFLOATS: Record<string, MiniFloat> = {
  float8e4m3fn: { mantBits: 3, minExp: -6, max: 448, hasInf: false, hasNaN: true, noNegZero: false },
  float8e4m3fnuz: { mantBits: 3, minExp: -7, max: 240, hasInf: false, hasNaN: true, noNegZero: true },
  float8e5m2: { mantBits: 2, minExp: -14, max: 57344, hasInf: true, hasNaN: true, noNegZero: false },
  float8e5m2fnuz: { mantBits: 2, minExp: -15, max: 57344, hasInf: false, hasNaN: true, noNegZero: true },
  float4e2m1: { mantBits: 1, minExp: 0, max: 6, hasInf: false, hasNaN: false, noNegZero: false },
};

/** Rounds to the nearest integer, ties to even (Math.round rounds ties up). */
function roundEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The value of type `f` that `x` is stored as; throws when the type cannot hold it (NaN in float4e2m1). */
export function roundMiniFloat(dtype: string, x: number): number {
  const f = MINIFLOATS[dtype];
  if (!f) throw new Error(`${dtype} is not a float8 or float4 type`);
  if (Number.isNaN(x)) {
    if (!f.hasNaN) throw new Error(`${dtype} has no NaN`);
    return NaN;
  }
  const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
  const a = Math.abs(x);
  if (a === Infinity) return f.hasInf ? x : sign * f.max;
  // The quantum of a's binade (the subnormal one at least): multiples of it are exact in the type.
  const e = a === 0 ? f.minExp : Math.max(Math.floor(Math.log2(a)), f.minExp);
  // log2 may be off by one next to a power of two: the binade is the one with 2^e <= a < 2^(e+1).
  const binade = a >= 2 ** (e + 1) ? e + 1 : a < 2 ** e && e > f.minExp ? e - 1 : e;
  const q = 2 ** (binade - f.mantBits);
  const v = Math.min(roundEven(a / q) * q, f.max);
  if (v === 0) return sign < 0 && !f.noNegZero ? -0 : 0;
  return sign * v;
}

/** float8e8m0: an exponent alone, the values 2^-127 (code 0) to 2^127 (0xFE), 0xFF NaN; no sign, no zero. */
export const E8M0 = 'float8e8m0';

/** ONNX Cast's round_mode for float8e8m0: "up" (its default: a value between two powers of two becomes
 *  the larger), "down" (the smaller) or "nearest" (the larger from 1.5 times the smaller on). */
export type E8M0Round = 'up' | 'down' | 'nearest';
export const E8M0_ROUNDS: E8M0Round[] = ['up', 'down', 'nearest'];

/** The value of float8e8m0 that `x` is stored as: rounded by `mode` as Cast rounds (the default "up" is
 *  how the server stores a value typed in, src/ir/commands/tensor_json.cpp; the others give a power of
 *  two the server keeps as it is) and saturated as Cast's saturate=1 (past 2^127, infinity included,
 *  2^127; below 2^-127, 2^-127). Throws for zero and negative values, which the type cannot hold. */
export function roundE8M0(x: number, mode: E8M0Round = 'up'): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0 || Object.is(x, -0))
    throw new Error(
      `${Object.is(x, -0) ? '-0' : x} is negative; float8e8m0 has no sign (its values are the powers of two 2^-127 to 2^127)`,
    );
  if (x === 0) throw new Error('float8e8m0 has no zero (its smallest value is 2^-127, about 5.9e-39)');
  if (x === Infinity) return 2 ** 127;
  // floor(log2(x)), exactly: Math.log2 may be off by one next to a power of two.
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e--;
  else if (2 ** (e + 1) <= x) e++;
  // Between 2^e and 2^(e+1): up, or nearest from 1.5 x 2^e on (exact: 1.5 x 2^e is a double).
  if (2 ** e !== x && (mode === 'up' || (mode === 'nearest' && x >= 1.5 * 2 ** e))) e++;
  return 2 ** Math.min(127, Math.max(-127, e));
}
