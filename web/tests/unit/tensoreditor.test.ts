import { describe, expect, it } from 'vitest';
import { TensorGrid, cellWidth, formatCell, parseCell } from '../../src/ui/tensoreditor';

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

describe('tensor editor cell texts', () => {
  it('writes the shortest decimal that reads back as the same value of the type', () => {
    // What the server sends for float32 values, as doubles.
    const f = (x: number) => Math.fround(x);
    expect(formatCell(f(0.1), 'float')).toBe('0.1');
    expect(formatCell(f(-1.2345678e-10), 'float')).toMatch(/^-1\.234567[89]e-10$/); // either reads back
    expect(formatCell(f(12345.678), 'float')).toBe('12345.678');
    expect(formatCell(f(3e38), 'float')).toBe('3e38');
    expect(formatCell(f(1 / 3), 'float')).toBe('0.33333334');
    expect(formatCell(1 / 3, 'double')).toBe('0.3333333333333333');
    expect(formatCell(0, 'float')).toBe('0');
    expect(formatCell(150, 'float')).toBe('150');
    expect(formatCell(0.0999755859375, 'float16')).toBe('0.1'); // float16's nearest to 0.1
    expect(formatCell(0.333251953125, 'float16')).toBe('0.3333');
    expect(formatCell(-7, 'int32')).toBe('-7');
    // Each reads back as the same float32.
    for (const x of [0.1, -1.2345678e-10, 6.02214076e23, 1e-45, 123456789])
      expect(f(Number(formatCell(f(x), 'float')))).toBe(f(x));
  });

  it('sizes a column for its longest text, 8 significant digits and a negative exponent included', () => {
    expect(cellWidth(['1', '2'])).toBe(6);
    expect(cellWidth(['-1.2345678e-10', '0.5'])).toBe(16);
    expect(cellWidth(['x'.repeat(40)])).toBe(28);
  });
});

describe('paged tensor editor grid', () => {
  // A [3, 1000, 100] tensor: element i holds i; the loader records the windows asked for.
  const shape = [3, 1000, 100];
  const asked: number[][] = [];
  const loader = async (offset: number, limit: number, rows: number, stride: number) => {
    asked.push([offset, limit, rows, stride]);
    const out: number[] = [];
    for (let r = 0; r < rows; r++) for (let k = 0; k < limit; k++) out.push(offset + r * stride + k);
    return out;
  };

  it('fetches only the page shown, once, and sends back only the edited cells as runs', async () => {
    const g = new TensorGrid('float', shape, null, loader);
    expect(g.paged).toBe(true);
    g.lead[0] = 2;
    expect(g.get(10, 5)).toBeUndefined();
    await g.load(10, 74, 0, 32);
    expect(asked).toEqual([[2 * 100000 + 10 * 100, 32, 64, 100]]);
    expect(g.get(10, 5)).toBe(201005);
    expect(g.get(73, 31)).toBe(200000 + 73 * 100 + 31);
    await g.load(10, 74, 0, 32); // already there: no request
    expect(asked.length).toBe(1);
    g.set(10, 5, '-1.5');
    g.set(10, 6, '2');
    g.set(11, 0, '3');
    expect(() => g.set(12, 0, 'x')).toThrow("'x' is not a number");
    expect(g.get(10, 5)).toBe(-1.5);
    expect(g.runs()).toEqual([
      { offset: 201005, values: [-1.5, 2] },
      { offset: 201100, values: [3] },
    ]);
    expect(() => g.tensor()).toThrow('applied as runs');
  });

  it('refuses a window of the wrong size', async () => {
    const g = new TensorGrid('float', [4, 4], null, async () => [1, 2]);
    await expect(g.load(0, 2, 0, 4)).rejects.toThrow('the server sent 2 values for a page of 8');
  });
});

describe('tensor editor wire values', () => {
  it('sends NaN and the infinities as the strings the server reads, not as null', () => {
    const g = new TensorGrid('float', [4], [1, 2, 3, 4]);
    g.set(0, 0, 'nan');
    g.set(0, 1, '-inf');
    g.set(0, 2, '+INF');
    const body = JSON.parse(JSON.stringify(g.tensor()));
    expect(body.values).toEqual(['nan', '-inf', 'inf', 4]);
    expect(JSON.parse(JSON.stringify(g.runs()))).toEqual([{ offset: 0, values: ['nan', '-inf', 'inf'] }]);
    // What the server sends back reads as the same values.
    for (const s of ['nan', 'inf', '-inf']) expect(formatCell(parseCell('float16', s))).toBe(s);
  });

  it('pages float16 and checks 4-bit integers against their range', async () => {
    const asked: number[][] = [];
    const g = new TensorGrid('float16', [300, 400], null, async (offset, limit, rows, stride) => {
      asked.push([offset, limit, rows, stride]);
      return Array.from({ length: limit * rows }, () => 'nan');
    });
    await g.load(0, 2, 398, 400);
    expect(asked).toEqual([[398, 2, 2, 400]]);
    g.set(1, 399, 'inf');
    expect(JSON.parse(JSON.stringify(g.runs()))).toEqual([{ offset: 799, values: ['inf'] }]);
    expect(parseCell('int4', '-8')).toBe(-8);
    expect(() => parseCell('int4', '8')).toThrow('8 is out of the range of int4 [-8, 7]');
    expect(() => parseCell('uint4', '16')).toThrow('out of the range of uint4 [0, 15]');
  });
});
