import { describe, expect, it } from 'vitest';
import { fillsFor } from '../../src/ui/initializers';

describe('generated initializers', () => {
  it('offers each type the fills the seed allows it', () => {
    const gen = (d: string) =>
      ['normal', 'zeros', 'uniform_int_pos', 'uniform_int_neg'].filter((f) => fillsFor(d).has(f));
    expect(gen('float')).toEqual(['normal', 'zeros']);
    expect(gen('bfloat16')).toEqual(['normal', 'zeros']);
    expect(gen('int8')).toEqual(['zeros', 'uniform_int_pos', 'uniform_int_neg']);
    expect(gen('uint16')).toEqual(['zeros', 'uniform_int_pos']);
    for (const small of ['float8e4m3fn', 'float8e5m2fnuz', 'float4e2m1', 'int4', 'uint4', 'bool'])
      expect(gen(small)).toEqual(['zeros']);
    expect(gen('float8e8m0')).toEqual([]); // no zero, no generator: values typed in
    for (const d of ['float8e5m2', 'int4', 'float8e8m0'])
      for (const f of ['values', 'npy', 'external']) expect(fillsFor(d).has(f)).toBe(true);
  });
});
