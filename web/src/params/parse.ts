// Parameter syntax of the parameter editor: numbers, 'text' (with \' and \\ escapes), lists `[1, 2]`
// and nested lists `[[1, 2], [3, 4]]` for tensors. Errors name what is wrong and the column.
import type { AttrType, AttrValue, TensorValue } from '../api/types';

type Tree = number | string | Tree[];

export class ParseError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(`${message} at column ${column + 1}`);
  }
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseAll(): Tree {
    const v = this.value();
    this.skip();
    if (this.i < this.s.length)
      throw new ParseError(`unexpected '${this.s[this.i]}' after the value`, this.i);
    return v;
  }

  private skip(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  private value(): Tree {
    this.skip();
    if (this.i >= this.s.length) throw new ParseError('missing value', this.i);
    const c = this.s[this.i];
    if (c === '[') return this.list();
    if (c === "'" || c === '"') return this.string(c);
    return this.number();
  }

  private list(): Tree[] {
    const start = this.i++;
    const items: Tree[] = [];
    this.skip();
    if (this.s[this.i] === ']') {
      this.i++;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.skip();
      const c = this.s[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === ']') {
        this.i++;
        return items;
      }
      if (c === undefined) throw new ParseError("unclosed '[' (opened", start);
      throw new ParseError(`expected ',' or ']' but found '${c}'`, this.i);
    }
  }

  private string(quote: string): string {
    const start = this.i++;
    let out = '';
    while (this.i < this.s.length) {
      const c = this.s[this.i++];
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.i++];
      if (e === undefined) break;
      out += e === 'n' ? '\n' : e === 't' ? '\t' : e;
    }
    throw new ParseError('unterminated string (opened', start);
  }

  private number(): number {
    const m = /^[+-]?(inf|nan|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/i.exec(this.s.slice(this.i));
    if (!m) {
      const word = /^[^\s,\]]+/.exec(this.s.slice(this.i))?.[0] ?? this.s[this.i];
      throw new ParseError(`'${word}' is not a number (text is written in quotes: 'text')`, this.i);
    }
    this.i += m[0].length;
    const t = m[0].toLowerCase();
    if (t.endsWith('inf')) return t.startsWith('-') ? -Infinity : Infinity;
    if (t.endsWith('nan')) return NaN;
    return Number(m[0]);
  }
}

export function parseTree(text: string): Tree {
  return new Parser(text).parseAll();
}

function expectInt(v: Tree, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new Error(`${where}: expected an integer, got ${show(v)}`);
  return v;
}
function expectNumber(v: Tree, where: string): number {
  if (typeof v !== 'number') throw new Error(`${where}: expected a number, got ${show(v)}`);
  return v;
}
function expectString(v: Tree, where: string): string {
  if (typeof v !== 'string') throw new Error(`${where}: expected 'text' in quotes, got ${show(v)}`);
  return v;
}
function expectList(v: Tree, where: string): Tree[] {
  if (!Array.isArray(v)) throw new Error(`${where}: expected a list like [1, 2], got ${show(v)}`);
  return v;
}
function show(v: Tree): string {
  return Array.isArray(v) ? 'a list' : typeof v === 'string' ? `'${v}'` : String(v);
}

const INT_DTYPES = new Set([
  'int4',
  'uint4',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'bool',
]);

/** A nested list as a tensor: its shape (rectangular, or an error naming the ragged row) and values. */
export function treeToTensor(tree: Tree, dtype: string): TensorValue {
  const shape: number[] = [];
  for (let t: Tree = tree; Array.isArray(t); t = t[0]) {
    shape.push(t.length);
    if (t.length === 0) break;
  }
  const values: Array<number | string> = [];
  const walk = (t: Tree, depth: number, where: string): void => {
    if (depth === shape.length) {
      if (Array.isArray(t)) throw new Error(`${where}: nested deeper than the first row (shape [${shape}])`);
      if (dtype === 'string') values.push(expectString(t, where));
      else values.push(INT_DTYPES.has(dtype) ? expectInt(t, where) : expectNumber(t, where));
      return;
    }
    if (!Array.isArray(t) || t.length !== shape[depth])
      throw new Error(`${where}: expected ${shape[depth]} elements like the first row (shape [${shape}])`);
    t.forEach((x, k) => walk(x, depth + 1, `${where}[${k}]`));
  };
  walk(tree, 0, 'value');
  return { dtype, shape, values };
}

/** Parses the editor's text for an attribute of ONNX type `type`; throws with a message on bad input. */
export function parseValue(type: AttrType, text: string, dtype = 'float'): AttrValue {
  const tree = parseTree(text);
  switch (type) {
    case 'int':
      return expectInt(tree, 'value');
    case 'float':
      return expectNumber(tree, 'value');
    case 'string':
      return expectString(tree, 'value');
    case 'ints':
      return expectList(tree, 'value').map((v, k) => expectInt(v, `value[${k}]`));
    case 'floats':
      return expectList(tree, 'value').map((v, k) => expectNumber(v, `value[${k}]`));
    case 'strings':
      return expectList(tree, 'value').map((v, k) => expectString(v, `value[${k}]`));
    case 'tensor':
      return treeToTensor(tree, dtype);
    default:
      throw new Error(`attributes of type '${type}' are not edited as text`);
  }
}

/** A value as the server reads it: JSON has no NaN or infinities (JSON.stringify writes null), so those
 *  travel as the strings "nan", "inf" and "-inf", as the server writes them too. */
export function wireValue<T>(v: T): T | string {
  if (typeof v !== 'number' || Number.isFinite(v)) return v;
  return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
}

/** "nan", "inf", "-inf" as the server sends non-finite floats, back to numbers. */
function unwire(v: unknown): unknown {
  if (v === 'nan') return NaN;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  return v;
}

/** An attribute value as the server reads it: non-finite floats (of a float, a floats list or a float
 *  tensor) as their strings. */
export function wireAttrValue(type: AttrType, value: AttrValue): AttrValue {
  if (type === 'float') return wireValue(value as number) as AttrValue;
  if (type === 'floats') return (value as number[]).map(wireValue) as AttrValue;
  if (type === 'tensor') {
    const t = value as TensorValue;
    return t.values && t.dtype !== 'string' ? { ...t, values: t.values.map(wireValue) } : t;
  }
  return value;
}

export function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  return String(n);
}

function formatScalar(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  return String(v);
}

function nest(values: unknown[], shape: number[]): string {
  if (shape.length === 0) return formatScalar(values[0]);
  const inner = shape.slice(1).reduce((a, b) => a * b, 1);
  const parts: string[] = [];
  for (let k = 0; k < shape[0]; k++)
    parts.push(nest(values.slice(k * inner, (k + 1) * inner), shape.slice(1)));
  return `[${parts.join(', ')}]`;
}

function clip(s: string, maxLen: number): string {
  return s.length <= maxLen ? s : s.slice(0, Math.max(1, maxLen - 1)) + '…';
}

/** Formats a value in the syntax parseValue reads (so editing round-trips), clipped to maxLen. */
export function formatValue(type: AttrType, value: AttrValue | undefined, maxLen = Infinity): string {
  if (value === null || value === undefined) return '';
  // Non-finite floats arrive as strings; shown as the numbers they are (nan, inf, -inf), not as text.
  if (type === 'float') value = unwire(value) as AttrValue;
  if (type === 'floats' && Array.isArray(value)) value = value.map(unwire) as AttrValue;
  if (type === 'tensor' && value && typeof value === 'object' && !Array.isArray(value)) {
    const t = value as TensorValue;
    if (t.values && t.dtype !== 'string') value = { ...t, values: t.values.map(unwire) } as AttrValue;
  }
  if (type === 'graph' || type === 'graphs') return `<${value} graph${value === 1 ? '' : 's'}>`;
  if (Array.isArray(value)) return clip(`[${value.map(formatScalar).join(', ')}]`, maxLen);
  if (typeof value === 'object') {
    const t = value as TensorValue;
    if (!t.values) return `<${t.dtype} [${t.shape.join(', ')}]>`;
    return clip(nest(t.values, t.shape), maxLen);
  }
  return clip(formatScalar(value), maxLen);
}

/** A shape in the parameter syntax: integers >= 0 and quoted names for symbolic dimensions. */
export function parseDims(text: string): Array<number | string> {
  const t = parseTree(text);
  if (!Array.isArray(t)) throw new Error('expected a list like [1, 3, 224, 224]');
  return t.map((d, k) => {
    if (typeof d === 'string' && d) return d;
    if (typeof d === 'number' && Number.isInteger(d) && d >= 0) return d;
    throw new Error(`dimension ${k}: expected an integer >= 0 or a 'name'`);
  });
}
