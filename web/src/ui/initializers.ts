// The initializer editor: list and filter by name or type; create one from values typed in the tensor
// syntax or generated (normal, zeros, positive or negative integers); preview; edit in the tensor editor
// (ui/tensoreditor.ts); delete; attach to a free input of the selected node. Values travel only when asked for (preview), never with the graph.
import type { ApiNode, Command, GraphPath, InitializerInfo, RegistryOp, TensorValue } from '../api/types';
import { registryKey } from '../model/viewmodel';
import { parseNpyHeader, toBase64 } from '../params/npy';
import { formatValue, parseValue, wireValue } from '../params/parse';
import { clear, h } from './dom';
import { TENSOR_DTYPES } from './tensoreditor';

export interface InitializerActions {
  run(cmd: Command): Promise<unknown>;
  /** The first values of an initializer of the graph shown, or of the graph at `path` around it. */
  preview(name: string, path?: GraphPath): Promise<TensorValue>;
  /** Opens the tensor editor on an initializer's values. */
  edit(name: string): void;
  /** Deletes an initializer, disconnecting the inputs that read it (one undo step). */
  remove(name: string): Promise<unknown>;
  selected(): ApiNode[];
  registry(): Map<string, RegistryOp>;
}

// The initializer form's element types: the tensor editor's, string left out.
const DTYPES = TENSOR_DTYPES.filter((d) => d !== 'string');
const FILLS: Array<[string, string]> = [
  ['values', 'values typed in'],
  ['normal', 'standard normal'],
  ['zeros', 'zeros'],
  ['uniform_int_pos', 'random positive integers (all of the type)'],
  ['uniform_int_neg', 'random negative integers (all of the type)'],
  ['npy', 'from a .npy file'],
  ['external', 'external data (a file beside the saved model)'],
];

const SIGNED = new Set(['int8', 'int16', 'int32', 'int64']);
const UNSIGNED = new Set(['uint8', 'uint16', 'uint32', 'uint64']);
const WIDE_FLOATS = new Set(['float', 'double', 'float16', 'bfloat16']);

/** The fills a type can be created with, as the seed allows: standard normal values for floating point
 *  types of two bytes or more, positive integers for integer types of a byte or more, negative ones for
 *  the signed among them, zeros for every type that has a zero (all but float8e8m0, which the seed does
 *  not know); values typed in, .npy and external data for all. */
export function fillsFor(dtype: string): Set<string> {
  const ok = new Set(['values', 'npy', 'external']);
  if (dtype !== 'float8e8m0') ok.add('zeros');
  if (WIDE_FLOATS.has(dtype)) ok.add('normal');
  if (SIGNED.has(dtype) || UNSIGNED.has(dtype)) ok.add('uniform_int_pos');
  if (SIGNED.has(dtype)) ok.add('uniform_int_neg');
  return ok;
}

/** The tensor editor's "replace from .npy" row for an existing initializer: the file's header is read
 *  and its type checked against the initializer's first (the seed: the data type must match the NumPy
 *  file's), then `load` sends it (its shape may differ: it replaces the tensor, one undo step). */
export function npyReplaceRow(
  dtype: string,
  load: (npyBase64: string, shape: number[]) => Promise<void>,
): HTMLElement {
  const err = h('span', { className: 'error-text', 'data-testid': 'tensor-npy-error' });
  const file = h('input', {
    type: 'file',
    accept: '.npy',
    'data-testid': 'tensor-npy',
    title: `A .npy file of ${dtype} values replaces the tensor (its shape too)`,
  });
  file.addEventListener('change', () => {
    const f = file.files?.[0];
    if (!f) return;
    void f.arrayBuffer().then(async (buf) => {
      try {
        const hd = parseNpyHeader(buf);
        if (hd.dtype !== dtype) throw new Error(`the file holds ${hd.dtype}, the initializer ${dtype}`);
        err.textContent = '';
        await load(toBase64(buf), hd.shape);
      } catch (e) {
        err.textContent = `${f.name}: ${(e as Error).message}`;
      }
    });
  });
  return h('div', { className: 'tensor-npy-row' }, 'replace from .npy ', file, err);
}

export function parseShape(text: string): number[] {
  const v = parseValue('ints', text.trim() || '[]') as number[];
  v.forEach((d, k) => {
    if (d < 0) throw new Error(`shape[${k}]: dimensions are >= 0, got ${d}`);
  });
  return v;
}

export class InitializerPanel {
  private inits: InitializerInfo[] = [];
  /** In a subgraph's tab: the initializers of the graphs around it, which it reads like its own. */
  private outer: InitializerInfo[] = [];
  private list: HTMLElement;
  private filter: HTMLInputElement;
  private out: HTMLElement;
  private nodeBox: HTMLElement;
  private node: ApiNode | undefined;

  private stale = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly a: InitializerActions,
  ) {
    this.filter = h('input', {
      type: 'search',
      placeholder: 'Filter by name or type',
      oninput: () => this.render(),
    });
    this.list = h('div', { className: 'init-list', 'data-testid': 'initializers' });
    this.out = h('div', { className: 'init-preview' });
    this.nodeBox = h('div', { className: 'init-node', 'data-testid': 'init-node' });
    root.append(
      h('div', { className: 'panel-title', text: 'Initializers' }),
      this.filter,
      this.list,
      this.out,
      this.nodeBox,
      this.form(),
    );
  }

  /** Rendered now when the panel shows, else when it is next shown (shown()). */
  setInitializers(inits: InitializerInfo[]): void {
    this.inits = inits;
    this.showNode(this.node);
    this.stale = true;
    if (this.root.style.display !== 'none') this.render();
  }

  /** The initializers of the graphs around the one shown (none for a main graph or a function body):
   *  listed after its own, to preview and attach; edited and deleted in their own graph's tab. */
  setOuter(inits: InitializerInfo[]): void {
    this.outer = inits;
    this.showNode(this.node);
    this.stale = true;
    if (this.root.style.display !== 'none') this.render();
  }

  shown(): void {
    if (this.stale) this.render();
  }

  private render(): void {
    this.stale = false;
    clear(this.list);
    const q = this.filter.value.trim().toLowerCase();
    const found = this.inits
      .filter((i) => !q || i.name.toLowerCase().includes(q) || i.dtype.includes(q))
      .slice(0, 400);
    for (const i of found) {
      this.list.append(
        h(
          'div',
          { className: 'init-item', 'data-init': i.name },
          h('span', { text: `${i.name}  ${i.dtype}[${i.shape.join(',')}]`, title: `${i.bytes} bytes` }),
          h('button', {
            text: 'view',
            title: 'Preview the first values',
            onclick: () => void this.preview(i.name),
          }),
          h('button', {
            text: 'edit',
            title: 'Edit the values in the tensor editor',
            'data-edit': i.name,
            onclick: () => this.a.edit(i.name),
          }),
          h('button', {
            text: 'attach',
            title: "Feed the selected node's first free input",
            'data-attach': i.name,
            onclick: () => void this.attach(i.name),
          }),
          h('button', {
            text: '×',
            title: 'Delete (its users are disconnected)',
            'data-delete': i.name,
            onclick: () => void this.a.remove(i.name),
          }),
        ),
      );
    }
    for (const i of this.outer.filter((o) => !q || o.name.toLowerCase().includes(q) || o.dtype.includes(q))) {
      this.list.append(
        h(
          'div',
          { className: 'init-item outer', 'data-outer-init': i.name },
          h('span', {
            text: `${i.name}  ${i.dtype}[${i.shape.join(',')}]  (outer)`,
            title: `${i.bytes} bytes, an initializer of an enclosing graph: edited and deleted there`,
          }),
          h('button', {
            text: 'view',
            title: 'Preview the first values',
            onclick: () => void this.preview(i.name, i.path),
          }),
          h('button', {
            text: 'attach',
            title: "Feed the selected node's first free input",
            'data-attach': i.name,
            onclick: () => void this.attach(i.name),
          }),
        ),
      );
    }
    this.updateAttach();
  }

  private async preview(name: string, path?: GraphPath): Promise<void> {
    try {
      const t = await this.a.preview(name, path);
      this.out.textContent = `${name} = ${formatValue('tensor', { ...t, shape: t.values && t.values.length < t.shape.reduce((x, y) => x * y, 1) ? [t.values.length] : t.shape }, 600)}`;
    } catch (e) {
      this.out.textContent = String((e as Error).message);
    }
  }

  /** The selected node's inputs fed by initializers: switch each to another initializer, or detach it
   *  (the input becomes free; the initializer stays). */
  showNode(node: ApiNode | undefined): void {
    this.node = node;
    this.updateAttach();
    clear(this.nodeBox);
    const all = [...this.inits, ...this.outer];
    const names = new Set(all.map((i) => i.name));
    const fed = node ? node.inputs.map((v, k) => [v, k] as const).filter(([v]) => names.has(v)) : [];
    if (!node || !fed.length) return;
    this.nodeBox.append(
      h('div', { className: 'panel-subtitle', text: `${node.name}: inputs from initializers` }),
    );
    for (const [value, k] of fed) {
      const outerPath = this.outer.find((i) => i.name === value)?.path;
      const other = h(
        'select',
        {
          'data-switch': String(k),
          onchange: () => void this.a.run({ type: 'connect', node: node.id, index: k, value: other.value }),
        },
        ...all.map((i) => h('option', { value: i.name, text: i.name, selected: i.name === value })),
      );
      // The list of initializers to switch to, filtered by name as typed (the one fed stays listed).
      const filter = h('input', {
        type: 'search',
        placeholder: 'filter',
        'data-switch-filter': String(k),
        oninput: () => {
          const q = filter.value.trim().toLowerCase();
          for (const o of other.options)
            o.hidden = !!q && o.value !== value && !o.value.toLowerCase().includes(q);
        },
      });
      this.nodeBox.append(
        h(
          'div',
          { className: 'init-item' },
          h('span', { text: `input ${k}` }),
          filter,
          other,
          h('button', {
            text: 'view',
            title: 'Preview the first values',
            'data-node-view': String(k),
            onclick: () => void this.preview(value, outerPath),
          }),
          // An initializer of an enclosing graph is edited in that graph's tab.
          outerPath
            ? null
            : h('button', {
                text: 'edit',
                title: 'Edit the values in the tensor editor',
                'data-node-edit': String(k),
                onclick: () => this.a.edit(value),
              }),
          h('button', {
            text: 'detach',
            'data-detach': String(k),
            title: 'Disconnect the initializer from this input',
            onclick: () => void this.a.run({ type: 'disconnect', node: node.id, index: k }),
          }),
        ),
      );
    }
  }

  /** The selected node's first free input (of its inputs and its schema's), or -1. */
  private freeInput(node: ApiNode | undefined): number {
    if (!node) return -1;
    const op = this.a.registry().get(registryKey(node.domain, node.op_type));
    const count = Math.max(node.inputs.length, op?.inputs.length ?? 0);
    for (let k = 0; k < count; k++) if (!node.inputs[k]) return k;
    return -1;
  }

  /** The attach buttons are enabled only while the node selected has a free input (the seed's "Connect
   *  Initializer", enabled when the selected node has a free terminal); their title says why not. */
  private updateAttach(): void {
    const k = this.freeInput(this.node);
    const why = !this.node ? 'Select a node with a free input first' : `${this.node.name} has no free input`;
    for (const b of this.list.querySelectorAll<HTMLButtonElement>('button[data-attach]')) {
      b.disabled = k < 0;
      b.title = k < 0 ? why : `Feed input ${k} of ${this.node!.name}`;
    }
  }

  /** Connects the initializer to the selected node's first free input (the first free one of the schema). */
  private async attach(name: string): Promise<void> {
    const [node] = this.a.selected();
    if (!node)
      return void (this.out.textContent = 'Select a node first: the initializer feeds its first free input.');
    const k = this.freeInput(node);
    if (k >= 0) return void this.a.run({ type: 'connect', node: node.id, index: k, value: name });
    this.out.textContent = `${node.name} has no free input`;
  }

  private form(): HTMLElement {
    const name = h('input', { type: 'text', placeholder: 'name', 'data-testid': 'init-name' });
    const dtype = h(
      'select',
      { 'data-testid': 'init-dtype' },
      ...DTYPES.map((d) => h('option', { value: d, text: d })),
    );
    const shape = h('input', {
      type: 'text',
      placeholder: 'shape, e.g. [8, 3, 3, 3]',
      'data-testid': 'init-shape',
    });
    const fill = h(
      'select',
      { 'data-testid': 'init-fill' },
      ...FILLS.map(([v, t]) => h('option', { value: v, text: t })),
    );
    const values = h('textarea', {
      rows: 2,
      placeholder: 'values, e.g. [[1, 2], [3, 4]]',
      'data-testid': 'init-values',
    });
    const err = h('div', { className: 'error-text' });
    // Fills the type has no generator for are shown disabled (the seed's "Generate..." rules).
    const allowFills = () => {
      const ok = fillsFor(dtype.value);
      for (const o of fill.options) o.disabled = !ok.has(o.value);
      if (!ok.has(fill.value)) fill.value = ok.has('zeros') ? 'zeros' : 'values';
    };
    dtype.addEventListener('change', allowFills);
    const file = h('input', { type: 'file', accept: '.npy', 'data-testid': 'init-npy' });
    const location = h('input', {
      type: 'text',
      placeholder: 'external: file, relative to the model',
      'data-testid': 'init-ext-location',
    });
    const offset = h('input', {
      type: 'number',
      min: 0,
      placeholder: 'offset',
      'data-testid': 'init-ext-offset',
    });
    const length = h('input', {
      type: 'number',
      min: 0,
      placeholder: 'length',
      'data-testid': 'init-ext-length',
    });
    // A .npy file's header fills in its dtype and shape (checked here, read again by the server).
    file.addEventListener('change', () => {
      const f = file.files?.[0];
      if (!f) return;
      fill.value = 'npy';
      void f.arrayBuffer().then((buf) => {
        try {
          const hd = parseNpyHeader(buf);
          if ([...dtype.options].some((o) => o.value === hd.dtype)) dtype.value = hd.dtype;
          allowFills();
          shape.value = `[${hd.shape.join(', ')}]`;
          if (!name.value.trim()) name.value = f.name.replace(/\.npy$/, '').replace(/[^A-Za-z0-9_]/g, '_');
          err.textContent = '';
        } catch (e) {
          err.textContent = `${f.name}: ${(e as Error).message}`;
        }
      });
    });
    const create = async () => {
      try {
        if (!/^[A-Za-z_][A-Za-z0-9_.:/-]*$/.test(name.value.trim()))
          throw new Error('name: letters, digits, _ . : / - and not empty');
        const tensor: Record<string, unknown> = { name: name.value.trim(), dtype: dtype.value };
        if (fill.value === 'npy') {
          const f = file.files?.[0];
          if (!f) throw new Error('choose a .npy file');
          const buf = await f.arrayBuffer();
          parseNpyHeader(buf); // its errors, before sending megabytes
          delete tensor.dtype; // the file's own dtype and shape
          tensor.npy_base64 = toBase64(buf);
        } else if (fill.value === 'external') {
          // The server refuses it for a model never saved, and checks the file and the byte range.
          if (!location.value.trim()) throw new Error('external: the file, relative to the model');
          tensor.shape = parseShape(shape.value);
          const ext: Record<string, unknown> = { location: location.value.trim() };
          if (offset.value) ext.offset = Number(offset.value);
          if (length.value) ext.length = Number(length.value);
          tensor.external = ext;
        } else if (fill.value === 'values') {
          const t = parseValue('tensor', values.value, dtype.value) as TensorValue;
          tensor.shape = shape.value.trim() ? parseShape(shape.value) : t.shape;
          // NaN and the infinities travel as "nan", "inf", "-inf" (JSON has no numbers for them).
          tensor.values = t.values?.map(wireValue);
        } else {
          tensor.shape = parseShape(shape.value);
          tensor.fill = { kind: fill.value, seed: 0 };
        }
        err.textContent = '';
        await this.a.run({ type: 'add_initializer', tensor });
      } catch (e) {
        err.textContent = (e as Error).message;
      }
    };
    return h(
      'details',
      { className: 'init-form' },
      h('summary', { text: 'New initializer' }),
      name,
      dtype,
      shape,
      fill,
      values,
      file,
      location,
      offset,
      length,
      h('button', { text: 'Create', 'data-testid': 'init-create', onclick: () => void create() }),
      err,
    );
  }
}
