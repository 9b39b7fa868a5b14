import { describe, expect, it } from 'vitest';
import { parseNpyHeader, toBase64 } from '../../src/params/npy';

/** A .npy file (version 1) with `header` padded as numpy pads it, then `data` bytes. */
function npy(header: string, data: number, version = 1): ArrayBuffer {
  const pre = version === 1 ? 10 : 12;
  let h = header;
  while ((pre + h.length + 1) % 64) h += ' ';
  h += '\n';
  const out = new Uint8Array(pre + h.length + data);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const v = new DataView(out.buffer);
  if (version === 1) v.setUint16(8, h.length, true);
  else v.setUint32(8, h.length, true);
  for (let i = 0; i < h.length; i++) out[pre + i] = h.charCodeAt(i);
  return out.buffer;
}

describe('.npy header', () => {
  it('reads dtype, shape and the data offset', () => {
    const f = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
    expect(parseNpyHeader(f)).toEqual({ dtype: 'float', shape: [2, 3], dataOffset: f.byteLength - 24 });
    expect((f.byteLength - 24) % 64).toBe(0);
    expect(parseNpyHeader(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 40, 2))).toEqual({
      dtype: 'int64',
      shape: [5],
      dataOffset: 128,
    });
    expect(parseNpyHeader(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1)).shape).toEqual(
      [],
    );
    expect(parseNpyHeader(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }", 0)).dtype).toBe(
      'uint8',
    );
  });

  it('says what is wrong', () => {
    const bad = (header: string, data: number) => () => parseNpyHeader(npy(header, data));
    expect(bad("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24)).toThrow(
      '.npy data is in Fortran order; save it in C order (numpy.ascontiguousarray)',
    );
    expect(bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20)).toThrow(
      '.npy data holds 20 bytes; float[2, 3] needs 24',
    );
    expect(bad("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8)).toThrow(
      ".npy dtype '<c8' is not supported",
    );
    expect(bad("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4)).toThrow('big-endian');
    expect(bad("{'descr': '<f4', 'shape': (1,), }", 4)).toThrow("needs 'descr', 'fortran_order' and 'shape'");
    expect(() =>
      parseNpyHeader(new TextEncoder().encode('PK\x03\x04 not numpy').buffer as ArrayBuffer),
    ).toThrow('not a .npy file');
  });

  it('encodes base64 past the argument limit of fromCharCode', () => {
    const b = new Uint8Array(100000).map((_, i) => i % 251);
    expect(Buffer.from(toBase64(b.buffer), 'base64').equals(Buffer.from(b))).toBe(true);
  });
});
