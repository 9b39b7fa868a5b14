// The header of a NumPy .npy file (format versions 1-3): dtype, shape and order, checked against the
// data's length, so the initializer editor says what is wrong before anything is sent. The server parses
// the file again when it makes the tensor (src/io/npy.cpp); this side only reads and checks.

export interface NpyHeader {
  dtype: string; // ONNX element type name: float, double, float16, int64, ...
  shape: number[];
  dataOffset: number;
}

const DTYPES: Record<string, [string, number]> = {
  f4: ['float', 4],
  f8: ['double', 8],
  f2: ['float16', 2],
  i1: ['int8', 1],
  i2: ['int16', 2],
  i4: ['int32', 4],
  i8: ['int64', 8],
  u1: ['uint8', 1],
  u2: ['uint16', 2],
  u4: ['uint32', 4],
  u8: ['uint64', 8],
  b1: ['bool', 1],
};

/** Throws an Error naming what is wrong (magic, version, header field, dtype, order, data length). */
export function parseNpyHeader(buf: ArrayBuffer): NpyHeader {
  const b = new Uint8Array(buf);
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
  if (b.length < 10 || magic.some((m, i) => b[i] !== m))
    throw new Error('not a .npy file (no \\x93NUMPY magic)');
  const major = b[6];
  if (major < 1 || major > 3) throw new Error(`.npy format version ${major}.${b[7]} is not supported`);
  const view = new DataView(buf);
  const lenBytes = major === 1 ? 2 : 4;
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = 8 + lenBytes;
  if (start + headerLen > b.length) throw new Error('.npy header is cut short');
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(b.subarray(start, start + headerLen));
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(text)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(text)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined)
    throw new Error(`.npy header needs 'descr', 'fortran_order' and 'shape': ${text.trim()}`);
  if (fortran === 'True')
    throw new Error('.npy data is in Fortran order; save it in C order (numpy.ascontiguousarray)');
  const order = descr[0];
  const kind = DTYPES[descr.slice(1)];
  if (!kind || !'<>|='.includes(order)) throw new Error(`.npy dtype '${descr}' is not supported`);
  if (order === '>' && kind[1] > 1)
    throw new Error(`.npy dtype '${descr}' is big-endian; save it little-endian`);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length)
    .map((s) => {
      if (!/^\d+$/.test(s)) throw new Error(`.npy shape (${shapeText}) has '${s}'`);
      return Number(s);
    });
  const dataOffset = start + headerLen;
  const need = shape.reduce((x, y) => x * y, 1) * kind[1];
  if (b.length - dataOffset !== need)
    throw new Error(
      `.npy data holds ${b.length - dataOffset} bytes; ${kind[0]}[${shape.join(', ')}] needs ${need}`,
    );
  return { dtype: kind[0], shape, dataOffset };
}

/** Base64 of bytes (for the API's npy_base64), in chunks: String.fromCharCode takes limited arguments. */
export function toBase64(buf: ArrayBuffer): string {
  const b = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}
