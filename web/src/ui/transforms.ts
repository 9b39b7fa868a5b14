// The Model menu's transformations: each a dialog with the options of its `tessera` subcommand, applied
// by the server to the whole document as one undo step (POST documents/{id}/transform), the
// transformation's log shown when it is done. The option fields are read into the server's JSON here
// (readOptions), checked as the CLI checks its flags, so a typo is named before anything is sent.
import type { TransformLog } from '../api/types';
import { clear, h } from './dom';

type Kind = 'bool' | 'text' | 'names' | 'int' | 'dtype' | 'shapes' | 'dims';

export interface OptionSpec {
  key: string;
  label: string;
  kind: Kind;
  /** The field's initial text (or checked state). */
  initial?: string | boolean;
}

export interface TransformSpec {
  id: string;
  label: string;
  /** One line under the title: what it does. */
  help: string;
  options: OptionSpec[];
}

const DTYPES = ['float', 'float16', 'bfloat16', 'double', 'int8', 'uint8', 'int16', 'int32', 'int64'];

// convert fp16 and convert bf16 take the same flags.
const FLOAT_OPTIONS: OptionSpec[] = [
  { key: 'keep_io_types', label: 'keep graph input and output types (float32)', kind: 'bool' },
  { key: 'op_block_list', label: 'operator block list (comma separated)', kind: 'names' },
  { key: 'node_block_list', label: 'node block list (comma separated names)', kind: 'names' },
];

export const TRANSFORMS: TransformSpec[] = [
  {
    id: 'fp16',
    label: 'Convert to float16…',
    help: 'Everything float32 to float16; blocked nodes stay float32 with Casts around them.',
    options: FLOAT_OPTIONS,
  },
  {
    id: 'bf16',
    label: 'Convert to bfloat16…',
    help: 'Everything float32 to bfloat16; blocked nodes stay float32 with Casts around them.',
    options: FLOAT_OPTIONS,
  },
  {
    id: 'sanitize',
    label: 'Sanitize…',
    help: 'Constant and shape folding, no-op and dead node removal, to a fixed point.',
    options: [
      { key: 'fold_threshold', label: 'fold threshold (bytes)', kind: 'int', initial: String(16 << 20) },
      { key: 'passes', label: 'passes (0: until nothing changes)', kind: 'int', initial: '0' },
    ],
  },
  {
    id: 'convert_tensors',
    label: 'Convert tensors…',
    help: 'Selected initializers and tensor attributes to one element type.',
    options: [
      { key: 'to', label: 'to', kind: 'dtype', initial: 'float16' },
      { key: 'from', label: 'from', kind: 'dtype', initial: 'float' },
      { key: 'initializers', label: 'initializers (regular expression)', kind: 'text' },
      { key: 'attributes', label: 'attributes NODE.ATTRIBUTE (regular expression)', kind: 'text' },
    ],
  },
  {
    id: 'set_shapes',
    label: 'Set shapes…',
    help: 'Sizes or dimension variables of graph inputs, then every value type inferred.',
    options: [
      { key: 'shapes', label: 'shapes: NAME=1x3x224x224, one per line', kind: 'shapes' },
      { key: 'dim_params', label: 'dimension variables: NAME:AXIS=batch, one per line', kind: 'dims' },
    ],
  },
  {
    id: 'function_create',
    label: 'Make local function…',
    help: 'A group of nodes (or one per name prefix) made into a local function and its calls.',
    options: [
      { key: 'name', label: 'function name', kind: 'text' },
      { key: 'domain', label: 'domain', kind: 'text', initial: 'local' },
      { key: 'nodes', label: 'nodes (comma separated names; default: the selection)', kind: 'names' },
      { key: 'prefixes', label: 'or name prefixes, one group each (comma separated)', kind: 'names' },
    ],
  },
  {
    id: 'function_inline',
    label: 'Inline local function…',
    help: 'Every call of the function replaced by its body (empty: every local function).',
    options: [{ key: 'function', label: 'function DOMAIN:NAME', kind: 'text' }],
  },
  {
    id: 'import_layer',
    label: 'Import model as layer…',
    help: 'Another model made a local function of this one, its weights inside: a layer to place.',
    options: [
      { key: 'path', label: 'model file (under the studio root)', kind: 'text' },
      { key: 'name', label: 'layer (function) name', kind: 'text' },
      { key: 'domain', label: 'domain', kind: 'text', initial: 'local' },
    ],
  },
];

const lines = (s: string) =>
  s
    .split(/[\n;]/)
    .map((x) => x.trim())
    .filter((x) => x);

/** The fields' values (text, or checked for a bool) as the server's options; throws naming the field. */
export function readOptions(
  spec: TransformSpec,
  fields: Record<string, string | boolean>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of spec.options) {
    const v = fields[o.key] ?? o.initial ?? (o.kind === 'bool' ? false : '');
    if (o.kind === 'bool') {
      out[o.key] = v === true;
      continue;
    }
    const t = String(v).trim();
    if (!t) continue;
    if (o.kind === 'int') {
      if (!/^\d+$/.test(t)) throw new Error(`${o.label}: '${t}' is not a non-negative integer`);
      out[o.key] = Number(t);
    } else if (o.kind === 'names') {
      out[o.key] = t
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x);
    } else if (o.kind === 'shapes') {
      out[o.key] = lines(t).map((line) => {
        const m = /^(.+?)=(.*)$/.exec(line);
        if (!m) throw new Error(`shapes: '${line}' is not NAME=SHAPE (e.g. x=1x3x224x224)`);
        return { input: m[1].trim(), shape: m[2].trim() };
      });
    } else if (o.kind === 'dims') {
      out[o.key] = lines(t).map((line) => {
        const m = /^(.+):(-?\d+)=(.+)$/.exec(line);
        if (!m) throw new Error(`dimension variables: '${line}' is not NAME:AXIS=VARIABLE (e.g. x:0=batch)`);
        return { input: m[1].trim(), axis: Number(m[2]), name: m[3].trim() };
      });
    } else {
      out[o.key] = t;
    }
  }
  return out;
}

/** The log as the CLI prints it: warnings, then the counts (zero counts left out but nodes and
 *  initializers), then the details. */
export function logLines(log: TransformLog): string[] {
  const out = log.warnings.map((w) => `warning: ${w}`);
  for (const [what, n] of log.counts)
    if (n !== 0 || what.startsWith('nodes') || what.startsWith('initializers')) out.push(`${what}: ${n}`);
  if (!log.changed) out.push('nothing changed');
  return out.concat(log.details);
}

/** The dialog's body: a field per option, Apply, and the log once applied. `apply` runs it and gives
 *  the log, or throws why it was refused. `initial` overrides fields' initial text. */
export function transformForm(
  spec: TransformSpec,
  apply: (options: Record<string, unknown>) => Promise<TransformLog>,
  initial: Record<string, string> = {},
): HTMLElement {
  const err = h('div', { className: 'error-text', 'data-testid': 'transform-error' });
  const log = h('pre', { className: 'transform-log', 'data-testid': 'transform-log' });
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>();
  const fields = spec.options.map((o) => {
    const id = `transform-${o.key}`;
    const start: string | boolean | undefined = o.key in initial ? initial[o.key] : o.initial;
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    if (o.kind === 'bool') {
      input = h('input', { type: 'checkbox', 'data-testid': id, checked: start === true });
    } else if (o.kind === 'dtype') {
      input = h('select', { 'data-testid': id }, ...DTYPES.map((d) => h('option', { value: d, text: d })));
      input.value = String(start ?? 'float');
    } else if (o.kind === 'shapes' || o.kind === 'dims') {
      input = h('textarea', { rows: 2, 'data-testid': id });
      input.value = String(start ?? '');
    } else {
      input = h('input', { type: 'text', 'data-testid': id, value: String(start ?? '') });
    }
    inputs.set(o.key, input);
    return h('div', { className: 'field' }, h('label', { text: o.label }), input);
  });
  const button = h('button', {
    text: 'Apply',
    'data-testid': 'transform-apply',
    onclick: async () => {
      err.textContent = '';
      const values: Record<string, string | boolean> = {};
      for (const [k, el] of inputs)
        values[k] = el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value;
      let options: Record<string, unknown>;
      try {
        options = readOptions(spec, values);
      } catch (e) {
        return void (err.textContent = (e as Error).message);
      }
      button.disabled = true;
      clear(log);
      log.textContent = 'running…';
      try {
        log.textContent = logLines(await apply(options)).join('\n');
      } catch (e) {
        log.textContent = '';
        err.textContent = String((e as Error).message ?? e);
      } finally {
        button.disabled = false;
      }
    },
  });
  return h(
    'div',
    { className: 'transform-form' },
    h('div', { className: 'hint', text: spec.help }),
    ...fields,
    button,
    err,
    log,
  );
}
