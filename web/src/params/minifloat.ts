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
