// The tensor editor: a grid of a tensor's values, for values too large to type as one nested list. It
// shows two dimensions at a time (rows: the second last, columns: the last; a rank-1 tensor is one row)
// and, for higher ranks, an index per leading dimension picks the slice. Cells are checked as they are
// typed, against the element type. A tensor of up to EDIT_LIMIT elements is loaded when the editor
// opens and handed back whole (replace_initializer, or a tensor attribute); a larger one is *paged*:
// only the page shown is fetched (a window of rows, GET initializers/{name}?offset&limit&rows&stride),
// and Apply sends the edited cells alone, as runs of consecutive elements (set_initializer_values).
import type { TensorValue } from '../api/types';
import {
  E8M0,
  E8M0_ROUNDS,
  MINIFLOATS,
  roundE8M0,
  roundMiniFloat,
  type E8M0Round,
} from '../params/minifloat';
import { wireValue } from '../params/parse';
import { clear, h } from './dom';

/** Elements the editor loads whole; a larger tensor is paged (fetched a page at a time). */
export const EDIT_LIMIT = 1 << 16;
/** Cells drawn per page of the grid (rows x columns shown), so a 256x256 slice stays responsive. */
const PAGE_ROWS = 64;
const PAGE_COLS = 32;

export type Scalar = number | string | boolean;

const INT_RANGE: Record<string, [number, number]> = {
  int4: [-8, 7],
  uint4: [0, 15],
  int8: [-128, 127],
  uint8: [0, 255],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** A cell's text as a value of `dtype` (float8e8m0 rounded by `round`); throws with a sentence naming
 *  what is wrong. */
export function parseCell(dtype: string, text: string, round: E8M0Round = 'up'): Scalar {
  const t = text.trim();
  if (dtype === 'string') return text;
  if (dtype === 'bool') {
    if (/^(1|true)$/i.test(t)) return true;
    if (/^(0|false)$/i.test(t)) return false;
    throw new Error(`'${t}' is not a bool: write 0, 1, true or false`);
  }
  const range = INT_RANGE[dtype];
  if (range) {
    if (!/^[+-]?\d+$/.test(t)) throw new Error(`'${t}' is not an integer (${dtype})`);
    const v = Number(t);
    if (v < range[0] || v > range[1])
      throw new Error(`${t} is out of the range of ${dtype} [${range[0]}, ${range[1]}]`);
    return v;
  }
  const m = /^[+-]?(inf|nan)$/i.exec(t);
  if (m) {
    const v = m[1].toLowerCase() === 'nan' ? NaN : t.startsWith('-') ? -Infinity : Infinity;
    if (dtype === E8M0) return roundE8M0(v, round);
    return MINIFLOATS[dtype] ? roundMiniFloat(dtype, v) : v;
  }
  // float8e8m0 holds powers of two: also written 2^k (how the editor shows the far ones).
  const pow = /^2\s*(\^|\*\*)\s*([+-]?\d+)$/.exec(t);
  if (pow && dtype === E8M0) return roundE8M0(2 ** Math.max(-200, Math.min(200, Number(pow[2]))), round);
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) throw new Error(`'${t}' is not a number`);
  const v = Number(t);
  if (dtype === 'float16' && Math.abs(v) > 65504)
    throw new Error(`${t} is out of the range of float16 (largest finite 65504)`);
  // float8 and float4 round and saturate as the server stores them: the cell shows what is kept.
  if (MINIFLOATS[dtype]) return roundMiniFloat(dtype, v);
  if (dtype === E8M0) return roundE8M0(v, round);
  return v;
}

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** `x` rounded to the nearest value of a floating-point `dtype` (what the server stores). */
function roundTo(dtype: string, x: number): number {
  if (dtype === 'double') return x;
  if (MINIFLOATS[dtype]) return roundMiniFloat(dtype, x);
  if (dtype === E8M0) return roundE8M0(x);
  F32[0] = x;
  if (dtype === 'bfloat16') {
    // Round to nearest even on the 16 bits kept.
    U32[0] = (U32[0] + 0x7fff + ((U32[0] >>> 16) & 1)) & 0xffff0000;
    return F32[0];
  }
  if (dtype === 'float16') {
    const a = Math.abs(x);
    if (a >= 65520) return Math.sign(x) * Infinity;
    // Spacing of float16 values around `a`: 2^(e-10), subnormals 2^-24.
    const e = a < 2 ** -14 ? -14 : Math.floor(Math.log2(a));
    const q = 2 ** (e - 10);
    return Math.sign(x) * Math.round(a / q) * q;
  }
  return F32[0];
}

/** A cell's text: for floating-point types the shortest decimal that reads back as the same value of
 *  the type (a float read as 0.10000000149011612 shows as 0.1; at most 9 significant digits for float,
 *  17 for double), with an exponent for very large and small magnitudes. */
export function formatCell(v: Scalar, dtype = ''): string {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
    if (dtype === E8M0) return formatE8M0(v);
    if (FLOATS.has(dtype) && v !== 0) return shortestFloat(dtype, v);
  }
  return String(v);
}

const FLOATS = new Set(['float', 'double', 'float16', 'bfloat16', ...Object.keys(MINIFLOATS)]);

/** A float8e8m0 value (a power of two): its digits from 2^-10 to 2^20 (0.0009765625 to 1048576), beyond
 *  them 2^k, which is exact and short where the digits are neither (2^-127 is 5.877471754111438e-39). */
function formatE8M0(v: number): string {
  const k = Math.round(Math.log2(v));
  if (2 ** k !== v) return String(v); // not a value of the type (not stored yet)
  return k >= -10 && k <= 20 ? String(v) : `2^${k}`;
}

function shortestFloat(dtype: string, v: number): string {
  const want = roundTo(dtype, v);
  const most = dtype === 'double' ? 17 : 9;
  for (let p = 1; p <= most; p++) {
    const s = v.toPrecision(p);
    // A saturating type reads a text beyond its range as its largest value: not a text for it.
    const beyond = MINIFLOATS[dtype] && Math.abs(Number(s)) > MINIFLOATS[dtype].max;
    if (roundTo(dtype, Number(s)) === want && !beyond) return tidy(s);
  }
  return tidy(v.toPrecision(most));
}

/** '1.50e-7' -> '1.5e-7', '120.0' -> '120', and plain digits where JavaScript would use them. */
function tidy(s: string): string {
  const [m, e] = s.split('e');
  const mant = m.includes('.') ? m.replace(/0+$/, '').replace(/\.$/, '') : m;
  if (e === undefined) return mant;
  const exp = Number(e);
  // toPrecision writes 1e+21 as is but 1.5e+2 for 150 at p=2: plain digits while they stay short.
  if (exp >= 0 && exp < 21) return String(Number(`${mant}e${exp}`));
  return `${mant}e${exp}`;
}

/** The width of a column of cells (in ch) for the longest text in it, within bounds. */
export function cellWidth(texts: string[]): number {
  let w = 4;
  for (const t of texts) w = Math.max(w, t.length);
  return Math.min(w + 2, 28);
}

/** The most bytes the server holds of one tensor: a shape change past it is refused (also there). */
export const MAX_TENSOR_BYTES = 2 ** 30;

/** Bits an element of `dtype` takes (strings counted as one byte, as the server counts them). */
function elementBits(dtype: string): number {
  if (/^(u?int4|float4e2m1)$/.test(dtype)) return 4;
  if (/^(u?int8|bool|string|float8.*)$/.test(dtype)) return 8;
  if (/^(u?int16|float16|bfloat16)$/.test(dtype)) return 16;
  if (/^(u?int64|double)$/.test(dtype)) return 64;
  return 32;
}

/** A new shape typed in the editor ("[2, 3]", "2, 3", "2x3", "[]" for a scalar), checked for the tensor:
 *  whole dimensions of 0 or more, an element count that does not overflow, and a size the server holds
 *  (1 GiB). Throws with a sentence naming what is wrong. */
export function parseShapeText(text: string, dtype: string): number[] {
  const t = text.trim().replace(/^\[/, '').replace(/\]$/, '').trim();
  const parts = t ? t.split(/\s*[,x×]\s*/) : [];
  const dims = parts.map((p, k) => {
    if (!/^[+-]?\d+$/.test(p)) throw new Error(`dimension ${k} ('${p}') is not a whole number`);
    const d = Number(p);
    if (d < 0) throw new Error(`dimension ${k} is ${d}; dimensions are 0 or more`);
    return d;
  });
  const n = dims.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(n))
    throw new Error(`[${dims.join(', ')}] has more elements than a tensor can count`);
  const bytes = Math.ceil((n * elementBits(dtype)) / 8);
  if (bytes > MAX_TENSOR_BYTES)
    throw new Error(
      `[${dims.join(', ')}] would take ${bytes} bytes; the studio holds at most ${MAX_TENSOR_BYTES} a tensor`,
    );
  return dims;
}

/** The element types a tensor typed in the editor may have (as the initializer form offers them). */
export const TENSOR_DTYPES = [
  'float',
  'double',
  'float16',
  'bfloat16',
  'int64',
  'int32',
  'int16',
  'int8',
  'uint64',
  'uint32',
  'uint16',
  'uint8',
  'int4',
  'uint4',
  'bool',
  'string',
  'float8e4m3fn',
  'float8e4m3fnuz',
  'float8e5m2',
  'float8e5m2fnuz',
  'float4e2m1',
  'float8e8m0',
];

/** The type's value for a new element: its zero (empty strings, false; 1 for float8e8m0, which has no
 *  zero). */
function fillOf(dtype: string): Scalar {
  return dtype === 'string' ? '' : dtype === 'float8e8m0' ? 1 : dtype === 'bool' ? false : 0;
}

/** `values` of type `from` as values of type `to` (a tensor not set yet given another element type):
 *  each read again from its text, rounded as `to` stores it; one `to` cannot hold (2.5 as an integer,
 *  300 as int8, a negative float8e8m0, text as a number) becomes the type's zero. */
export function retypedValues(values: Scalar[], from: string, to: string): Scalar[] {
  return values.map((v) => {
    try {
      return parseCell(to, formatCell(v, from));
    } catch {
      return fillOf(to);
    }
  });
}

/** The element type of a tensor not set yet: a change calls `retype` (the caller reopens the editor on
 *  the values retypedValues gives). */
export function dtypeRow(dtype: string, retype: (dtype: string) => void): HTMLElement {
  const select = h(
    'select',
    { 'data-testid': 'tensor-dtype', onchange: () => retype(select.value) },
    ...TENSOR_DTYPES.map((d) => h('option', { value: d, text: d, selected: d === dtype })),
  );
  return h('div', { className: 'tensor-dtype-row' }, 'element type ', select);
}

/** `values` grown to `n` with the type's zero (empty strings; 1 for float8e8m0, which has no zero) or
 *  cut: a shape change made in the browser (a list, or a tensor attribute not set yet), as the server's
 *  reshape_* commands make it. */
export function resizedValues(values: Scalar[], n: number, dtype: string): Scalar[] {
  const fill = fillOf(dtype);
  const out = values.slice(0, n);
  while (out.length < n) out.push(fill);
  return out;
}

/** What a shape change does to the values, said before it is applied. */
export function shapeChangeNote(from: number[], to: number[], dtype: string): string {
  const count = (s: number[]) => s.reduce((a, b) => a * b, 1);
  const [a, b] = [count(from), count(to)];
  const fill =
    dtype === 'string' ? 'empty strings' : dtype === 'float8e8m0' ? '1 (the type has no zero)' : 'zeros';
  if (a === b) return `${a} element${a === 1 ? '' : 's'}: the values stay, in the same order`;
  if (b > a) return `${a} -> ${b} elements: the values stay first, the ${b - a} new ones are ${fill}`;
  return `${a} -> ${b} elements: the first ${b} values stay, ${a - b} are cut`;
}

/** Fetches `rows` runs of `limit` values, the i-th from flat element `offset + i * stride`. */
export type WindowLoader = (offset: number, limit: number, rows: number, stride: number) => Promise<Scalar[]>;

/** The values of a tensor and where each cell of a two-dimensional view of it lies in them: all of
 *  them (loaded whole), or the pages fetched so far through a loader (paged). */
export class TensorGrid {
  private readonly all: Scalar[] | null;
  private readonly fetched = new Map<number, Scalar>();
  /** Cells set by the user, by flat index (what a paged Apply sends). */
  readonly edits = new Map<number, Scalar>();
  /** Index of each leading dimension (all but the last two) of the slice shown. */
  lead: number[];
  /** How a float8e8m0 value typed in is rounded (Cast's round_mode; the editor's selector). */
  round: E8M0Round = 'up';

  constructor(
    readonly dtype: string,
    readonly shape: number[],
    values: Scalar[] | null,
    private readonly loader?: WindowLoader,
  ) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (values && values.length !== n)
      throw new Error(
        `the tensor has ${n} elements (shape [${shape.join(', ')}]) but ${values.length} values were loaded`,
      );
    if (!values && !loader) throw new Error('a paged tensor needs a loader');
    this.all = values ? [...values] : null;
    this.lead = new Array(Math.max(0, shape.length - 2)).fill(0);
  }

  get paged(): boolean {
    return this.all === null;
  }
  get rows(): number {
    return this.shape.length >= 2 ? this.shape[this.shape.length - 2] : 1;
  }
  get cols(): number {
    return this.shape.length >= 1 ? this.shape[this.shape.length - 1] : 1;
  }

  /** Flat index of cell (r, c) of the slice picked by `lead`. */
  index(r: number, c: number): number {
    let base = 0;
    this.lead.forEach((k, d) => (base = base * this.shape[d] + k));
    return (base * this.rows + r) * this.cols + c;
  }

  /** The cell's value; undefined in a paged grid until its page is loaded. */
  get(r: number, c: number): Scalar | undefined {
    const i = this.index(r, c);
    const edited = this.edits.get(i);
    if (edited !== undefined) return edited;
    return this.all ? this.all[i] : this.fetched.get(i);
  }

  /** Fetches what a paged grid has not yet of rows [r0, r1) x columns [c0, c1) of the slice: one
   *  request of a run per row. Values fetched are kept, so paging back costs nothing. */
  async load(r0: number, r1: number, c0: number, c1: number): Promise<void> {
    if (!this.all && r1 > r0 && c1 > c0) {
      let first = r0;
      while (
        first < r1 &&
        this.fetched.has(this.index(first, c0)) &&
        this.fetched.has(this.index(first, c1 - 1))
      )
        first++;
      if (first === r1) return;
      const width = c1 - c0;
      const got = await this.loader!(this.index(first, c0), width, r1 - first, this.cols);
      if (got.length !== width * (r1 - first))
        throw new Error(`the server sent ${got.length} values for a page of ${width * (r1 - first)}`);
      for (let r = first; r < r1; r++)
        for (let c = c0; c < c1; c++) this.fetched.set(this.index(r, c), got[(r - first) * width + c - c0]);
    }
  }

  /** Sets cell (r, c) from its text; throws (the value unchanged) when the text is not a value. */
  set(r: number, c: number, text: string): void {
    const v = parseCell(this.dtype, text, this.round);
    const i = this.index(r, c);
    if (this.all) this.all[i] = v;
    this.edits.set(i, v);
  }

  /** Every value, the edited ones included (a grid loaded whole). */
  values(): Scalar[] {
    if (!this.all) throw new Error('a paged tensor is not held whole');
    return [...this.all];
  }

  /** The whole tensor (a grid loaded whole). */
  tensor(): TensorValue {
    if (!this.all) throw new Error('a paged tensor is applied as runs of edited values');
    const values = this.dtype === 'string' ? [...this.all] : this.all.map(wireValue);
    return { dtype: this.dtype, shape: [...this.shape], values: values as TensorValue['values'] };
  }

  /** The edited cells as runs of consecutive elements, in order: what set_initializer_values takes. */
  runs(): Array<{ offset: number; values: Scalar[] }> {
    const out: Array<{ offset: number; values: Scalar[] }> = [];
    for (const i of [...this.edits.keys()].sort((a, b) => a - b)) {
      const last = out[out.length - 1];
      const v = this.dtype === 'string' ? this.edits.get(i)! : wireValue(this.edits.get(i)!);
      if (last && last.offset + last.values.length === i) last.values.push(v);
      else out.push({ offset: i, values: [v] });
    }
    return out;
  }
}

/** Scrolling stops at cell edges just past the sticky row numbers and column numbers (the scroller's
 *  scroll-snap, style.css), so no column or row is left half under them: the scroll padding is their
 *  size, known once the table is laid out. The end gets room enough for the furthest scroll position
 *  to be such an edge too (else it would be wherever the content ends). */
function snapBesideHeaders(scroller: HTMLElement, table: HTMLTableElement): void {
  requestAnimationFrame(() => {
    const corner = table.rows[0]?.cells[0];
    const row = table.rows[1];
    if (!corner || !row) return;
    const head = corner.getBoundingClientRect();
    const box = scroller.getBoundingClientRect();
    scroller.style.scrollPaddingLeft = `${head.width}px`;
    scroller.style.scrollPaddingTop = `${head.height}px`;
    scroller.style.paddingRight = scroller.style.paddingBottom = '0px';
    // Where the scroll position puts each column (row) beside the numbers.
    const xs = [...row.cells]
      .slice(1)
      .map((c) => c.getBoundingClientRect().left - box.left + scroller.scrollLeft);
    const ys = [...table.rows]
      .slice(1)
      .map((r) => r.getBoundingClientRect().top - box.top + scroller.scrollTop);
    const room = (starts: number[], size: number, max: number) => {
      const at = starts.map((s) => s - size).find((s) => s >= max - 0.5);
      return at === undefined ? 0 : at - max;
    };
    const right = room(xs, head.width, scroller.scrollWidth - scroller.clientWidth);
    const bottom = room(ys, head.height, scroller.scrollHeight - scroller.clientHeight);
    scroller.style.paddingRight = `${right}px`;
    scroller.style.paddingBottom = `${bottom}px`;
  });
}

/** The shape row: the new shape typed in, what it does to the values, and the button that applies it
 *  (`reshape`, one undo step; the caller reopens the editor on the result). Cells edited but not applied
 *  go along: `reshape` applies them in the same step (grid.edits), before the shape changes. */
function shapeRow(
  grid: TensorGrid,
  err: HTMLElement,
  reshape: (shape: number[]) => Promise<void>,
): HTMLElement {
  const note = h('span', { className: 'tensor-shape-note', 'data-testid': 'tensor-shape-note' });
  const input = h('input', {
    type: 'text',
    value: `[${grid.shape.join(', ')}]`,
    title: 'The new shape: the same count keeps the values; a larger one fills, a smaller one cuts',
    'data-testid': 'tensor-shape',
    oninput: () => {
      try {
        note.textContent = shapeChangeNote(grid.shape, parseShapeText(input.value, grid.dtype), grid.dtype);
        input.classList.remove('bad');
      } catch (e) {
        note.textContent = (e as Error).message;
        input.classList.add('bad');
      }
    },
  });
  const button = h('button', {
    text: 'Change shape',
    'data-testid': 'tensor-reshape',
    onclick: () => {
      try {
        const dims = parseShapeText(input.value, grid.dtype);
        if (dims.join() === grid.shape.join() && dims.length === grid.shape.length) return;
        err.textContent = '';
        reshape(dims).catch((e: unknown) => (err.textContent = String((e as Error).message ?? e)));
      } catch (e) {
        err.textContent = (e as Error).message;
      }
    },
  });
  return h('div', { className: 'tensor-shape-row' }, 'shape ', input, button, note);
}

/** float8e8m0's round mode for the values typed from now on (Cast's round_mode): cells typed before keep
 *  the value they were rounded to. */
function roundRow(grid: TensorGrid): HTMLElement {
  const select = h(
    'select',
    {
      'data-testid': 'tensor-round',
      title: 'How a value between two powers of two is stored (ONNX Cast round_mode)',
      onchange: () => (grid.round = select.value as E8M0Round),
    },
    ...E8M0_ROUNDS.map((m) =>
      h('option', {
        value: m,
        text: m === 'nearest' ? 'nearest (up from 1.5x)' : m,
        selected: m === grid.round,
      }),
    ),
  );
  return h('div', { className: 'tensor-round-row' }, 'round typed values ', select);
}

/** The editor's DOM: the shape (changeable when `reshape` is given, which takes the cells edited and
 *  not applied along: grid.edits), slice pickers, a page of cells, paging, and Apply. */
export function tensorEditor(
  grid: TensorGrid,
  apply: (t: TensorValue) => Promise<void>,
  applyRuns?: (runs: Array<{ offset: number; values: Scalar[] }>) => Promise<void>,
  reshape?: (shape: number[]) => Promise<void>,
): HTMLElement {
  const err = h('div', { className: 'error-text', 'data-testid': 'tensor-error' });
  const table = h('table', { className: 'tensor-grid', 'data-testid': 'tensor-grid' });
  const scroller = h('div', { className: 'tensor-scroll' }, table);
  const pos = { r: 0, c: 0 };
  const bad = new Set<string>(); // cells whose text is not a value yet
  const pickers = grid.lead.map((_, d) =>
    h('input', {
      type: 'number',
      min: 0,
      max: grid.shape[d] - 1,
      value: 0,
      title: `index of dimension ${d}`,
      'data-testid': `tensor-lead-${d}`,
      onchange: (ev: Event) => {
        const el = ev.target as HTMLInputElement;
        const k = Math.min(grid.shape[d] - 1, Math.max(0, Math.floor(Number(el.value) || 0)));
        el.value = String(k);
        if (k === grid.lead[d]) return; // a second change event (blur) must not redraw over edits
        grid.lead[d] = k;
        void draw();
      },
    }),
  );
  const where = h('span', { className: 'tensor-where', 'data-testid': 'tensor-where' });
  const page = (dr: number, dc: number) => () => {
    pos.r = Math.min(Math.max(0, pos.r + dr), Math.max(0, grid.rows - PAGE_ROWS));
    pos.c = Math.min(Math.max(0, pos.c + dc), Math.max(0, grid.cols - PAGE_COLS));
    void draw();
  };
  let drawing = 0; // a page asked for while another loads wins
  const draw = async () => {
    const ticket = ++drawing;
    const r1 = Math.min(grid.rows, pos.r + PAGE_ROWS);
    const c1 = Math.min(grid.cols, pos.c + PAGE_COLS);
    const range = `rows ${pos.r}-${r1 - 1} of ${grid.rows}, columns ${pos.c}-${c1 - 1} of ${grid.cols}`;
    if (grid.paged) {
      where.textContent = `${range} (loading…)`;
      try {
        await grid.load(pos.r, r1, pos.c, c1);
      } catch (e) {
        if (ticket === drawing) err.textContent = String((e as Error).message ?? e);
        return;
      }
      if (ticket !== drawing) return;
    }
    where.textContent = range;
    clear(table);
    // Each column as wide as its longest text: 8 significant digits with a sign and a negative exponent
    // (-1.2345678e-10) fit without cutting.
    const texts: string[][] = [];
    for (let r = pos.r; r < r1; r++) {
      const row: string[] = [];
      for (let c = pos.c; c < c1; c++) row.push(formatCell(grid.get(r, c) ?? '', grid.dtype));
      texts.push(row);
    }
    const widths = Array.from({ length: c1 - pos.c }, (_, j) => cellWidth(texts.map((row) => row[j])));
    const head = h('tr', {}, h('th', { text: '' }));
    for (let c = pos.c; c < c1; c++) head.append(h('th', { text: String(c) }));
    table.append(head);
    for (let r = pos.r; r < r1; r++) {
      const row = h('tr', {}, h('th', { text: String(r) }));
      for (let c = pos.c; c < c1; c++) {
        const key = `${grid.index(r, c)}`;
        const cell = h('input', {
          type: 'text',
          value: texts[r - pos.r][c - pos.c],
          'data-cell': `${r},${c}`,
          className: bad.has(key) ? 'bad' : '',
          onchange: () => {
            try {
              grid.set(r, c, cell.value);
              // A float8 or float4 cell shows the value kept (rounded, saturated), not the text typed.
              if (MINIFLOATS[grid.dtype] || grid.dtype === E8M0)
                cell.value = formatCell(grid.get(r, c)!, grid.dtype);
              // A longer value than the column had: this cell grows (its column follows it).
              const w = cellWidth([cell.value]);
              if (w > widths[c - pos.c]) cell.style.width = `${w}ch`;
              bad.delete(key);
              cell.classList.remove('bad');
              cell.title = '';
            } catch (e) {
              bad.add(key);
              cell.classList.add('bad');
              cell.title = (e as Error).message;
            }
            err.textContent = bad.size ? `${bad.size} cell(s) are not values: ${cell.title || ''}` : '';
          },
        });
        cell.style.width = `${widths[c - pos.c]}ch`;
        row.append(h('td', {}, cell));
      }
      table.append(row);
    }
    snapBesideHeaders(scroller, table);
  };
  void draw();
  const paging =
    grid.rows > PAGE_ROWS || grid.cols > PAGE_COLS
      ? h(
          'div',
          { className: 'tensor-paging' },
          h('button', { text: '↑', onclick: page(-PAGE_ROWS, 0) }),
          h('button', { text: '↓', onclick: page(PAGE_ROWS, 0) }),
          h('button', { text: '←', onclick: page(0, -PAGE_COLS) }),
          h('button', { text: '→', onclick: page(0, PAGE_COLS) }),
        )
      : null;
  return h(
    'div',
    { className: 'tensor-editor', 'data-testid': 'tensor-editor' },
    h('div', { text: `${grid.dtype} [${grid.shape.join(', ')}]` }),
    reshape ? shapeRow(grid, err, reshape) : null,
    grid.dtype === E8M0 ? roundRow(grid) : null,
    pickers.length ? h('div', { className: 'tensor-lead' }, 'slice ', ...pickers) : null,
    where,
    paging,
    scroller,
    h('button', {
      text: 'Apply',
      'data-testid': 'tensor-apply',
      onclick: () => {
        if (bad.size) return void (err.textContent = `fix the ${bad.size} cell(s) marked first`);
        const done = grid.paged ? applyRuns?.(grid.runs()) : apply(grid.tensor());
        done?.catch((e: unknown) => (err.textContent = String((e as Error).message ?? e)));
      },
    }),
    err,
  );
}
