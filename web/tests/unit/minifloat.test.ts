// float8 and float4e2m1 in the tensor editor: every code of each type, from a reference table built here
// from the formats' definitions (ONNX's float8 and float4 pages: sign, exponent, mantissa, bias, the
// codes set aside for NaN and infinity), is kept as is; values between neighbours round to nearest
// even; beyond the range they saturate (Cast's default); NaN where the type has one.
import { describe, expect, it } from 'vitest';
import { MINIFLOATS, roundMiniFloat } from '../../src/params/minifloat';
import { TensorGrid, formatCell, parseCell } from '../../src/ui/tensoreditor';

interface Def {
  exp: number;
  mant: number;
  bias: number;
  special: 'fn' | 'fnuz' | 'ieee' | 'none';
}
const DEFS: Record<string, Def> = {
  float8e4m3fn: { exp: 4, mant: 3, bias: 7, special: 'fn' },
  float8e4m3fnuz: { exp: 4, mant: 3, bias: 8, special: 'fnuz' },
  float8e5m2: { exp: 5, mant: 2, bias: 15, special: 'ieee' },
  float8e5m2fnuz: { exp: 5, mant: 2, bias: 16, special: 'fnuz' },
  float4e2m1: { exp: 2, mant: 1, bias: 1, special: 'none' },
};
// The spec's tables: largest finite value and smallest subnormal.
const LIMITS: Record<string, [number, number]> = {
  float8e4m3fn: [448, 2 ** -9],
  float8e4m3fnuz: [240, 2 ** -10],
  float8e5m2: [57344, 2 ** -16],
  float8e5m2fnuz: [57344, 2 ** -17],
  float4e2m1: [6, 0.5],
};

function decode(d: Def, code: number): number {
  const bits = 1 + d.exp + d.mant;
  const sign = code >> (bits - 1) ? -1 : 1;
  const e = (code >> d.mant) & ((1 << d.exp) - 1);
  const m = code & ((1 << d.mant) - 1);
  const top = (1 << d.exp) - 1;
  if (d.special === 'fnuz' && code === 0x80) return NaN;
  if (d.special === 'fn' && e === top && m === (1 << d.mant) - 1) return NaN;
  if (d.special === 'ieee' && e === top) return m ? NaN : sign * Infinity;
  const frac = m / (1 << d.mant);
  return sign * (e === 0 ? frac * 2 ** (1 - d.bias) : (1 + frac) * 2 ** (e - d.bias));
}

function table(dtype: string): number[] {
  const d = DEFS[dtype];
  return Array.from({ length: 1 << (1 + d.exp + d.mant) }, (_, c) => decode(d, c));
}

describe('float8 and float4 values', () => {
  it('has the layouts of the spec (largest and smallest values)', () => {
    for (const dtype of Object.keys(DEFS)) {
      const pos = table(dtype).filter((v) => Number.isFinite(v) && v > 0);
      expect([Math.max(...pos), Math.min(...pos)]).toEqual(LIMITS[dtype]);
      expect(MINIFLOATS[dtype].max).toBe(LIMITS[dtype][0]);
    }
  });

  it('keeps every value of every code as it is', () => {
    for (const dtype of Object.keys(DEFS))
      for (const v of table(dtype)) {
        if (Number.isNaN(v)) expect(roundMiniFloat(dtype, v)).toBeNaN();
        else
          expect(Object.is(roundMiniFloat(dtype, v), v) || (v === 0 && DEFS[dtype].special === 'fnuz')).toBe(
            true,
          );
      }
  });

  it('rounds between neighbours to the nearer, ties to the even code', () => {
    for (const dtype of Object.keys(DEFS)) {
      const codes = table(dtype)
        .map((v, c) => [v, c] as const)
        .filter(([v]) => Number.isFinite(v) && v >= 0 && !Object.is(v, -0))
        .sort((x, y) => x[0] - y[0]);
      for (let i = 0; i + 1 < codes.length; i++) {
        const [a, ca] = codes[i];
        const [b] = codes[i + 1];
        const mid = (a + b) / 2;
        const step = (b - a) / 8;
        expect(roundMiniFloat(dtype, mid)).toBe(ca % 2 === 0 ? a : b);
        expect(roundMiniFloat(dtype, mid - step)).toBe(a);
        expect(roundMiniFloat(dtype, mid + step)).toBe(b);
        expect(roundMiniFloat(dtype, -(mid + step))).toBe(-b);
      }
    }
  });

  it('saturates beyond the range, keeps an infinity where the type has one, and knows its NaN and zeros', () => {
    for (const dtype of Object.keys(DEFS)) {
      const max = LIMITS[dtype][0];
      for (const x of [max * 1.0625, max * 3, 1e30]) {
        expect(roundMiniFloat(dtype, x)).toBe(max);
        expect(roundMiniFloat(dtype, -x)).toBe(-max);
      }
      const inf = dtype === 'float8e5m2';
      expect(roundMiniFloat(dtype, Infinity)).toBe(inf ? Infinity : max);
      expect(roundMiniFloat(dtype, -Infinity)).toBe(inf ? -Infinity : -max);
    }
    expect(Object.is(roundMiniFloat('float8e4m3fn', -1e-9), -0)).toBe(true);
    expect(Object.is(roundMiniFloat('float8e4m3fnuz', -1e-9), 0)).toBe(true);
    expect(() => roundMiniFloat('float4e2m1', NaN)).toThrow('float4e2m1 has no NaN');
  });
});

describe('float8 cells in the tensor editor', () => {
  it('reads a cell as the value kept and shows the shortest text for it', () => {
    expect(parseCell('float8e4m3fn', '0.3')).toBe(0.3125);
    expect(parseCell('float8e4m3fn', '1000')).toBe(448);
    expect(parseCell('float8e5m2', '-inf')).toBe(-Infinity);
    expect(parseCell('float8e4m3fnuz', 'inf')).toBe(240);
    expect(() => parseCell('float4e2m1', 'nan')).toThrow('float4e2m1 has no NaN');
    expect(formatCell(2 ** -9, 'float8e4m3fn')).toBe('0.002');
    expect(formatCell(0.3125, 'float8e4m3fn')).toBe('0.3');
    expect(formatCell(57344, 'float8e5m2')).toBe('57000'); // shortest; 60000 would be saturated
    // Every value's text reads back as the same value of the type (zeros shown without a sign).
    for (const dtype of Object.keys(DEFS))
      for (const v of table(dtype).filter(Number.isFinite))
        expect(parseCell(dtype, formatCell(v, dtype)) === v).toBe(true);
  });

  it('sends the kept values as runs of a paged grid', async () => {
    const g = new TensorGrid('float8e5m2', [300, 300], null, async (_o, limit, rows) =>
      new Array(limit * rows).fill(0),
    );
    await g.load(0, 2, 0, 2);
    g.set(0, 1, '100');
    g.set(1, 0, 'inf');
    expect(g.runs()).toEqual([
      { offset: 1, values: [96] },
      { offset: 300, values: ['inf'] },
    ]);
  });
});
