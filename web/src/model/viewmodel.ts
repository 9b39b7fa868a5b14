// The neutral view model: what the canvas shows of one graph, built from the server's graph answer.
// Graph inputs and outputs become nodes of their own; values become edges between terminals; Constant
// nodes are hidden unless asked for, and their consumers' terminals then read as constant-fed.
import type { ApiGraph, ApiNode, FunctionKey, RegistryOp, Severity } from '../api/types';
import { formatValue } from '../params/parse';

export type TermState = 'free' | 'linked' | 'init';

export interface Terminal {
  value: string; // value name ('' when free)
  label: string; // formal name from the schema, or the index
  state: TermState;
  optional: boolean;
  variadicFree: boolean; // the extra free terminal a variadic input grows
}

export type LeafKind = 'node' | 'input' | 'output';

export interface Leaf {
  kind: LeafKind;
  id: number; // server node id; -1 for graph inputs/outputs
  key: string; // stable key: 'n:ID', 'i:NAME', 'o:NAME'
  name: string;
  op: string;
  domain: string;
  scope: string;
  lines: string[]; // key attributes as text
  inputs: Terminal[];
  outputs: Terminal[];
  severity: Severity;
  subgraphs: number;
  /** A node of a local function's body shown inside its call's group (calls expand in place, as name
   *  scopes do): `call` is the calling node's id, `node` the body's node as the server has it (its own
   *  value names; the leaf's terminals carry the names they have at the call). `id` is the node's id in
   *  the body, so the leaf is not in byNodeId: edits go through the function's graph path. */
  body?: { call: number; fn: FunctionKey; node: ApiNode };
  /** Its node was removed by an edit patched in place (removeLeaves): kept so that leaf indices stay
   *  put, never drawn, laid out or picked. */
  removed?: boolean;
}

export interface Edge {
  src: number; // leaf index
  srcPort: number;
  dst: number;
  dstPort: number;
  value: string;
}

export interface ViewModel {
  version: number;
  leaves: Leaf[];
  edges: Edge[];
  hiddenConstants: number;
  byNodeId: Map<number, number>;
  /** Calls of local functions shown as a group of their body's leaves: call node id -> leaf indices. */
  calls?: Map<number, number[]>;
  /** What appending or removing a node needs (appendNodes, removeLeaves): value -> [leaf, port] of its
   *  producer, and how many terminals read each value (node inputs and graph outputs). */
  producer?: Map<string, [number, number]>;
  used?: Map<string, number>;
  stateOf?: (v: string) => TermState;
  registry?: Map<string, RegistryOp>;
  /** Indices of the graph outputs' leaves (edits patched in place never add or remove one), so that a
   *  removal finds the outputs it frees without a pass over 50,000 leaves. */
  outputLeaves?: number[];
}

export interface ViewOptions {
  showConstants: boolean;
  registry?: Map<string, RegistryOp>;
  /** Bodies of the model's local functions (their graph answers) by functionKeyString: a call of one
   *  with at least one node shows as a group of the body's nodes instead of a single node. */
  bodies?: Map<string, ApiGraph>;
}

export const functionKeyString = (f: FunctionKey) => `${f.domain}::${f.name}::${f.overload ?? ''}`;

/** Marks a call's group in its scope path; the rest of the segment names the call and the function. */
export const CALL_MARK = '\u0192 ';

/** One node as the canvas shows it: a node of the graph, or of a function body inside a call. */
interface Item {
  node: ApiNode;
  body?: Leaf['body'];
}

/** The body of each call as nodes renamed to the values they read and write at the call: the body's
 *  formal inputs become the call's inputs, its formal outputs the call's outputs, and its own values
 *  names no graph value can have. Kept per call node object and body, so a rebuild reuses them. */
const callCache = new WeakMap<ApiNode, { body: ApiGraph; items: Item[] }>();

function callItems(call: ApiNode, fn: FunctionKey, body: ApiGraph): Item[] {
  const cached = callCache.get(call);
  if (cached?.body === body) return cached.items;
  const rename = new Map<string, string>();
  body.inputs.forEach((v, k) => rename.set(v.name, call.inputs[k] ?? ''));
  body.outputs.forEach((v, k) => {
    if (call.outputs[k] && !rename.has(v.name)) rename.set(v.name, call.outputs[k]);
  });
  const local = (v: string) => (v ? (rename.get(v) ?? `${call.id}\u00a7${v}`) : '');
  const last = call.name.slice(call.name.lastIndexOf('/') + 1) || `#${call.id}`;
  const scope = `${call.scope ?? ''}/${CALL_MARK}${fn.name} ${last}`;
  const items = body.nodes.map((n) => ({
    node: { ...n, scope, inputs: n.inputs.map(local), outputs: n.outputs.map(local) },
    body: { call: call.id, fn, node: n },
  }));
  callCache.set(call, { body, items });
  return items;
}

function graphItems(g: ApiGraph, bodies: Map<string, ApiGraph> | undefined): Item[] {
  if (!bodies?.size) return g.nodes.map((node) => ({ node }));
  const out: Item[] = [];
  for (const node of g.nodes) {
    const body = node.function && bodies.get(functionKeyString(node.function));
    if (body && body.nodes.length) out.push(...callItems(node, node.function!, body));
    else out.push({ node });
  }
  return out;
}

export const registryKey = (domain: string, op: string) => `${domain || 'ai.onnx'}::${op}`;

const MAX_ATTR_LINES = 3;

/** Per node object, what its leaf was made from: its attribute lines and its leaf (with the registry
 *  entry it was made with). The graph held by the app keeps its node objects across edits (a patch
 *  replaces only the nodes that changed), so a rebuild formats and allocates only for those. One entry
 *  per node: a WeakMap entry is costly to the collector, and there were two per node. */
interface NodeCache {
  lines: string[] | undefined;
  leaf: Leaf | undefined;
  op: RegistryOp | undefined;
}
const nodeCache = new WeakMap<ApiNode, NodeCache>();

function cacheOf(node: ApiNode): NodeCache {
  let c = nodeCache.get(node);
  if (!c) nodeCache.set(node, (c = { lines: undefined, leaf: undefined, op: undefined }));
  return c;
}

export function attrLines(node: ApiNode): string[] {
  const c = cacheOf(node);
  return (c.lines ??= formatLines(node));
}

function formatLines(node: ApiNode): string[] {
  // Subgraphs first: they are what a double-click opens.
  const lines: string[] = (node.subgraphs ?? []).map(
    (g) => `${g.attribute}: ${g.nodes} nodes (open: double-click)`,
  );
  for (const a of node.attributes) {
    if (lines.length === MAX_ATTR_LINES) break;
    if (a.type === 'graph' || a.type === 'graphs') continue;
    lines.push(`${a.name}: ${formatValue(a.type, a.value, 24)}`);
  }
  return lines;
}

function inputTerminals(
  node: ApiNode,
  op: RegistryOp | undefined,
  state: (v: string) => TermState,
): Terminal[] {
  const formals = op?.inputs ?? [];
  const terms: Terminal[] = [];
  const variadic = formals.length > 0 && formals[formals.length - 1].option === 'variadic';
  const count = Math.max(node.inputs.length, variadic ? formals.length - 1 : formals.length);
  for (let i = 0; i < count; i++) {
    const formal = formals[Math.min(i, formals.length - 1)];
    const value = node.inputs[i] ?? '';
    terms.push({
      value,
      label: formal?.name ?? String(i),
      state: value ? state(value) : 'free',
      optional: formal?.option === 'optional',
      variadicFree: false,
    });
  }
  if (variadic) {
    const formal = formals[formals.length - 1];
    terms.push({ value: '', label: formal.name, state: 'free', optional: true, variadicFree: true });
  }
  return terms;
}

function outputTerminals(
  node: ApiNode,
  op: RegistryOp | undefined,
  used: { has(v: string): boolean },
): Terminal[] {
  const formals = op?.outputs ?? [];
  let single = 0;
  for (const f of formals) if (f.option === 'single') single++;
  const count = Math.max(node.outputs.length, single, 1);
  const terms: Terminal[] = [];
  for (let i = 0; i < count; i++) {
    const value = node.outputs[i] ?? '';
    const formal = formals[Math.min(i, formals.length - 1)];
    terms.push({
      value,
      label: formal?.name ?? String(i),
      state: value && used.has(value) ? 'linked' : 'free',
      optional: formal?.option === 'optional',
      variadicFree: false,
    });
  }
  return terms;
}

function sameStates(
  leaf: Leaf,
  stateOf: (v: string) => TermState,
  used: { has(v: string): boolean },
): boolean {
  for (const t of leaf.inputs) if (t.state !== (t.value ? stateOf(t.value) : 'free')) return false;
  for (const t of leaf.outputs)
    if (t.state !== (t.value && used.has(t.value) ? 'linked' : 'free')) return false;
  return true;
}

export function buildViewModel(g: ApiGraph, opts: ViewOptions): ViewModel {
  const initNames = new Set<string>();
  for (const i of g.initializers) initNames.add(i.name);
  // Items (a node with the call it belongs to) only when some call shows its body: otherwise the
  // graph's nodes themselves, without an object per node.
  const items = opts.bodies?.size ? graphItems(g, opts.bodies) : null;
  const count = items ? items.length : g.nodes.length;
  const nodeAt = (k: number): ApiNode => (items ? items[k].node : g.nodes[k]);
  const hideConstants = !opts.showConstants;
  const hiddenNode = (n: ApiNode) => hideConstants && n.op_type === 'Constant' && !n.domain;
  let hidden = 0;
  const constOutputs = new Set<string>();
  const used = new Map<string, number>();
  for (let k = 0; k < count; k++) {
    const n = nodeAt(k);
    if (hiddenNode(n)) {
      hidden++;
      for (const o of n.outputs) constOutputs.add(o);
    }
    for (const v of n.inputs) if (v) used.set(v, (used.get(v) ?? 0) + 1);
  }
  for (const o of g.outputs) used.set(o.name, (used.get(o.name) ?? 0) + 1);

  const leaves: Leaf[] = [];
  const producer = new Map<string, [number, number]>();
  const stateOf = (v: string): TermState => (initNames.has(v) || constOutputs.has(v) ? 'init' : 'linked');

  for (const inp of g.inputs) {
    if (initNames.has(inp.name)) continue; // old-style inputs that are initializers are not graph inputs here
    producer.set(inp.name, [leaves.length, 0]);
    leaves.push({
      kind: 'input',
      id: -1,
      key: `i:${inp.name}`,
      name: inp.name,
      op: 'Input',
      domain: '',
      scope: '',
      lines: [`${inp.type} [${(inp.shape ?? []).join(', ')}]`],
      inputs: [],
      outputs: [
        {
          value: inp.name,
          label: inp.name,
          state: used.has(inp.name) ? 'linked' : 'free',
          optional: false,
          variadicFree: false,
        },
      ],
      severity: null,
      subgraphs: 0,
    });
  }
  const byNodeId = new Map<number, number>();
  const calls = new Map<number, number[]>();
  for (let k = 0; k < count; k++) {
    const n = nodeAt(k);
    if (hiddenNode(n)) continue;
    const body = items ? items[k].body : undefined;
    const op = opts.registry?.get(registryKey(n.domain, n.op_type));
    const cache = cacheOf(n);
    let leaf = cache.leaf;
    if (leaf && cache.op === op && sameStates(leaf, stateOf, used)) {
      leaf.severity = n.severity ?? null; // the app updates severities on the node objects it keeps
    } else {
      leaf = {
        kind: 'node',
        id: n.id,
        key: body ? `f:${body.call}:${n.id}` : `n:${n.id}`,
        name: n.name,
        op: n.op_type,
        domain: n.domain,
        scope: n.scope ?? '',
        lines: (cache.lines ??= formatLines(n)),
        inputs: inputTerminals(n, op, stateOf),
        outputs: outputTerminals(n, op, used),
        severity: n.severity ?? null,
        subgraphs: n.subgraphs?.length ?? 0,
      };
      if (body) leaf.body = body;
      cache.leaf = leaf;
      cache.op = op;
    }
    const i = leaves.length;
    if (body) {
      const list = calls.get(body.call);
      if (list) list.push(i);
      else calls.set(body.call, [i]);
    } else byNodeId.set(n.id, i);
    for (let port = 0; port < n.outputs.length; port++)
      if (n.outputs[port]) producer.set(n.outputs[port], [i, port]);
    leaves.push(leaf);
  }
  const outputLeaves: number[] = [];
  for (const out of g.outputs) {
    outputLeaves.push(leaves.length);
    leaves.push({
      kind: 'output',
      id: -1,
      key: `o:${out.name}`,
      name: out.name,
      op: 'Output',
      domain: '',
      scope: '',
      lines: [`${out.type} [${(out.shape ?? []).join(', ')}]`],
      inputs: [
        {
          value: out.name,
          label: out.name,
          state: producer.has(out.name) ? 'linked' : 'free',
          optional: false,
          variadicFree: false,
        },
      ],
      outputs: [],
      severity: null,
      subgraphs: 0,
    });
  }

  const edges: Edge[] = [];
  for (let dst = 0; dst < leaves.length; dst++) {
    const inputs = leaves[dst].inputs;
    for (let dstPort = 0; dstPort < inputs.length; dstPort++) {
      const value = inputs[dstPort].value;
      const p = value ? producer.get(value) : undefined;
      if (p) edges.push({ src: p[0], srcPort: p[1], dst, dstPort, value });
    }
  }
  return {
    version: g.version,
    leaves,
    edges,
    hiddenConstants: hidden,
    byNodeId,
    calls,
    producer,
    used,
    stateOf,
    registry: opts.registry,
    outputLeaves,
  };
}

/** Appends nodes just added at the end of the graph as leaves at the end of `vm` (after the graph
 *  outputs: leaf order does not matter to the layout), with their edges, and marks the outputs they now
 *  read as linked (those leaves are pushed to `relinked`: what changed on screen besides the new ones).
 *  Returns the leaf indices, or null when the view model must be rebuilt: a Constant (hidden or not by
 *  the options), or an output some existing node or graph output already reads. */
export function appendNodes(vm: ViewModel, nodes: ApiNode[], relinked: number[] = []): number[] | null {
  const { producer, used, stateOf } = vm;
  if (!producer || !used || !stateOf) return null;
  for (const n of nodes) {
    if (n.op_type === 'Constant' || vm.byNodeId.has(n.id)) return null;
    if (n.function) return null; // a call of a local function may show as a group of its body
    if (n.outputs.some((v) => v && (used.has(v) || producer.has(v)))) return null;
  }
  const out: number[] = [];
  for (const n of nodes) {
    const op = vm.registry?.get(registryKey(n.domain, n.op_type));
    const i = vm.leaves.length;
    vm.leaves.push({
      kind: 'node',
      id: n.id,
      key: `n:${n.id}`,
      name: n.name,
      op: n.op_type,
      domain: n.domain,
      scope: n.scope ?? '',
      lines: attrLines(n),
      inputs: inputTerminals(n, op, stateOf),
      outputs: outputTerminals(n, op, used),
      severity: n.severity ?? null,
      subgraphs: n.subgraphs?.length ?? 0,
    });
    vm.byNodeId.set(n.id, i);
    n.outputs.forEach((v, k) => v && producer.set(v, [i, k]));
    for (const v of n.inputs) if (v) used.set(v, (used.get(v) ?? 0) + 1);
    vm.leaves[i].inputs.forEach((t, dstPort) => {
      const p = t.value ? producer.get(t.value) : undefined;
      if (!p) return;
      vm.edges.push({ src: p[0], srcPort: p[1], dst: i, dstPort, value: t.value });
      const src = vm.leaves[p[0]];
      if (src.outputs[p[1]]?.state !== 'free') return;
      // A copy: leaves are shared with the cache of the previous view model.
      const outputs = src.outputs.map((o, k) => (k === p[1] ? { ...o, state: 'linked' as const } : o));
      vm.leaves[p[0]] = { ...src, outputs };
      relinked.push(p[0]);
    });
    out.push(i);
  }
  return out;
}

/** Removes the leaves of removed nodes from `vm` in place: each becomes a tombstone (`removed`, same
 *  index, so the layout and the scene keep every other index), its edges go, the values it produced
 *  lose their producer, and a value no longer read by anyone frees its producer's output terminal (a
 *  graph output it fed shows a free terminal). Returns the tombstones' indices and the leaves whose
 *  terminals changed, or null when the view model must be rebuilt: a node not shown (a hidden
 *  Constant, whose consumers read as constant-fed) or one already gone. */
export function removeLeaves(vm: ViewModel, ids: number[]): { removed: number[]; touched: number[] } | null {
  const { producer, used } = vm;
  if (!producer || !used) return null;
  const removed: number[] = [];
  for (const id of ids) {
    const i = vm.byNodeId.get(id);
    if (i === undefined || vm.leaves[i].removed) return null;
    removed.push(i);
  }
  const gone = new Set(removed);
  const freed: string[] = [];
  const lost = new Set<string>(); // values that lost their producer
  for (const i of removed) {
    const leaf = vm.leaves[i];
    vm.byNodeId.delete(leaf.id);
    for (const t of leaf.outputs) {
      if (t.value && producer.get(t.value)?.[0] === i) {
        producer.delete(t.value);
        lost.add(t.value);
      }
    }
    for (const t of leaf.inputs) {
      if (!t.value) continue;
      const k = (used.get(t.value) ?? 1) - 1;
      if (k > 0) used.set(t.value, k);
      else {
        used.delete(t.value);
        freed.push(t.value);
      }
    }
    vm.leaves[i] = { ...leaf, key: '', removed: true };
  }
  // Compacted in place, one removed leaf compared directly: a filter with set lookups over 50,000
  // edges was a few ms of every removal.
  const only = removed.length === 1 ? removed[0] : -1;
  let kept = 0;
  for (const e of vm.edges) {
    const drop = only >= 0 ? e.src === only || e.dst === only : gone.has(e.src) || gone.has(e.dst);
    if (!drop) vm.edges[kept++] = e;
  }
  vm.edges.length = kept;
  const touched = new Set<number>();
  const retouch = (i: number, side: 'inputs' | 'outputs', port: number, state: TermState) => {
    const leaf = vm.leaves[i];
    if (leaf[side][port]?.state === state) return;
    // A copy: leaves are shared with the cache of earlier view models.
    const terms = leaf[side].map((t, k) => (k === port ? { ...t, state } : t));
    vm.leaves[i] = { ...leaf, [side]: terms };
    touched.add(i);
  };
  for (const v of freed) {
    const p = producer.get(v);
    if (p && !gone.has(p[0])) retouch(p[0], 'outputs', p[1], 'free');
  }
  if (lost.size) {
    const outputs = vm.outputLeaves ?? vm.leaves.map((_, i) => i);
    for (const i of outputs) {
      const l = vm.leaves[i];
      if (l.kind === 'output' && lost.has(l.name)) retouch(i, 'inputs', 0, 'free');
    }
  }
  return { removed, touched: [...touched] };
}

/** A leaf patched with what an edit changed on its node, when that cannot change the graph's
 *  structure: same operator, scope and values in and out (so the same terminals and edges), not a
 *  Constant (hidden or not by the view options). Null when the view model must be rebuilt. */
export function patchedLeaf(leaf: Leaf, n: ApiNode): Leaf | null {
  if (leaf.kind !== 'node' || leaf.id !== n.id || n.op_type === 'Constant') return null;
  if (n.op_type !== leaf.op || n.domain !== leaf.domain || (n.scope ?? '') !== leaf.scope) return null;
  if (!sameValues(n.inputs, leaf.inputs) || !sameValues(n.outputs, leaf.outputs)) return null;
  return {
    ...leaf,
    name: n.name,
    lines: attrLines(n),
    severity: n.severity ?? null,
    subgraphs: n.subgraphs?.length ?? 0,
  };
}

function sameValues(values: string[], terms: Terminal[]): boolean {
  if (values.length > terms.length) return false;
  for (let k = 0; k < terms.length; k++) if ((values[k] ?? '') !== terms[k].value) return false;
  return true;
}

/** What relinkLeaves did: the relinked leaves, the producers whose output terminal changed state, and
 *  each old edge's new index (-1: dropped; `kept` of them stay, the new ones follow at the end). */
export interface Relinked {
  relinked: number[];
  touched: number[];
  edgeIndex: Int32Array;
  kept: number;
}

/** Nodes whose inputs an edit changed and nothing else that shapes the graph (connect, disconnect: same
 *  operator, scope and outputs) relinked in place: new input terminals, their edges replaced (the
 *  others compacted, the new ones appended), and the producers of values now read, or no longer read,
 *  show linked or free outputs. A rebuild of a 50,000-node view model for one link was 0.2-0.8 s under
 *  load. Null, with `vm` untouched, when it must be rebuilt (a leaf not shown, a Constant, a call). */
export function relinkLeaves(vm: ViewModel, nodes: ApiNode[]): Relinked | null {
  const { producer, used, stateOf } = vm;
  if (!producer || !used || !stateOf) return null;
  const at: number[] = [];
  for (const n of nodes) {
    const i = vm.byNodeId.get(n.id);
    const leaf = i === undefined ? undefined : vm.leaves[i];
    if (!leaf || leaf.kind !== 'node' || leaf.removed || leaf.body || leaf.id !== n.id) return null;
    if (n.op_type === 'Constant' || n.function) return null;
    if (n.op_type !== leaf.op || n.domain !== leaf.domain || (n.scope ?? '') !== leaf.scope) return null;
    if (!sameValues(n.outputs, leaf.outputs)) return null;
    at.push(i!);
  }
  const reread = new Set<string>(); // values whose count of readers went to or from 0
  nodes.forEach((n, k) => {
    const leaf = vm.leaves[at[k]];
    for (const t of leaf.inputs) {
      if (!t.value) continue;
      const c = (used.get(t.value) ?? 1) - 1;
      if (c > 0) used.set(t.value, c);
      else {
        used.delete(t.value);
        reread.add(t.value);
      }
    }
    for (const v of n.inputs) {
      if (!v) continue;
      const c = used.get(v) ?? 0;
      used.set(v, c + 1);
      if (c === 0) reread.add(v);
    }
    const op = vm.registry?.get(registryKey(n.domain, n.op_type));
    // A new object: leaves are shared with the cache of earlier view models.
    vm.leaves[at[k]] = {
      ...leaf,
      name: n.name,
      lines: attrLines(n),
      inputs: inputTerminals(n, op, stateOf),
      severity: n.severity ?? null,
      subgraphs: n.subgraphs?.length ?? 0,
    };
  });
  const mine = new Set(at);
  const edgeIndex = new Int32Array(vm.edges.length);
  let kept = 0;
  for (let j = 0; j < vm.edges.length; j++) {
    const e = vm.edges[j];
    edgeIndex[j] = mine.has(e.dst) ? -1 : kept;
    if (edgeIndex[j] >= 0) vm.edges[kept++] = e;
  }
  vm.edges.length = kept;
  for (const i of at) {
    vm.leaves[i].inputs.forEach((t, dstPort) => {
      const p = t.value ? producer.get(t.value) : undefined;
      if (p) vm.edges.push({ src: p[0], srcPort: p[1], dst: i, dstPort, value: t.value });
    });
  }
  const touched = new Set<number>();
  for (const v of reread) {
    const p = producer.get(v);
    if (p && retouch(vm, p[0], 'outputs', p[1], used.has(v) ? 'linked' : 'free')) touched.add(p[0]);
  }
  return { relinked: at, touched: [...touched], edgeIndex, kept };
}

/** Sets one terminal's state on a copy of leaf i (leaves are shared with the cache of earlier view
 *  models); false when it already had that state. */
function retouch(
  vm: ViewModel,
  i: number,
  side: 'inputs' | 'outputs',
  port: number,
  state: TermState,
): boolean {
  const leaf = vm.leaves[i];
  if (!leaf[side][port] || leaf[side][port].state === state) return false;
  const terms = leaf[side].map((t, k) => (k === port ? { ...t, state } : t));
  vm.leaves[i] = { ...leaf, [side]: terms };
  return true;
}
