import { describe, expect, it } from 'vitest';
import { TensorGrid, formatCell, parseCell } from '../../src/ui/tensoreditor';

describe('tensor editor cells', () => {
  it('reads each element type and says what is wrong', () => {
    expect(parseCell('float', ' 1.5e3 ')).toBe(1500);
    expect(parseCell('float', '-inf')).toBe(-Infinity);
    expect(Number.isNaN(parseCell('double', 'nan') as number)).toBe(true);
    expect(() => parseCell('float', '1,5')).toThrow("'1,5' is not a number");
    expect(() => parseCell('float16', '70000')).toThrow('out of the range of float16');
    expect(parseCell('int8', '-128')).toBe(-128);
    expect(() => parseCell('int8', '128')).toThrow('128 is out of the range of int8 [-128, 127]');
    expect(() => parseCell('uint8', '-1')).toThrow('out of the range of uint8');
    expect(() => parseCell('int64', '2.5')).toThrow("'2.5' is not an integer (int64)");
    expect(parseCell('bool', 'TRUE')).toBe(true);
    expect(parseCell('bool', '0')).toBe(false);
    expect(() => parseCell('bool', '2')).toThrow('is not a bool');
    expect(parseCell('string', " it's ")).toBe(" it's ");
    for (const v of [1.25, -Infinity, NaN, true, 7])
      expect(parseCell(typeof v === 'boolean' ? 'bool' : 'float', formatCell(v))).toEqual(v);
  });
});

describe('tensor editor grid', () => {
  it('addresses the last two dimensions of the slice the leading indices pick', () => {
    const values = Array.from({ length: 2 * 3 * 4 }, (_, k) => k);
    const g = new TensorGrid('int32', [2, 3, 4], values);
    expect([g.rows, g.cols, g.lead]).toEqual([3, 4, [0]]);
    expect(g.get(2, 3)).toBe(11);
    g.lead[0] = 1;
    expect(g.get(0, 0)).toBe(12);
    g.set(1, 2, '-5');
    expect(g.tensor().values![1 * 12 + 1 * 4 + 2]).toBe(-5);
    expect(() => g.set(0, 0, 'x')).toThrow("'x' is not an integer (int32)");
    expect(g.get(0, 0)).toBe(12); // unchanged by a refused cell
    expect(values[18]).toBe(18); // the grid edits its own copy
  });

  it('shows a vector as one row and a scalar as one cell, and refuses a partial load', () => {
    const v = new TensorGrid('float', [5], [1, 2, 3, 4, 5]);
    expect([v.rows, v.cols, v.get(0, 4)]).toEqual([1, 5, 5]);
    const s = new TensorGrid('float', [], [3]);
    expect([s.rows, s.cols, s.get(0, 0)]).toEqual([1, 1, 3]);
    expect(() => new TensorGrid('float', [4, 4], [1, 2])).toThrow(
      'the tensor has 16 elements (shape [4, 4]) but 2 values were loaded',
    );
  });
});
