import { describe, expect, it } from 'vitest';
import { formatValue, parseDims, parseValue, quote, wireAttrValue } from '../../src/params/parse';

describe('parameter syntax', () => {
  it('reads scalars by attribute type', () => {
    expect(parseValue('int', ' -3 ')).toBe(-3);
    expect(parseValue('float', '1e-3')).toBe(0.001);
    expect(parseValue('float', '-inf')).toBe(-Infinity);
    expect(Number.isNaN(parseValue('float', 'nan') as number)).toBe(true);
    expect(parseValue('string', "'it\\'s'")).toBe("it's");
    expect(parseValue('string', "'back\\\\slash'")).toBe('back\\slash');
  });

  it('reads lists', () => {
    expect(parseValue('ints', '[1, 2]')).toEqual([1, 2]);
    expect(parseValue('ints', '[]')).toEqual([]);
    expect(parseValue('floats', '[0.5, 2, -1e2]')).toEqual([0.5, 2, -100]);
    expect(parseValue('strings', "['a', 'b\\'c']")).toEqual(['a', "b'c"]);
  });

  it('reads nested lists as tensors with their shape', () => {
    expect(parseValue('tensor', '[[1, 2], [3, 4]]', 'float')).toEqual({
      dtype: 'float',
      shape: [2, 2],
      values: [1, 2, 3, 4],
    });
    expect(parseValue('tensor', '7', 'int64')).toEqual({ dtype: 'int64', shape: [], values: [7] });
    expect(parseValue('tensor', '[[[1], [2]]]', 'int32')).toEqual({
      dtype: 'int32',
      shape: [1, 2, 1],
      values: [1, 2],
    });
  });

  it('names what is wrong and where', () => {
    expect(() => parseValue('ints', '[1, 2.5]')).toThrow('value[1]: expected an integer, got 2.5');
    expect(() => parseValue('ints', '[1, 2')).toThrow("unclosed '[' (opened at column 1");
    expect(() => parseValue('ints', '[1 2]')).toThrow("expected ',' or ']' but found '2' at column 4");
    expect(() => parseValue('string', 'abc')).toThrow(
      "'abc' is not a number (text is written in quotes: 'text') at column 1",
    );
    expect(() => parseValue('string', "'abc")).toThrow('unterminated string');
    expect(() => parseValue('int', '1 2')).toThrow("unexpected '2' after the value at column 3");
    expect(() => parseValue('tensor', '[[1, 2], [3]]', 'float')).toThrow(
      'value[1]: expected 2 elements like the first row (shape [2,2])',
    );
    expect(() => parseValue('tensor', '[[1], 2]', 'float')).toThrow('value[1]: expected 1 elements');
    expect(() => parseValue('int', '')).toThrow('missing value');
    expect(() => parseValue('ints', '3')).toThrow('expected a list like [1, 2], got 3');
    expect(() => parseValue('graph', '1')).toThrow("attributes of type 'graph' are not edited as text");
  });

  it('formats values so that they parse back to the same value', () => {
    const cases: Array<[string, unknown, string?]> = [
      ['int', 5],
      ['float', -0.25],
      ['float', Infinity],
      ['string', "it's a \\ test"],
      ['ints', [3, 3]],
      ['floats', [1.5, -2]],
      ['strings', ['x', "y'z"]],
      ['tensor', { dtype: 'float', shape: [2, 2], values: [1, 2, 3, 4] }, 'float'],
    ];
    for (const [type, value, dtype] of cases) {
      const text = formatValue(type, value as never);
      expect(parseValue(type, text, dtype), `${type}: ${text}`).toEqual(value);
    }
    expect(formatValue('ints', [1, 2])).toBe('[1, 2]');
    expect(formatValue('tensor', { dtype: 'float', shape: [2, 2], values: [1, 2, 3, 4] })).toBe(
      '[[1, 2], [3, 4]]',
    );
    expect(formatValue('tensor', { dtype: 'float', shape: [512, 512] })).toBe('<float [512, 512]>');
    expect(quote("a'b")).toBe("'a\\'b'");
    expect(formatValue('ints', [1, 2, 3, 4, 5, 6, 7, 8], 10)).toBe('[1, 2, 3,…');
  });

  it('shows non-finite floats the server sends as strings as numbers, and sends them back as strings', () => {
    expect(formatValue('float', 'inf')).toBe('inf');
    expect(formatValue('floats', ['nan', -1.5, '-inf'] as unknown as number[])).toBe('[nan, -1.5, -inf]');
    expect(formatValue('strings', ['nan'])).toBe("['nan']");
    const floats = parseValue('floats', '[nan, 2, -inf]');
    expect(wireAttrValue('floats', floats)).toEqual(['nan', 2, '-inf']);
    expect(wireAttrValue('float', parseValue('float', 'inf'))).toBe('inf');
    const t = parseValue('tensor', '[[nan, 1]]', 'float');
    expect(wireAttrValue('tensor', t)).toEqual({ dtype: 'float', shape: [1, 2], values: ['nan', 1] });
    expect(wireAttrValue('ints', [1, 2])).toEqual([1, 2]);
  });
});

describe('shapes', () => {
  it('reads integers and named dimensions', () => {
    expect(parseDims("['N', 3, 224, 224]")).toEqual(['N', 3, 224, 224]);
    expect(parseDims('[]')).toEqual([]);
    expect(() => parseDims('[1, -2]')).toThrow("dimension 1: expected an integer >= 0 or a 'name'");
    expect(() => parseDims('3')).toThrow('expected a list like [1, 3, 224, 224]');
  });
});
