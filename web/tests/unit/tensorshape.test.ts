// The tensor editor's shape row: the shape typed in (checked as the server checks it: whole dimensions
// of 0 or more, a count that does not overflow, at most 1 GiB) and what the change does to the values.
import { describe, expect, it } from 'vitest';
import {
  MAX_TENSOR_BYTES,
  TENSOR_DTYPES,
  parseShapeText,
  resizedValues,
  retypedValues,
  shapeChangeNote,
} from '../../src/ui/tensoreditor';

describe('tensor editor shape', () => {
  it('reads the list syntax, bare lists and 2x3, a scalar as []', () => {
    expect(parseShapeText('[2, 3]', 'float')).toEqual([2, 3]);
    expect(parseShapeText(' 4,1 ', 'float')).toEqual([4, 1]);
    expect(parseShapeText('2x3x0', 'int8')).toEqual([2, 3, 0]);
    expect(parseShapeText('[]', 'float')).toEqual([]);
    expect(parseShapeText('', 'float')).toEqual([]);
  });

  it('names the dimension that is wrong', () => {
    expect(() => parseShapeText('[2, -1]', 'float')).toThrow('dimension 1 is -1; dimensions are 0 or more');
    expect(() => parseShapeText('[2, 1.5]', 'float')).toThrow("dimension 1 ('1.5') is not a whole number");
    expect(() => parseShapeText('[2,, 3]', 'float')).toThrow("dimension 1 ('') is not a whole number");
    expect(() => parseShapeText('[a]', 'float')).toThrow("dimension 0 ('a') is not a whole number");
  });

  it('refuses a count that overflows and a size past what the studio holds', () => {
    expect(() => parseShapeText('[1099511627776, 1099511627776]', 'float')).toThrow(
      'has more elements than a tensor can count',
    );
    // 2^28 floats are exactly 1 GiB; one more row is too many. 4-bit types hold twice as many.
    expect(parseShapeText('[16384, 16384]', 'float')).toEqual([16384, 16384]);
    expect(() => parseShapeText('[16385, 16384]', 'float')).toThrow(
      `would take ${16385 * 16384 * 4} bytes; the studio holds at most ${MAX_TENSOR_BYTES} a tensor`,
    );
    expect(parseShapeText('[32768, 65536]', 'int4')).toEqual([32768, 65536]);
    expect(() => parseShapeText('[32768, 32768]', 'double')).toThrow('would take 8589934592 bytes');
  });

  it('says what happens to the values', () => {
    expect(shapeChangeNote([2, 3], [3, 2], 'float')).toBe('6 elements: the values stay, in the same order');
    expect(shapeChangeNote([2, 2], [2, 3], 'int8')).toBe(
      '4 -> 6 elements: the values stay first, the 2 new ones are zeros',
    );
    expect(shapeChangeNote([3], [5], 'string')).toBe(
      '3 -> 5 elements: the values stay first, the 2 new ones are empty strings',
    );
    expect(shapeChangeNote([5], [2], 'float')).toBe('5 -> 2 elements: the first 2 values stay, 3 are cut');
    expect(shapeChangeNote([1], [], 'float')).toBe('1 element: the values stay, in the same order');
  });

  it("resizes values in the browser as the server does: the type's zero added, or cut", () => {
    expect(resizedValues([1, 2], 4, 'int64')).toEqual([1, 2, 0, 0]);
    expect(resizedValues(['a'], 2, 'string')).toEqual(['a', '']);
    expect(resizedValues([4], 3, 'float8e8m0')).toEqual([4, 1, 1]);
    expect(resizedValues([true], 2, 'bool')).toEqual([true, false]);
    expect(resizedValues([1, 2, 3], 1, 'float')).toEqual([1]);
    expect(resizedValues([], 0, 'float')).toEqual([]);
  });
});

describe('a tensor not set yet given another element type', () => {
  it('carries each value over where the new type holds it, else the type zero', () => {
    expect(retypedValues([1, 2.5, -3, 300], 'float', 'int8')).toEqual([1, 0, -3, 0]);
    expect(retypedValues([1, 2.5, -3], 'float', 'float8e8m0')).toEqual([1, 4, 1]);
    expect(retypedValues([1, 0, 7], 'int64', 'bool')).toEqual([true, false, false]);
    expect(retypedValues([true, false], 'bool', 'float')).toEqual([1, 0]);
    expect(retypedValues([0.1, 70000], 'float', 'float16')).toEqual([0.1, 0]);
    expect(retypedValues(['4', 'x'], 'string', 'int32')).toEqual([4, 0]);
    expect(retypedValues([1.5, NaN], 'double', 'string')).toEqual(['1.5', 'nan']);
    expect(retypedValues([], 'float', 'uint8')).toEqual([]);
  });

  it('offers every type the editor reads', () => {
    for (const d of TENSOR_DTYPES) expect(retypedValues([1], 'float', d)).toHaveLength(1);
    expect(TENSOR_DTYPES).toContain('float8e8m0');
    expect(TENSOR_DTYPES[0]).toBe('float');
  });
});
