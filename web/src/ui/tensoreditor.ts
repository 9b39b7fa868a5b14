// The tensor editor: a grid of a tensor's values, for values too large to type as one nested list. It
// shows two dimensions at a time (rows: the second last, columns: the last; a rank-1 tensor is one row)
// and, for higher ranks, an index per leading dimension picks the slice. Cells are checked as they are
// typed, against the element type, and the editor hands back the whole tensor (replace_initializer,
// or a tensor attribute). Values come from the server only when the editor opens.
import type { TensorValue } from '../api/types';
import { clear, h } from './dom';

/** Elements the editor loads and edits; a larger tensor is replaced from a .npy file instead. */
export const EDIT_LIMIT = 1 << 16;
/** Cells drawn per page of the grid (rows x columns shown), so a 256x256 slice stays responsive. */
const PAGE_ROWS = 64;
const PAGE_COLS = 32;

type Scalar = number | string | boolean;

const INT_RANGE: Record<string, [number, number]> = {
  int8: [-128, 127],
  uint8: [0, 255],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** A cell's text as a value of `dtype`; throws with a sentence naming what is wrong. */
export function parseCell(dtype: string, text: string): Scalar {
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
  if (m) return m[1].toLowerCase() === 'nan' ? NaN : t.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) throw new Error(`'${t}' is not a number`);
  const v = Number(t);
  if (dtype === 'float16' && Math.abs(v) > 65504)
    throw new Error(`${t} is out of the range of float16 (largest finite 65504)`);
  return v;
}

export function formatCell(v: Scalar): string {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  }
  return String(v);
}

/** The values of a tensor and where each cell of a two-dimensional view of it lies in them. */
export class TensorGrid {
  readonly values: Scalar[];
  /** Index of each leading dimension (all but the last two) of the slice shown. */
  lead: number[];

  constructor(
    readonly dtype: string,
    readonly shape: number[],
    values: Scalar[],
  ) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (values.length !== n)
      throw new Error(
        `the tensor has ${n} elements (shape [${shape.join(', ')}]) but ${values.length} values were loaded`,
      );
    this.values = [...values];
    this.lead = new Array(Math.max(0, shape.length - 2)).fill(0);
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

  get(r: number, c: number): Scalar {
    return this.values[this.index(r, c)];
  }

  /** Sets cell (r, c) from its text; throws (the value unchanged) when the text is not a value. */
  set(r: number, c: number, text: string): void {
    this.values[this.index(r, c)] = parseCell(this.dtype, text);
  }

  tensor(): TensorValue {
    return { dtype: this.dtype, shape: [...this.shape], values: [...this.values] as TensorValue['values'] };
  }
}

/** The editor's DOM: slice pickers, a page of cells, paging, and Apply. */
export function tensorEditor(grid: TensorGrid, apply: (t: TensorValue) => Promise<void>): HTMLElement {
  const err = h('div', { className: 'error-text', 'data-testid': 'tensor-error' });
  const table = h('table', { className: 'tensor-grid', 'data-testid': 'tensor-grid' });
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
        draw();
      },
    }),
  );
  const where = h('span', { className: 'tensor-where' });
  const page = (dr: number, dc: number) => () => {
    pos.r = Math.min(Math.max(0, pos.r + dr), Math.max(0, grid.rows - PAGE_ROWS));
    pos.c = Math.min(Math.max(0, pos.c + dc), Math.max(0, grid.cols - PAGE_COLS));
    draw();
  };
  const draw = () => {
    clear(table);
    const r1 = Math.min(grid.rows, pos.r + PAGE_ROWS);
    const c1 = Math.min(grid.cols, pos.c + PAGE_COLS);
    where.textContent = `rows ${pos.r}-${r1 - 1} of ${grid.rows}, columns ${pos.c}-${c1 - 1} of ${grid.cols}`;
    const head = h('tr', {}, h('th', { text: '' }));
    for (let c = pos.c; c < c1; c++) head.append(h('th', { text: String(c) }));
    table.append(head);
    for (let r = pos.r; r < r1; r++) {
      const row = h('tr', {}, h('th', { text: String(r) }));
      for (let c = pos.c; c < c1; c++) {
        const key = `${grid.index(r, c)}`;
        const cell = h('input', {
          type: 'text',
          value: formatCell(grid.get(r, c)),
          'data-cell': `${r},${c}`,
          className: bad.has(key) ? 'bad' : '',
          onchange: () => {
            try {
              grid.set(r, c, cell.value);
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
        row.append(h('td', {}, cell));
      }
      table.append(row);
    }
  };
  draw();
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
    pickers.length ? h('div', { className: 'tensor-lead' }, 'slice ', ...pickers) : null,
    where,
    paging,
    h('div', { className: 'tensor-scroll' }, table),
    h('button', {
      text: 'Apply',
      'data-testid': 'tensor-apply',
      onclick: () => {
        if (bad.size) return void (err.textContent = `fix the ${bad.size} cell(s) marked first`);
        apply(grid.tensor()).catch((e: unknown) => (err.textContent = String((e as Error).message ?? e)));
      },
    }),
    err,
  );
}
