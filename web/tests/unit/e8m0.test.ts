// float8e8m0 in the tensor editor: every code, from the format's definition (ONNX's float8e8m0: eight
// exponent bits, bias 127, no sign, no mantissa, 0xFF NaN), is kept as is and shown as a text that reads
// back as itself; typed values round as Cast's defaults do (round_mode "up", saturate=1), as the server
// stores them; zero and negative values are refused, naming why.
import { describe, expect, it } from 'vitest';
import { E8M0_ROUNDS, roundE8M0 } from '../../src/params/minifloat';
import { TensorGrid, formatCell, parseCell } from '../../src/ui/tensoreditor';

const D = 'float8e8m0';
/** The value of `code`: 2^(code - 127), NaN for 0xFF. */
const decode = (code: number) => (code === 0xff ? NaN : 2 ** (code - 127));

describe('float8e8m0 cells', () => {
  it('keeps every value of the type and shows a text that reads back as it', () => {
    for (let c = 0; c < 256; c++) {
      const v = decode(c);
      if (Number.isNaN(v)) {
        expect(Number.isNaN(roundE8M0(v))).toBe(true);
        expect(formatCell(parseCell(D, 'nan'), D)).toBe('nan');
        continue;
      }
      expect(roundE8M0(v), `code ${c}`).toBe(v);
      const text = formatCell(v, D);
      expect(parseCell(D, text), `code ${c} as '${text}'`).toBe(v);
    }
    expect(formatCell(decode(127), D)).toBe('1');
    expect(formatCell(decode(117), D)).toBe('0.0009765625');
    expect(formatCell(decode(147), D)).toBe('1048576');
    expect(formatCell(decode(0), D)).toBe('2^-127');
    expect(formatCell(decode(0xfe), D)).toBe('2^127');
  });

  it('rounds a value between two powers of two up to the larger', () => {
    for (let c = 0; c + 1 < 0xff; c++) {
      const a = decode(c);
      const b = decode(c + 1);
      expect(roundE8M0(a * 1.0000001), `above 2^${c - 127}`).toBe(b);
      expect(roundE8M0((a + b) / 2)).toBe(b);
      expect(roundE8M0(b * 0.9999999)).toBe(b);
    }
    expect(parseCell(D, '3')).toBe(4);
    expect(parseCell(D, '0.3')).toBe(0.5);
    expect(parseCell(D, '1.0000001')).toBe(2);
    expect(parseCell(D, '2^-3')).toBe(0.125);
    expect(parseCell(D, '2**10')).toBe(1024);
  });

  it('rounds down or to the nearest (up from 1.5 times the smaller) as Cast does, every code', () => {
    for (let c = 0; c < 0xff; c++) {
      const a = decode(c);
      for (const mode of E8M0_ROUNDS) expect(roundE8M0(a, mode), `code ${c} ${mode}`).toBe(a);
      if (c + 1 >= 0xff) continue;
      const b = decode(c + 1);
      const mid = (a + b) / 2; // 1.5 x a, exactly
      expect(roundE8M0(a * 1.0000001, 'down'), `above 2^${c - 127}`).toBe(a);
      expect(roundE8M0(b * 0.9999999, 'down')).toBe(a);
      expect(roundE8M0(mid, 'down')).toBe(a);
      expect(roundE8M0(a * 1.0000001, 'nearest')).toBe(a);
      expect(roundE8M0(mid * 0.9999999, 'nearest')).toBe(a);
      expect(roundE8M0(mid, 'nearest')).toBe(b);
      expect(roundE8M0(b * 0.9999999, 'nearest')).toBe(b);
    }
    expect(parseCell(D, '3', 'down')).toBe(2);
    expect(parseCell(D, '3', 'nearest')).toBe(4);
    expect(parseCell(D, '2.9', 'nearest')).toBe(2);
    expect(parseCell(D, '0.3', 'down')).toBe(0.25);
    expect(parseCell(D, '1e39', 'down')).toBe(2 ** 127);
    expect(parseCell(D, 'inf', 'nearest')).toBe(2 ** 127);
    expect(parseCell(D, '1e-40', 'down')).toBe(2 ** -127);
    expect(() => parseCell(D, '0', 'down')).toThrow('float8e8m0 has no zero');
  });

  it("types with the grid's round mode, cells typed before keeping theirs", () => {
    const g = new TensorGrid(D, [3], [1, 1, 1]);
    g.set(0, 0, '3');
    g.round = 'down';
    g.set(0, 1, '3');
    g.round = 'nearest';
    g.set(0, 2, '3');
    expect(g.tensor().values).toEqual([4, 2, 4]);
    g.set(0, 2, '2.5');
    expect(g.get(0, 2)).toBe(2);
  });

  it('saturates past 2^127 and below 2^-127', () => {
    expect(parseCell(D, '1e39')).toBe(2 ** 127);
    expect(parseCell(D, 'inf')).toBe(2 ** 127);
    expect(parseCell(D, '2^300')).toBe(2 ** 127);
    expect(parseCell(D, '1e-40')).toBe(2 ** -127);
    expect(parseCell(D, '2^-2000')).toBe(2 ** -127);
    expect(parseCell(D, '5e-324')).toBe(2 ** -127);
  });

  it('refuses zero and negative values, saying why', () => {
    expect(() => parseCell(D, '0')).toThrow('float8e8m0 has no zero (its smallest value is 2^-127');
    expect(() => parseCell(D, '-2')).toThrow('-2 is negative; float8e8m0 has no sign');
    expect(() => parseCell(D, '-0')).toThrow('has no sign');
    expect(() => parseCell(D, '-inf')).toThrow('has no sign');
    expect(() => parseCell(D, 'two')).toThrow("'two' is not a number");
  });

  it('sends what it keeps: typed cells travel as the stored values, NaN as a string', () => {
    const g = new TensorGrid(D, [3], [1, 2, 4]);
    g.set(0, 0, '3');
    g.set(0, 1, 'nan');
    g.set(0, 2, '2^-127');
    expect(g.tensor().values).toEqual([4, 'nan', 2 ** -127]);
  });
});
