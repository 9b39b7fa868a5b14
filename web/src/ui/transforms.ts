// The Model menu's transformations: each a dialog with the options of its `tessera` subcommand, run by
// the server as a background job (POST documents/{id}/jobs) whose progress comes as pushed events, with
// Cancel; the document is edited only when the job succeeds, as one undo step (an extraction opens a new
// tab instead), and the transformation's log is shown. The option fields are read into the server's
// JSON here (readOptions), checked as the CLI checks its flags, so a typo is named before anything is
// sent. While a job runs the server refuses edits of its document (the dialog stays in front).
import type { ApiGraph, ApiNode, FileEntry, JobInfo, TransformLog } from '../api/types';
import { clear, h } from './dom';

type Kind =
  | 'bool'
  | 'text'
  | 'names'
  | 'values'
  | 'int'
  | 'number'
  | 'choice'
  | 'dtype'
  | 'shapes'
  | 'dims'
  | 'files'
  | 'sizes';

export interface OptionSpec {
  key: string;
  label: string;
  kind: Kind;
  /** The field's initial text (or checked state). */
  initial?: string | boolean;
  /** A 'choice' field's values. */
  choices?: string[];
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
    id: 'amp',
    label: 'Automatic mixed precision…',
    help:
      'As many nodes in float16 as the tolerance allows on the given inputs (or random ones), checked by ' +
      'running the model; the log says which nodes stayed float32 and why.',
    options: [
      { key: 'inputs', label: 'inputs: NAME=FILE.npy, one per line (others random)', kind: 'files' },
      { key: 'shapes', label: 'random inputs of free size: NAME=1x128, one per line', kind: 'sizes' },
      { key: 'rtol', label: 'relative tolerance', kind: 'number', initial: '0.01' },
      { key: 'atol', label: 'absolute tolerance', kind: 'number', initial: '0.001' },
      { key: 'backend', label: 'backend', kind: 'choice', initial: 'cpu', choices: ['cpu', 'cuda', 'auto'] },
      { key: 'max_runs', label: 'run budget (whole-model runs)', kind: 'int', initial: '40' },
    ],
  },
  {
    id: 'extract',
    label: 'Extract…',
    help:
      'A subgraph (NODE:ATTR of an If/Loop/Scan), a local function (DOMAIN:NAME) or a cut from input ' +
      'to output tensors, as a new model in a new tab. Give one of the three.',
    options: [
      { key: 'subgraph', label: 'subgraph NODE:ATTR', kind: 'text' },
      { key: 'function', label: 'local function DOMAIN:NAME', kind: 'text' },
      { key: 'inputs', label: 'cut: input tensors (comma separated)', kind: 'values' },
      { key: 'outputs', label: 'cut: output tensors (comma separated)', kind: 'values' },
    ],
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
    } else if (o.kind === 'number') {
      const x = Number(t);
      if (!Number.isFinite(x) || x < 0) throw new Error(`${o.label}: '${t}' is not a non-negative number`);
      out[o.key] = x;
    } else if (o.kind === 'files' || o.kind === 'sizes') {
      const map: Record<string, string> = {};
      for (const line of lines(t)) {
        const m = /^(.+?)=(.+)$/.exec(line);
        const example = o.kind === 'files' ? 'x=inputs/x.npy' : 'x=1x128';
        if (!m) throw new Error(`${o.label.split(':')[0]}: '${line}' is not NAME=VALUE (e.g. ${example})`);
        map[m[1].trim()] = m[2].trim();
      }
      out[o.key] = map;
    } else if (o.kind === 'names' || o.kind === 'values') {
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

// ---- jobs ----------------------------------------------------------------------------------------

/** What running a job needs of the server (StudioClient; fakes in the unit tests). */
export interface JobApi {
  startJob(doc: string, transform: string, options: Record<string, unknown>): Promise<JobInfo>;
  job(id: string): Promise<JobInfo>;
  cancelJob(id: string): Promise<JobInfo>;
  events(): { subscribe(type: string, fn: (data: unknown) => void): () => void };
}

/** Where a running job shows: its progress, and the Cancel it wires. */
export interface JobView {
  update(job: JobInfo): void;
  onCancel(cancel: () => void): void;
  /** Whether the view is on screen (a closed dialog's is not); missing: always. */
  shown?(): boolean;
}

/** A job's line in its dialog: "sanitize: running… 3.2 s", "amp: model runs 35 % (12.0 s)". */
export function jobStatus(j: JobInfo): string {
  const secs = `${j.seconds.toFixed(1)} s`;
  if (j.state === 'succeeded') return `done in ${secs}`;
  if (j.state === 'cancelled') return `cancelled after ${secs}: the model is unchanged`;
  if (j.state === 'failed') return `failed after ${secs}`;
  if (j.cancel_requested) return `cancelling… ${secs}`;
  const pct = j.progress > 0 ? ` ${Math.round(j.progress * 100)} %` : '';
  return `${j.stage || 'running'}…${pct} (${secs})`;
}

/** The jobs a runJob of this page follows, with whether its view is on screen: runJob applies their
 *  result, so the jobs list (jobs.ts) does not, and tells how they ended only when the view is gone. */
export const followedJobs = new Map<string, () => boolean>();

/** With no event for this long, the job is asked for (an event lost on a reconnect, a slow proxy). */
const QUIET_MS = 2000;

/** Starts `transform` on `doc` as a job and follows it to its end through the pushed events (asking
 *  for it when none came for a while); `view` sees each update and gets the Cancel. Resolves with the
 *  finished job and its answer; rejects with the server's message when it failed or was cancelled. */
export async function runJob(
  api: JobApi,
  doc: string,
  transform: string,
  options: Record<string, unknown>,
  view: JobView,
  quietMs = QUIET_MS,
): Promise<JobInfo> {
  const first = await api.startJob(doc, transform, options);
  followedJobs.set(first.id, () => view.shown?.() ?? true);
  view.update(first);
  view.onCancel(() => void api.cancelJob(first.id).catch(() => undefined));
  const ended = await new Promise<JobInfo>((resolve, reject) => {
    let heard = Date.now();
    let done = false;
    let stop: () => void = () => undefined;
    let timer: ReturnType<typeof setInterval> | undefined = undefined;
    const finish = () => {
      done = true;
      stop();
      if (timer !== undefined) clearInterval(timer);
    };
    const seen = (j: JobInfo) => {
      if (done || j.id !== first.id) return;
      heard = Date.now();
      view.update(j);
      if (j.state !== 'running') {
        finish();
        resolve(j);
      }
    };
    // Recent events are replayed inside subscribe: the job may have ended already.
    stop = api.events().subscribe('job', (data) => seen(data as JobInfo));
    if (done) return stop();
    timer = setInterval(
      () => {
        if (done || Date.now() - heard < quietMs) return;
        heard = Date.now();
        api.job(first.id).then(seen, (e: unknown) => {
          if (done) return;
          finish();
          reject(e instanceof Error ? e : new Error(String(e)));
        });
      },
      Math.max(20, quietMs / 4),
    );
  });
  // The event leaves the answer out (it can be large): the job has it.
  const full = ended.state === 'succeeded' ? await api.job(first.id) : ended;
  view.update(full);
  if (full.state === 'cancelled') throw new Error('cancelled: the model is unchanged');
  if (full.state === 'failed') throw new Error(full.error ?? `${transform} failed`);
  return full;
}

// ---- what a selection suggests ---------------------------------------------------------------------

const CONTROL_FLOW = new Set(['If', 'Loop', 'Scan']);

/** The values a cut around `selected` (nodes of graph `g`) takes and gives: inputs are what they read
 *  and none of them makes (initializers left out: they come along), outputs what they make and a node
 *  outside the selection or a graph output reads. */
export function cutOfSelection(selected: ApiNode[], g: ApiGraph): { inputs: string[]; outputs: string[] } {
  const ids = new Set(selected.map((n) => n.id));
  const made = new Set(selected.flatMap((n) => n.outputs).filter((v) => v));
  const inits = new Set(g.initializers.map((i) => i.name));
  const inputs: string[] = [];
  for (const n of selected)
    for (const v of n.inputs) if (v && !made.has(v) && !inits.has(v) && !inputs.includes(v)) inputs.push(v);
  const readOutside = new Set(g.outputs.map((o) => o.name));
  for (const n of g.nodes) if (!ids.has(n.id)) for (const v of n.inputs) readOutside.add(v);
  const outputs = selected.flatMap((n) => n.outputs).filter((v) => v && readOutside.has(v));
  return { inputs, outputs };
}

/** The extraction a selection suggests: one If/Loop/Scan node, its first subgraph; one call of a local
 *  function, that function; other nodes, the cut around them. */
export function extractInitial(selected: ApiNode[], g: ApiGraph | null): Record<string, string> {
  if (!selected.length || !g) return {};
  const one = selected.length === 1 ? selected[0] : null;
  if (one && CONTROL_FLOW.has(one.op_type) && one.name) {
    const attr = one.subgraphs?.[0]?.attribute ?? (one.op_type === 'If' ? 'then_branch' : 'body');
    return { subgraph: `${one.name}:${attr}` };
  }
  if (one?.function) return { function: `${one.function.domain}:${one.function.name}` };
  const cut = cutOfSelection(selected, g);
  return { inputs: cut.inputs.join(', '), outputs: cut.outputs.join(', ') };
}

// ---- the dialog -------------------------------------------------------------------------------------

/** What a dialog may use besides its fields: the studio's files (to choose .npy inputs), the
 *  model's input names, its value names (for a cut's tensors) and the selected links' values. */
export interface FormEnv {
  files?: (dir: string) => Promise<{ root: string; dir: string; entries: FileEntry[] }>;
  inputs?: string[];
  values?: string[];
  links?: string[];
}

/** The tensors a cut may start or end at: graph inputs and node outputs (initializers come along with
 *  the nodes that read them), each once, in graph order. */
export function valueNames(g: ApiGraph | null): string[] {
  if (!g) return [];
  const inits = new Set(g.initializers.map((i) => i.name));
  const out = new Set<string>();
  for (const i of g.inputs) if (!inits.has(i.name)) out.add(i.name);
  for (const n of g.nodes) for (const v of n.outputs) if (v) out.add(v);
  return [...out];
}

/** The names of `all` that contain `query` (case-insensitive), the selected links' first (in their
 *  order), at most `limit` of them. */
export function matchingValues(all: string[], query: string, links: string[] = [], limit = 50): string[] {
  const q = query.trim().toLowerCase();
  const hit = (v: string) => !q || v.toLowerCase().includes(q);
  const known = new Set(all);
  const first = new Set(links.filter((v) => known.has(v) && hit(v)));
  const out = [...first].slice(0, limit);
  for (const v of all) {
    if (out.length >= limit) break;
    if (!first.has(v) && hit(v)) out.push(v);
  }
  return out;
}

/** A comma-separated list of names with `name` added, or taken out when it is there. */
export function toggleName(text: string, name: string): string {
  const names = text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x);
  const i = names.indexOf(name);
  if (i >= 0) names.splice(i, 1);
  else names.push(name);
  return names.join(', ');
}

/** A filter and the matching value names under a cut's field: a click adds the name to the field, or
 *  takes it out (marked when in it). */
function valuePicker(env: FormEnv, field: HTMLInputElement, id: string): HTMLElement {
  const filter = h('input', {
    type: 'search',
    placeholder: 'filter tensors…',
    'data-testid': `${id}-filter`,
  });
  const list = h('div', { className: 'value-picker-list', 'data-testid': `${id}-values` });
  const show = () => {
    clear(list);
    const chosen = new Set(field.value.split(',').map((x) => x.trim()));
    const links = new Set(env.links);
    for (const v of matchingValues(env.values ?? [], filter.value, env.links)) {
      const mark = chosen.has(v) ? '✓ ' : '';
      const what = links.has(v) ? ' (selected link)' : '';
      list.append(
        h('div', {
          className: 'file-entry',
          'data-testid': 'value-option',
          'data-value': v,
          text: `${mark}${v}${what}`,
          onclick: () => ((field.value = toggleName(field.value, v)), show()),
        }),
      );
    }
  };
  filter.addEventListener('input', show);
  field.addEventListener('input', show);
  show();
  return h(
    'div',
    { className: 'field' },
    h('label', {}),
    h('div', { className: 'value-picker' }, filter, list),
  );
}

/** Adds or replaces the line `NAME=VALUE` of a NAME=VALUE list. */
export function setLine(text: string, name: string, value: string): string {
  const kept = lines(text).filter((l) => l.split('=')[0].trim() !== name);
  return [...kept, `${name}=${value}`].join('\n');
}

/** A small file chooser inside the dialog (the Open dialog would replace it): folders to go into,
 *  .npy files to pick for the input chosen above them. */
function npyChooser(env: FormEnv, field: HTMLTextAreaElement): HTMLElement {
  const box = h('div', { className: 'npy-chooser', 'data-testid': 'npy-chooser' });
  const input = h(
    'select',
    { 'data-testid': 'npy-input' },
    ...(env.inputs ?? []).map((n) => h('option', { value: n, text: n })),
  );
  const list = h('div', { className: 'npy-files' });
  const show = async (dir: string) => {
    const listing = await env.files!(dir);
    clear(list);
    const up = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
    if (dir)
      list.append(h('div', { className: 'file-entry dir', text: '../', onclick: () => void show(up) }));
    for (const e of listing.entries) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.kind === 'dir')
        list.append(
          h('div', { className: 'file-entry dir', text: `${e.name}/`, onclick: () => void show(rel) }),
        );
      else if (e.name.endsWith('.npy'))
        list.append(
          h('div', {
            className: 'file-entry file',
            'data-testid': 'npy-file',
            text: e.name,
            onclick: () => (field.value = setLine(field.value, input.value, rel)),
          }),
        );
    }
  };
  const open = h('button', {
    text: 'Choose .npy…',
    'data-testid': 'npy-choose',
    onclick: () => void show('').catch((e: unknown) => (list.textContent = String(e))),
  });
  box.append(h('span', { className: 'hint', text: 'for input' }), input, open);
  return h('div', { className: 'field' }, h('label', { text: '.npy file' }), h('div', {}, box, list));
}

/** The dialog's body: a field per option, Apply; while the job runs its progress and Cancel; then the
 *  log, or why it was refused. `apply` runs it (with the view it reports to) and gives the log.
 *  `initial` overrides fields' initial text. */
export function transformForm(
  spec: TransformSpec,
  apply: (options: Record<string, unknown>, view: JobView) => Promise<TransformLog>,
  initial: Record<string, string> = {},
  env: FormEnv = {},
): HTMLElement {
  const err = h('div', { className: 'error-text', 'data-testid': 'transform-error' });
  const log = h('pre', { className: 'transform-log', 'data-testid': 'transform-log' });
  const bar = h('progress', { max: 1, value: 0, 'data-testid': 'transform-progress' });
  const status = h('span', { className: 'transform-status', 'data-testid': 'transform-status' });
  const cancel = h('button', { text: 'Cancel', 'data-testid': 'transform-cancel', disabled: true });
  const running = h('div', { className: 'tool-bar transform-running', hidden: true }, bar, status, cancel);
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>();
  const fields = spec.options.map((o) => {
    const id = `transform-${o.key}`;
    const start: string | boolean | undefined = o.key in initial ? initial[o.key] : o.initial;
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    let extra: HTMLElement | null = null; // a row of its own under the field
    if (o.kind === 'bool') {
      input = h('input', { type: 'checkbox', 'data-testid': id, checked: start === true });
    } else if (o.kind === 'dtype' || o.kind === 'choice') {
      const values = o.kind === 'dtype' ? DTYPES : (o.choices ?? []);
      input = h('select', { 'data-testid': id }, ...values.map((d) => h('option', { value: d, text: d })));
      input.value = String(start ?? values[0]);
    } else if (o.kind === 'shapes' || o.kind === 'dims' || o.kind === 'files' || o.kind === 'sizes') {
      input = h('textarea', { rows: 2, 'data-testid': id });
      input.value = String(start ?? '');
      if (o.kind === 'files' && env.files && env.inputs?.length) extra = npyChooser(env, input);
    } else {
      input = h('input', { type: 'text', 'data-testid': id, value: String(start ?? '') });
      if (o.kind === 'values' && env.values?.length) extra = valuePicker(env, input, id);
    }
    inputs.set(o.key, input);
    const row = h('div', { className: 'field' }, h('label', { text: o.label, title: o.label }), input);
    return extra ? h('div', {}, row, extra) : row;
  });
  const view: JobView = {
    update: (j) => {
      bar.value = j.state === 'succeeded' ? 1 : j.progress;
      status.textContent = jobStatus(j);
      cancel.disabled = j.state !== 'running' || j.cancel_requested;
      cancel.hidden = j.state !== 'running';
    },
    onCancel: (fn) => {
      cancel.onclick = () => ((cancel.disabled = true), fn());
    },
    shown: () => form.isConnected,
  };
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
      running.hidden = false;
      bar.value = 0;
      status.textContent = 'starting…';
      try {
        log.textContent = logLines(await apply(options, view)).join('\n');
      } catch (e) {
        err.textContent = String((e as Error).message ?? e);
      } finally {
        button.disabled = false;
        cancel.disabled = true;
      }
    },
  });
  const form = h(
    'div',
    { className: 'transform-form' },
    h('div', { className: 'hint', text: spec.help }),
    ...fields,
    running,
    button,
    err,
    log,
  );
  return form;
}
