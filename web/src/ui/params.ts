// The parameter editor: the selected node's name and attributes (set ones first, the opset's defaults
// in a collapsible "Default values" section, each with reset), the common attributes of several
// selected nodes, or the model's properties when nothing is selected.
import type {
  ApiGraph,
  FunctionKey,
  ApiNode,
  AttrType,
  AttrValue,
  DocumentInfo,
  RegistryAttr,
  RegistryOp,
  TensorValue,
} from '../api/types';
import { registryKey } from '../model/viewmodel';
import { formatValue, parseValue, wireAttrValue } from '../params/parse';
import { clear, h } from './dom';

export interface ParamActions {
  rename(node: ApiNode, name: string): void;
  setAttr(nodes: ApiNode[], attr: { name: string; type: AttrType; value: AttrValue }): void;
  resetAttr(nodes: ApiNode[], name: string): void;
  setMetadata(fields: Record<string, string | number>): void;
  setOpset(domain: string, version: number | null): void;
  openFunction(f: FunctionKey): void;
  newFunction(): void;
  deleteFunction(f: FunctionKey): void;
  editFunctionAttributes(k: number): void;
  /** Opens the tensor editor on a tensor attribute's value (the same on every node in `nodes`). */
  /** `unset`: the attribute has no value yet (an empty float tensor opens, given its element type and
   *  shape in the editor). */
  editTensor(nodes: ApiNode[], name: string, value: TensorValue, unset?: boolean): void;
  /** Opens the tensor editor on a list attribute (ints, floats, strings) as one row of cells. */
  editList(nodes: ApiNode[], name: string, type: AttrType, values: Array<number | string>): void;
}

const C_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** List parameters the tensor editor also edits (the seed: "any tensor/list type parameter"). */
const LIST_TYPES = new Set<AttrType>(['ints', 'floats', 'strings']);
/** What the tensor editor opens on for a tensor parameter not set yet: no values, float. */
const EMPTY_TENSOR: TensorValue = { dtype: 'float', shape: [0], values: [] };

interface AttrRow {
  name: string;
  type: AttrType;
  value: AttrValue | undefined; // undefined: not set on every node (or differs)
  isSet: boolean;
  schema?: RegistryAttr;
}

export class ParamEditor {
  constructor(
    private readonly root: HTMLElement,
    private readonly actions: ParamActions,
  ) {}

  show(
    nodes: ApiNode[],
    registry: Map<string, RegistryOp>,
    graph: ApiGraph | null,
    doc: DocumentInfo | null,
  ): void {
    clear(this.root);
    if (nodes.length === 0) return this.model(graph, doc);
    if (nodes.length === 1) return this.single(nodes[0], registry);
    this.common(nodes, registry);
  }

  private single(node: ApiNode, registry: Map<string, RegistryOp>): void {
    const schema = registry.get(registryKey(node.domain, node.op_type));
    const nameErr = h('div', { className: 'error-text' });
    const name = h('input', { type: 'text', value: node.name, 'data-testid': 'param-name' });
    let sent = node.name;
    const commit = () => {
      const v = name.value.trim();
      if (v === sent) return;
      if (!C_IDENT.test(v)) {
        nameErr.textContent = `'${v}' is not a valid name: letters, digits and '_', not starting with a digit`;
        return;
      }
      nameErr.textContent = '';
      sent = v;
      this.actions.rename(node, v);
    };
    name.addEventListener('keydown', (ev) => ev.key === 'Enter' && commit());
    name.addEventListener('change', commit);
    this.root.append(
      h('div', { className: 'panel-title', text: 'Parameters' }),
      field('Name', name),
      nameErr,
      field('Type', h('span', { text: `${node.op_type}${node.domain ? ` (${node.domain})` : ''}` })),
    );
    const set = new Map(node.attributes.map((a) => [a.name, a]));
    const rows: AttrRow[] = [];
    for (const a of schema?.attributes ?? []) {
      const cur = set.get(a.name);
      rows.push({ name: a.name, type: a.type, value: cur?.value ?? a.default, isSet: !!cur, schema: a });
    }
    for (const a of node.attributes)
      if (!schema?.attributes.some((s) => s.name === a.name))
        rows.push({ name: a.name, type: a.type, value: a.value, isSet: true });
    this.attrSections(rows, [node]);
    this.root.append(
      h('div', { className: 'panel-subtitle', text: 'Inputs' }),
      ...node.inputs.map((v, i) =>
        field(
          schema?.inputs[Math.min(i, schema.inputs.length - 1)]?.name ?? String(i),
          h('code', { text: v || '(not connected)' }),
        ),
      ),
      h('div', { className: 'panel-subtitle', text: 'Outputs' }),
      ...node.outputs.map((v, i) =>
        field(
          schema?.outputs[Math.min(i, schema.outputs.length - 1)]?.name ?? String(i),
          h('code', { text: v || '(unused)' }),
        ),
      ),
    );
  }

  private common(nodes: ApiNode[], registry: Map<string, RegistryOp>): void {
    this.root.append(
      h('div', { className: 'panel-title', text: `${nodes.length} nodes: common parameters` }),
    );
    const schemas = nodes.map((n) => registry.get(registryKey(n.domain, n.op_type)));
    const first = schemas[0]?.attributes ?? [];
    const rows: AttrRow[] = [];
    for (const a of first) {
      if (!schemas.every((s) => s?.attributes.some((b) => b.name === a.name && b.type === a.type))) continue;
      const values = nodes.map((n) => n.attributes.find((x) => x.name === a.name)?.value ?? a.default);
      const same = values.every((v) => JSON.stringify(v) === JSON.stringify(values[0]));
      const isSet = nodes.some((n) => n.attributes.some((x) => x.name === a.name));
      rows.push({ name: a.name, type: a.type, value: same ? values[0] : undefined, isSet, schema: a });
    }
    if (!rows.length)
      this.root.append(
        h('div', { className: 'hint', text: 'The selected nodes have no parameter in common.' }),
      );
    this.attrSections(rows, nodes);
  }

  private attrSections(rows: AttrRow[], nodes: ApiNode[]): void {
    const main = rows.filter((r) => r.isSet || (r.schema?.required ?? false));
    const defaults = rows.filter((r) => !main.includes(r));
    const sec = h('div', { className: 'attrs', 'data-testid': 'attrs' });
    for (const r of main) sec.append(this.attrRow(r, nodes));
    this.root.append(sec);
    if (!defaults.length) return;
    const det = h(
      'details',
      { className: 'defaults', 'data-testid': 'defaults' },
      h('summary', { text: `Default values (${defaults.length})` }),
    );
    for (const r of defaults) det.append(this.attrRow(r, nodes));
    this.root.append(det);
  }

  private attrRow(r: AttrRow, nodes: ApiNode[]): HTMLElement {
    const editable = r.type !== 'graph' && r.type !== 'graphs';
    const text = r.value === undefined ? '' : formatValue(r.type, r.value);
    const input =
      r.type === 'tensor'
        ? h('textarea', { rows: 3, value: text, 'data-attr': r.name })
        : h('input', {
            type: 'text',
            value: text,
            'data-attr': r.name,
            placeholder: r.value === undefined ? '(differs)' : r.schema?.required ? 'required' : '',
          });
    input.disabled = !editable;
    const err = h('div', { className: 'error-text' });
    // Enter fires both keydown and change: the text last sent is remembered so one edit sends one command.
    let sent = text.trim();
    const commit = () => {
      if (input.value.trim() === sent) return;
      try {
        const dtype =
          r.type === 'tensor' ? ((r.value as TensorValue | undefined)?.dtype ?? 'float') : undefined;
        const value = parseValue(r.type, input.value, dtype);
        err.textContent = '';
        sent = input.value.trim();
        this.actions.setAttr(nodes, { name: r.name, type: r.type, value: wireAttrValue(r.type, value) });
      } catch (e) {
        err.textContent = `${r.name}: ${(e as Error).message}`;
      }
    };
    input.addEventListener('keydown', (ev) => {
      const kev = ev as KeyboardEvent;
      if (kev.key === 'Enter' && !(r.type === 'tensor' && kev.shiftKey)) {
        kev.preventDefault();
        commit();
      }
    });
    input.addEventListener('change', commit);
    // Larger tensors are edited as a grid; values the graph answer left out (over 64, or a NaN) are
    // fetched when it opens. Every tensor and list parameter has the button, as the seed says, one not
    // set yet too (it opens on its default or empty, to be shaped in the editor, in the browser: the
    // server has no tensor of it to reshape; set on Apply); not one whose value differs between the
    // selected nodes.
    const unset = !r.isSet;
    const tensor = (r.value as TensorValue | undefined) ?? (unset ? EMPTY_TENSOR : undefined);
    const list = !LIST_TYPES.has(r.type)
      ? null
      : Array.isArray(r.value)
        ? (r.value as Array<number | string>)
        : r.value === undefined && unset
          ? []
          : null;
    const grid =
      r.type === 'tensor' && editable && tensor
        ? h('button', {
            text: 'grid…',
            title: 'Edit the values in the tensor editor',
            'data-tensor-edit': r.name,
            onclick: () => this.actions.editTensor(nodes, r.name, tensor, unset),
          })
        : list
          ? h('button', {
              text: 'grid…',
              title: 'Edit the list in the tensor editor',
              'data-tensor-edit': r.name,
              onclick: () => this.actions.editList(nodes, r.name, r.type, list),
            })
          : null;
    const reset =
      r.isSet && editable
        ? h('button', {
            className: 'reset',
            title: 'Reset to default',
            text: '↺',
            'data-reset': r.name,
            onclick: () => this.actions.resetAttr(nodes, r.name),
          })
        : null;
    return h(
      'div',
      { className: 'attr-row' },
      h('label', { text: r.name, title: `${r.type}` }),
      input,
      grid,
      reset,
      err,
    );
  }

  private model(graph: ApiGraph | null, doc: DocumentInfo | null): void {
    this.root.append(h('div', { className: 'panel-title', text: 'Model properties' }));
    if (!doc || !graph) return;
    this.root.append(
      field('File', h('span', { text: doc.path ?? '(not saved)' })),
      field('Nodes', h('span', { text: String(graph.nodes.length) })),
      field('Inputs', h('span', { text: graph.inputs.map((i) => i.name).join(', ') || '-' })),
      field('Outputs', h('span', { text: graph.outputs.map((i) => i.name).join(', ') || '-' })),
      field('Initializers', h('span', { text: String(graph.initializers.length) })),
      field(
        'Opsets',
        h('span', {
          text:
            (graph.opset_imports ?? []).map((o) => `${o.domain || 'ai.onnx'} ${o.version}`).join(', ') || '-',
          'data-testid': 'opsets',
        }),
      ),
      h('div', { className: 'panel-subtitle', text: 'Local functions' }),
      ...(graph.functions ?? []).map((f, k) =>
        h(
          'div',
          { className: 'function-row', 'data-function': f.name },
          h('button', {
            className: 'function-item',
            text: `${f.domain ? f.domain + '.' : ''}${f.name}`,
            title: 'Open its body in a tab',
            onclick: () => this.actions.openFunction(f),
          }),
          h('button', {
            text: 'attributes…',
            title: 'Edit its attribute parameters',
            'data-testid': 'function-attributes',
            onclick: () => this.actions.editFunctionAttributes(k),
          }),
          h('button', {
            text: '×',
            title: 'Delete the function (its calls are left for the type check to report)',
            'data-testid': 'function-delete',
            onclick: () => this.actions.deleteFunction(f),
          }),
        ),
      ),
      h('button', {
        text: 'New function…',
        'data-testid': 'function-new',
        onclick: () => this.actions.newFunction(),
      }),
      h('div', { className: 'panel-subtitle', text: 'Metadata' }),
    );
    // The current values; a field changed sends that field alone (one undo step).
    const md = graph.metadata ?? {};
    const labels: Record<string, string> = {
      graph_name: 'name',
      doc_string: 'doc',
      model_version: 'version',
    };
    for (const key of [
      'graph_name',
      'model_version',
      'doc_string',
      'producer_name',
      'producer_version',
      'domain',
    ]) {
      const now = md[key] === undefined ? '' : String(md[key]);
      const input = h('input', { type: 'text', value: now, 'data-meta': key });
      const err = h('div', { className: 'error-text' });
      input.addEventListener('change', () => {
        const v = input.value.trim();
        if (v === now) return;
        if (key === 'model_version' && !/^-?\d+$/.test(v))
          return void (err.textContent = `version: '${v}' is not an integer`);
        err.textContent = '';
        this.actions.setMetadata({ [key]: key === 'model_version' ? Number(v) : v });
      });
      this.root.append(field(labels[key] ?? key, input), err);
    }
    const dom = h('input', { type: 'text', placeholder: 'domain (empty: ai.onnx)' });
    const ver = h('input', { type: 'number', min: 1, placeholder: 'version' });
    this.root.append(
      h('div', { className: 'panel-subtitle', text: 'Opset import' }),
      field('domain', dom),
      field('version', ver),
      h('button', {
        text: 'Set opset import',
        onclick: () => ver.value && this.actions.setOpset(dom.value.trim(), Number(ver.value)),
      }),
    );
  }
}

function field(label: string, control: HTMLElement): HTMLElement {
  return h('div', { className: 'field' }, h('label', { text: label }), control);
}
