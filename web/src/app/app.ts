// The studio app: documents in tabs, the canvas, the panels, keyboard shortcuts. Every edit is a command
// sent to the server; the answer (document state, diagnostics) and a re-fetched graph update the view.
import { ApiError, StudioClient } from '../api/client';
import type {
  ApiGraph,
  ApiNode,
  AttrType,
  Command,
  CommandAnswer,
  Diagnostic,
  DocumentInfo,
  Severity,
  FunctionKey,
  GraphPath,
  RegistryOp,
  TensorValue,
  TransformLog,
} from '../api/types';
import { DEFAULT_EXPORT, exportRaster, exportSvg, type ExportOptions } from '../export/export';
import { functionKeyString, registryKey, type Leaf } from '../model/viewmodel';
import {
  applyDiagnosticsDiff,
  nextDiagnostics,
  pushedAction,
  sameDiagnostics,
  type DiagnosticsEvent,
} from '../model/diagnostics';
import { parseDims } from '../params/parse';
import { CheckList } from '../ui/checklist';
import { clear, h } from '../ui/dom';
import { Explorer } from '../ui/explorer';
import { InitializerPanel, npyReplaceRow } from '../ui/initializers';
import { Palette } from '../ui/palette';
import { ParamEditor } from '../ui/params';
import { QuickAdd } from '../ui/quickadd';
import {
  EDIT_LIMIT,
  TENSOR_DTYPES,
  TensorGrid,
  dtypeRow,
  resizedValues,
  retypedValues,
  tensorEditor,
} from '../ui/tensoreditor';
import {
  extractInitial,
  runJob,
  transformForm,
  valueNames,
  type JobView,
  type TransformSpec,
} from '../ui/transforms';
import { CanvasView, type TerminalRef } from './canvasview';
import { emptyFunction, functionFromSelection } from './functions';

/** How long after a partial answer's frame the app waits for the pushed finished list before asking. */
const PUSH_WAIT_MS = 3000;

/** Element types the paged tensor editor reads and writes: every type a tensor may be typed in. */
const PAGED_TYPES = new Set(TENSOR_DTYPES);

export interface Shell {
  tabs: HTMLElement;
  left: HTMLElement;
  right: HTMLElement;
  bottom: HTMLElement;
  canvas: HTMLCanvasElement;
  status: HTMLElement;
  toast: HTMLElement;
  dialogs: HTMLElement;
}

export class App {
  readonly canvas: CanvasView;
  docs: DocumentInfo[] = [];
  doc: DocumentInfo | null = null;
  graph: ApiGraph | null = null;
  ops: RegistryOp[] = [];
  registry = new Map<string, RegistryOp>();
  diagnostics: Diagnostic[] = [];
  /** The document and version `diagnostics` is of: edits ask the server for the diff from it. */
  private diagnosticsOf: { doc: string; version: number } | null = null;
  busy = 0;
  graphPath: GraphPath | null = null; // the graph of the document shown (null: main)
  subTabs: SubTab[] = [];
  private outerNames = new Set<string>(); // names of the graphs holding the subgraph shown
  firstRenderMs = 0;
  lastError = '';
  /** performance.now() of the last edit's stages: sent, answered, nodes fetched, view updated (bench). */
  editMarks: Record<string, number> = {};
  private palette: Palette;
  private explorer: Explorer;
  private initPanel: InitializerPanel;
  private params: ParamEditor;
  private checklist: CheckList;
  private quickAdd: QuickAdd;
  private mouse: [number, number] = [0, 0];

  constructor(
    readonly shell: Shell,
    readonly client: StudioClient | null,
  ) {
    this.canvas = new CanvasView(shell.canvas, {
      selectionChanged: () => this.showParams(),
      connect: (a, b) => void this.connect(a, b),
      disconnect: (leaf, port) => void this.disconnect(leaf, port),
      moved: () => void this.savePositions(),
      dropOp: (key, x, y) => void this.addNode(key, x, y),
      terminalDoubleClick: (t) => void this.terminalDoubleClick(t),
      nodeDoubleClick: (leaf) => {
        const l = this.canvas.vm?.leaves[leaf];
        if (l?.body) this.openFunction(l.body.fn);
        else if (l?.kind === 'node') void this.openSubgraph(l.id);
      },
      layoutDone: () => this.onLayout(),
      status: (s) => (shell.status.textContent = s),
    });
    client?.events().subscribe('diagnostics', (d) => this.pushed(d as DiagnosticsEvent));
    const [paletteBox, explorerBox, initBox] = leftTabs(
      shell.left,
      ['Layers', 'Explorer', 'Initializers'],
      (k) => (k === 1 ? this.explorer.shown() : k === 2 ? this.initPanel.shown() : undefined),
    );
    this.explorer = new Explorer(
      explorerBox,
      (id) => {
        const i = this.canvas.vm?.byNodeId.get(id);
        if (i !== undefined) this.canvas.select([i]);
      },
      (id) => void this.canvas.focusNode(id),
    );
    this.initPanel = new InitializerPanel(initBox, {
      run: (cmd) => this.run(cmd),
      preview: (name, path) => this.client!.initializer(this.doc!.id, name, 64, path ?? this.graphPath),
      edit: (name) => void this.editInitializer(name),
      remove: (name) => this.removeInitializer(name),
      selected: () => this.selectedNodes(),
      registry: () => this.registry,
    });
    this.palette = new Palette(paletteBox, (key) => {
      const [x0, y0, x1, y1] = this.canvas.renderer.view();
      void this.addNode(key, (x0 + x1) / 2, (y0 + y1) / 2);
    });
    this.params = new ParamEditor(shell.right, {
      editTensor: (nodes, name, value, unset) => void this.editTensorAttribute(nodes, name, value, unset),
      editList: (nodes, name, type, values) => this.editListAttribute(nodes, name, type, values),
      rename: (n, name) => void this.run(this.at(n, { type: 'rename_node', node: n.id, name })),
      setAttr: (nodes, attr) =>
        void (nodes.length === 1
          ? this.run(this.at(nodes[0], { type: 'set_attribute', node: nodes[0].id, attribute: attr }))
          : this.runBatch(
              `Set ${attr.name} on ${nodes.length} nodes`,
              nodes.map((n) => this.at(n, { type: 'set_attribute', node: n.id, attribute: attr })),
            )),
      resetAttr: (nodes, name) =>
        void (nodes.length === 1
          ? this.run(this.at(nodes[0], { type: 'reset_attribute', node: nodes[0].id, name }))
          : this.runBatch(
              `Reset ${name}`,
              nodes.map((n) => this.at(n, { type: 'reset_attribute', node: n.id, name })),
            )),
      setMetadata: (fields) => void this.run({ type: 'set_model_metadata', ...fields }),
      setOpset: (domain, version) => void this.run({ type: 'set_opset_import', domain, version }),
      openFunction: (f) => this.openFunction(f),
      newFunction: () => this.functionDialog(false),
      deleteFunction: (f) =>
        void this.run({
          type: 'remove_function',
          function: f.overload ? f : { domain: f.domain, name: f.name },
        }),
      editFunctionAttributes: (k) => void this.functionAttributesDialog(k),
    });
    this.checklist = new CheckList(
      shell.bottom,
      (d) =>
        d.node_id !== undefined &&
        void (d.graph.startsWith('function ')
          ? this.canvas.focusBodyNode(d.graph, d.node_id)
          : this.canvas.focusNode(d.node_id)),
    );
    this.quickAdd = new QuickAdd(document.body);
    shell.canvas.addEventListener('pointermove', (ev) => (this.mouse = [ev.clientX, ev.clientY]));
    window.addEventListener('keydown', (ev) => this.onKey(ev));
    window.addEventListener('beforeunload', (ev) => {
      if (this.docs.some((d) => d.dirty)) ev.preventDefault();
    });
  }

  // ---- documents ----

  /** `listed`: the document list already asked for (main.ts asks before building the app). */
  async start(listed?: Promise<{ documents: DocumentInfo[] }>): Promise<void> {
    if (!this.client) return;
    const { documents } = await (listed ?? this.client.documents());
    this.docs = documents;
    if (documents.length) await this.switchTo(documents[0]);
    else this.openDialog();
    this.renderTabs();
  }

  /** Offline mode (no server): shows a graph read-only, for the benchmark and the renderer tests. */
  async showStatic(graph: ApiGraph, name: string, expandAll: boolean): Promise<void> {
    this.doc = {
      id: 'static',
      path: null,
      name,
      dirty: false,
      version: graph.version,
      can_undo: false,
      can_redo: false,
      undo: '',
      redo: '',
      changed_on_disk: false,
    };
    this.docs = [this.doc];
    this.graph = graph;
    this.renderTabs();
    this.canvas.expandOnLoad = expandAll;
    await this.canvas.setGraph(graph, true);
    this.showLists();
  }

  async switchTo(doc: DocumentInfo, path: GraphPath | null = null): Promise<void> {
    if (!this.client) return;
    this.doc = doc;
    this.graphPath = path;
    const key = JSON.stringify(path);
    this.outerNames =
      this.subTabs.find((t) => t.docId === doc.id && JSON.stringify(t.path) === key)?.outer ?? new Set();
    const answers = Promise.all([
      this.client.registry(doc.id),
      this.client.graph(doc.id, path),
      this.client.diagnostics(doc.id),
    ]);
    this.canvas.renderer.prepare(); // WebGL's start (first document only) while the server answers
    const [reg, graph, diags] = await answers;
    this.ops = reg.ops;
    this.registry = new Map(reg.ops.map((op) => [registryKey(op.domain, op.op_type), op]));
    this.palette.setOps(reg.ops);
    this.canvas.registry = this.registry;
    this.diagnostics = diags.diagnostics;
    this.diagnosticsOf =
      diags.diagnostics_version === undefined ? null : { doc: doc.id, version: diags.diagnostics_version };
    this.checklist.show(this.diagnostics);
    this.graph = graph;
    await this.fetchBodies(graph);
    await this.canvas.setGraph(graph, true);
    this.renderTabs();
    this.showParams();
    this.showLists();
  }

  private async refreshGraph(): Promise<void> {
    if (!this.client || !this.doc) return;
    this.graph = await this.client.graph(this.doc.id, this.graphPath);
    await this.fetchBodies(this.graph);
    await this.canvas.setGraph(this.graph, false);
    this.showParams();
    this.showLists();
  }

  /** Body nodes shown inside calls -> their function (edits on them go through its graph path). */
  private bodyFn = new WeakMap<ApiNode, FunctionKey>();

  /** The bodies of the local functions the graph calls, so the canvas can show each call as a group
   *  expandable in place into its body (one request per function, not per call). */
  private async fetchBodies(g: ApiGraph): Promise<void> {
    const fns = new Map<string, FunctionKey>();
    for (const n of g.nodes) if (n.function) fns.set(functionKeyString(n.function), n.function);
    const bodies = new Map<string, ApiGraph>();
    await Promise.all(
      [...fns].map(async ([key, fn]) => {
        const body = await this.client!.graph(this.doc!.id, { function: fn, steps: [] });
        for (const n of body.nodes) this.bodyFn.set(n, fn);
        bodies.set(key, body);
      }),
    );
    this.canvas.bodies = bodies;
  }

  /** A command on a node: one of a function body shown inside a call goes to the function's graph. */
  private at(n: ApiNode, cmd: Command): Command {
    const fn = this.bodyFn.get(n);
    return fn ? { ...cmd, path: { function: fn, steps: [] } } : cmd;
  }

  private leafCmd(l: Leaf, cmd: Command): Command {
    return l.body ? { ...cmd, path: { function: l.body.fn, steps: [] } } : cmd;
  }

  private updateDoc(d: DocumentInfo): void {
    this.doc = d;
    const i = this.docs.findIndex((x) => x.id === d.id);
    if (i >= 0) this.docs[i] = d;
    else this.docs.push(d);
    this.renderTabs();
  }

  async openPath(path: string): Promise<void> {
    await this.guard(async () => {
      const d = await this.client!.open(path);
      this.updateDoc(d);
      await this.switchTo(d);
    });
  }

  async newDocument(opset: number, contrib: boolean): Promise<void> {
    await this.guard(async () => {
      const d = await this.client!.create(opset, contrib ? [{ domain: 'com.microsoft', version: 1 }] : []);
      this.updateDoc(d);
      await this.switchTo(d);
    });
  }

  async save(asPath?: string): Promise<void> {
    if (!this.client || !this.doc) return;
    if (!this.doc.path && !asPath) return this.saveAsDialog();
    await this.guard(async () => {
      await this.savePositions();
      this.updateDoc(await this.client!.save(this.doc!.id, asPath));
      this.toast(`Saved ${this.doc!.path ?? this.doc!.name}`);
    });
  }

  async closeDoc(d: DocumentInfo): Promise<void> {
    if (d.dirty && !window.confirm(`${d.name} has unsaved changes. Close it anyway?`)) return;
    await this.guard(async () => {
      await this.client!.close(d.id);
      this.docs = this.docs.filter((x) => x.id !== d.id);
      this.subTabs = this.subTabs.filter((t) => t.docId !== d.id);
      if (this.doc?.id === d.id) {
        this.doc = null;
        this.graph = null;
        if (this.docs.length) await this.switchTo(this.docs[0]);
        else this.canvas.renderer.setScene(null);
      }
      this.renderTabs();
    });
  }

  // ---- edits ----

  private async guard<T>(f: () => Promise<T>): Promise<T | undefined> {
    this.busy++;
    try {
      return await f();
    } catch (e) {
      const msg = e instanceof ApiError ? e.message : String((e as Error)?.message ?? e);
      this.lastError = msg;
      this.toast(msg, true);
      return undefined;
    } finally {
      this.busy--;
    }
  }

  private async apply(answer: Promise<CommandAnswer>): Promise<CommandAnswer | undefined> {
    const done = await this.guard(async () => {
      this.editMarks = { sent: performance.now() };
      const a = await answer;
      this.editMarks.answered = performance.now();
      this.updateDoc(a.document);
      a.diagnostics = await this.answeredDiagnostics(a);
      // The list's table is rebuilt only when the list changed (most edits leave it as it was).
      if (!sameDiagnostics(this.diagnostics, a.diagnostics)) this.checklist.show(a.diagnostics);
      this.diagnostics = a.diagnostics;
      if (!(await this.patchGraph(a))) await this.refreshGraph();
      this.editMarks.updated = performance.now();
      this.canvas.renderer.flush(); // the edit's frame now, not at the browser's next frame
      this.editMarks.flushed = performance.now();
      return a;
    });
    this.waitForFinished(); // also when the edit's drawing failed
    return done;
  }

  /** The list after answer `a`: its whole list, or its diff applied to the list held; the whole list
   *  fetched when the diff is not from the version held (an answer this app did not apply). */
  private async answeredDiagnostics(a: CommandAnswer): Promise<Diagnostic[]> {
    const doc = this.doc!.id;
    const held = this.diagnosticsOf?.doc === doc ? this.diagnosticsOf.version : undefined;
    let list = nextDiagnostics(this.diagnostics, held, a);
    let version = a.diagnostics_version;
    if (!list) {
      const full = await this.client!.diagnostics(doc);
      [list, version] = [full.diagnostics, full.diagnostics_version];
    } else if (a.diagnostics_partial) {
      // The server finishes the check on its own and pushes the finished list ("diagnostics" event);
      // it is shown once the edit is drawn (apply calls waitForFinished): the event may come before.
      this.waiting = { doc, version, frameOut: false };
      this.diagnosticsPending = true;
    } else {
      // A finished list (or one fetched, which GET diagnostics finishes): nothing to wait for.
      this.waiting = null;
      this.diagnosticsPending = false;
    }
    this.diagnosticsOf = version === undefined ? null : { doc, version };
    return list;
  }

  /** After a partial answer's edit is drawn (not before: its graph patch would set the provisional
   *  severities again): the pushed finished list once the frame is out, or a fetch when none comes. */
  private waitForFinished(): void {
    const waiting = this.waiting;
    if (!waiting || waiting.frameOut) return;
    requestAnimationFrame(() => {
      waiting.frameOut = true;
      if (this.waiting !== waiting) return;
      if (this.lastPushed) this.pushed(this.lastPushed);
      // No event (a stream that is down): fetched instead.
      setTimeout(() => {
        if (this.waiting === waiting) void this.finishDiagnostics(waiting.version);
      }, PUSH_WAIT_MS);
    });
  }

  /** Whether an edit's answer carried a provisional list whose finished version is still to come. */
  diagnosticsPending = false;
  /** The partial list whose finished version the app waits for, and whether the edit's frame is out. */
  private waiting: { doc: string; version: number | undefined; frameOut: boolean } | null = null;
  /** The last "diagnostics" event, kept for an answer that arrives after it. */
  private lastPushed: DiagnosticsEvent | null = null;

  /** A finished list pushed by the server: applied when it follows the partial list held, fetched when
   *  the app waits for another one, ignored when it is for a list the app no longer waits for. */
  private pushed(e: DiagnosticsEvent): void {
    this.lastPushed = e;
    const w = this.waiting;
    if (!w || !w.frameOut || w.doc !== e.document || this.doc?.id !== e.document) return;
    const action = pushedAction(e, w.version);
    if (action === 'ignore') return;
    const list = action === 'apply' ? applyDiagnosticsDiff(this.diagnostics, e.diagnostics_diff) : null;
    if (!list) {
      void this.finishDiagnostics(w.version);
      return;
    }
    void this.showFinished(w, list, e.diagnostics_version);
  }

  /** After an answer whose re-check was cut short, when no event brought the finished list: GET
   *  diagnostics, unless another answer came first. */
  private async finishDiagnostics(asked: number | undefined): Promise<void> {
    const w = this.waiting;
    if (!w || !this.client || w.version !== asked) return;
    try {
      const full = await this.client.diagnostics(w.doc);
      if (full.diagnostics_version !== undefined)
        await this.showFinished(w, full.diagnostics, full.diagnostics_version);
    } finally {
      if (this.waiting === w) {
        this.waiting = null;
        this.diagnosticsPending = false;
      }
    }
  }

  /** Shows the finished list `list` (version `version`) of the partial one `w` waited for, with the
   *  severities it changes, unless another answer came first. */
  private async showFinished(
    w: { doc: string; version: number | undefined },
    list: Diagnostic[],
    version: number,
  ): Promise<void> {
    const current = this.diagnosticsOf?.doc === w.doc ? this.diagnosticsOf.version : undefined;
    if (this.waiting !== w || this.doc?.id !== w.doc || current !== w.version) return;
    this.waiting = null;
    this.diagnosticsOf = { doc: w.doc, version };
    if (!sameDiagnostics(this.diagnostics, list)) this.checklist.show(list);
    this.diagnostics = list;
    const g = this.graph;
    const touched = g ? this.patchSeverities(g, list) : [];
    if (g && touched.length && !(await this.canvas.patchNodes(g, touched)))
      await this.canvas.setGraph(g, false);
    this.canvas.renderer.flush();
    this.editMarks.diagnosed = performance.now();
    this.diagnosticsPending = false;
  }

  /** The diagnostics version edits on the current document send (undefined: none held, whole list). */
  private since(): number | undefined {
    return this.diagnosticsOf?.doc === this.doc?.id ? this.diagnosticsOf?.version : undefined;
  }

  /** An answer whose changes are only nodes changed, added or removed in the graph shown patches the
   *  graph with those nodes (sent with the answer, or GET /nodes/{id}) instead of re-fetching all of it:
   *  on a large model that is the difference between a few small answers and megabytes. Severities
   *  come from the diagnostics; only the nodes whose severity changed are touched. Changed nodes whose
   *  links stay are patched into the canvas in place (canvas.patchNodes); anything else rebuilds its
   *  view model. Returns false when the graph must be re-fetched. */
  private async patchGraph(a: CommandAnswer): Promise<boolean> {
    const g = this.graph;
    if (!g || !this.client || !this.doc || !a.changes.length) return false;
    const here = JSON.stringify(this.graphPath ?? { steps: [] });
    const changed = new Set<number>();
    const removed = new Set<number>();
    let added = false;
    for (const c of a.changes) {
      const path = JSON.stringify(c.path ?? { steps: [] });
      if (c.node === undefined || path !== here) return false;
      if (c.kind === 'node_removed') {
        removed.add(c.node);
        changed.delete(c.node);
      } else if (c.kind === 'node_changed' || c.kind === 'node_added') {
        changed.add(c.node);
        removed.delete(c.node);
        added ||= c.kind === 'node_added';
      } else return false;
    }
    const nodes = await Promise.all(
      [...changed].map((id) => a.nodes?.[id] ?? this.client!.node(this.doc!.id, id, this.graphPath)),
    );
    this.editMarks.fetched = performance.now();
    const byId = this.nodesById(g);
    if (removed.size > 16) {
      g.nodes = g.nodes.filter((n) => !removed.has(n.id));
      for (const id of removed) byId.delete(id);
    } else {
      // Spliced out where they are: a filter of the list and the id map rebuilt after it were 10-50 ms
      // of a removal at 50,000 nodes under load (finding a node object is a scan of references).
      for (const id of removed) {
        const i = g.nodes.indexOf(byId.get(id)!);
        if (i >= 0) g.nodes.splice(i, 1);
        byId.delete(id);
      }
    }
    const index = (n: ApiNode) => a.node_indices?.[n.id] ?? Infinity;
    for (const n of [...nodes].sort((x, y) => index(x) - index(y))) {
      const old = byId.get(n.id);
      const at = index(n);
      if (old)
        g.nodes[g.nodes[at] === old ? at : indexOfNode(g, old)] = n; // replaced
      // Inserted (add_node at a position, an undone removal): the list keeps the server's order.
      else if (at < g.nodes.length) g.nodes.splice(at, 0, n);
      else g.nodes.push(n); // appended
      byId.set(n.id, n);
    }
    const touched = this.patchSeverities(g, a.diagnostics ?? this.diagnostics);
    g.version = a.document.version;
    const patch = new Map<number, ApiNode>();
    for (const n of [...nodes, ...touched]) patch.set(n.id, n);
    const addedNodes = nodes.filter((n) => a.node_ids?.includes(n.id));
    const onlyAdded = added && !removed.size && addedNodes.length === patch.size;
    const inPlace = onlyAdded
      ? await this.canvas.appendNodes(g, addedNodes)
      : !added && removed.size
        ? await this.canvas.removeNodes(g, [...removed], [...patch.values()])
        : !added &&
          ((await this.canvas.patchNodes(g, [...patch.values()])) ||
            (await this.canvas.relinkNodes(g, [...patch.values()])));
    if (!inPlace) await this.canvas.setGraph(g, false);
    this.showParams();
    this.showLists();
    return true;
  }

  /** Each node of this.graph by id, kept through patches (node objects, not indices: a removal or an
   *  insertion then changes one entry instead of every index after it). */
  private byId: Map<number, ApiNode> | null = null;
  private nodesById(g: ApiGraph): Map<number, ApiNode> {
    if (!this.byId || this.byIdOf !== g) {
      this.byId = new Map(g.nodes.map((n) => [n.id, n]));
      this.byIdOf = g;
    }
    return this.byId;
  }
  private byIdOf: ApiGraph | null = null;
  /** The graph's node list was changed outside patchGraph (the test hook's offline edits). */
  forgetNodeIndex(): void {
    this.byId = null;
  }

  /** Sets each node's severity (error or warning, the worst) from the diagnostics of the graph shown,
   *  touching only nodes whose severity changed or is named by a diagnostic; returns those it changed. */
  private patchSeverities(g: ApiGraph, diagnostics: Diagnostic[]): ApiNode[] {
    const byId = this.nodesById(g);
    const rank = { error: 3, warning: 2, info: 1 } as const;
    const worst = new Map<number, 'error' | 'warning' | 'info'>();
    for (const d of diagnostics) {
      const node = d.node_id === undefined ? undefined : byId.get(d.node_id);
      if (!node || node.name !== d.node) continue;
      const cur = worst.get(d.node_id!);
      if (!cur || rank[d.severity] > rank[cur]) worst.set(d.node_id!, d.severity);
    }
    const next = new Map<number, Severity>();
    for (const [id, s] of worst) if (s !== 'info') next.set(id, s);
    const before = this.severities?.of === g ? this.severities.map : severitiesOf(g);
    const out: ApiNode[] = [];
    for (const id of new Set([...before.keys(), ...next.keys()])) {
      const n = byId.get(id);
      if (!n) continue;
      const s = next.get(id) ?? null;
      if ((n.severity ?? null) === s) continue;
      n.severity = s;
      out.push(n);
    }
    this.severities = { of: g, map: next };
    return out;
  }
  private severities: { of: ApiGraph; map: Map<number, Severity> } | null = null;

  /** Commands act on the graph shown: a subgraph's edits go through the document's one history. */
  private withPath(cmd: Command): Command {
    if (cmd.path) return cmd; // a function body's node shown inside a call (at, leafCmd)
    return this.graphPath ? { ...cmd, path: this.graphPath } : cmd;
  }

  run(cmd: Command): Promise<CommandAnswer | undefined> {
    if (!this.client || !this.doc) return Promise.resolve(undefined);
    return this.apply(this.client.command(this.doc.id, this.withPath(cmd), this.doc.version, this.since()));
  }

  runBatch(label: string, cmds: Command[]): Promise<CommandAnswer | undefined> {
    if (!this.client || !this.doc) return Promise.resolve(undefined);
    return this.apply(
      this.client.batch(
        this.doc.id,
        label,
        cmds.map((c) => this.withPath(c)),
        this.doc.version,
        this.since(),
      ),
    );
  }

  undo(): Promise<unknown> {
    return this.client && this.doc?.can_undo
      ? this.apply(this.client.undo(this.doc.id, this.since()))
      : Promise.resolve();
  }

  redo(): Promise<unknown> {
    return this.client && this.doc?.can_redo
      ? this.apply(this.client.redo(this.doc.id, this.since()))
      : Promise.resolve();
  }

  /** Node and value names in use where a new one would clash: this graph and, in a subgraph, the
   *  graphs that hold it (the server refuses a value that shadows an outer one). */
  private takenNames(): Set<string> {
    const used = new Set<string>(this.outerNames);
    for (const n of namesOf(this.graph)) used.add(n);
    return used;
  }

  /** `Conv_3` where neither the node name nor its first output's name `Conv_3_out0` is taken. */
  private uniqueName(base: string): string {
    const used = this.takenNames();
    const stem = base.replace(/[^A-Za-z0-9_]/g, '_');
    for (let k = 0; ; k++)
      if (!used.has(`${stem}_${k}`) && !used.has(`${stem}_${k}_out0`)) return `${stem}_${k}`;
  }

  async addNode(key: string, x: number, y: number): Promise<number | undefined> {
    const op = this.registry.get(key);
    if (!op) return undefined;
    const name = this.uniqueName(op.op_type);
    const inputs = op.inputs.filter((f) => f.option !== 'variadic').map(() => '');
    const outputs = op.outputs.filter((f) => f.option === 'single').map((_, i) => `${name}_out${i}`);
    if (!outputs.length) outputs.push(`${name}_out0`);
    // add_node's `position` is the index in the node list; the canvas position goes through PUT positions.
    // The canvas places the new leaf there as it appends it (no second layout); a rebuilt view model
    // (appending was not possible) gets the pin afterwards.
    const at: [number, number] = [Math.round(x - 70), Math.round(y - 20)];
    this.canvas.nextPins = [at];
    const a = await this.run({
      type: 'add_node',
      node: { name, op_type: op.op_type, domain: op.domain, inputs, outputs },
    });
    this.canvas.nextPins = [];
    const id = a?.node_ids?.[0];
    if (id === undefined) return undefined;
    const placed = this.canvas.pins.has(`n:${id}`);
    this.canvas.pins.set(`n:${id}`, at);
    await this.savePositions();
    if (!placed) await this.canvas.repin();
    const leaf = this.canvas.vm?.byNodeId.get(id);
    if (leaf !== undefined) this.canvas.select([leaf]);
    return id;
  }

  private async connect(from: TerminalRef, to: TerminalRef): Promise<void> {
    const vm = this.canvas.vm!;
    const src = vm.leaves[from.leaf];
    const dst = vm.leaves[to.leaf];
    if (src.body || dst.body) return this.connectInBody(src, from.port, dst, to.port);
    let value = src.outputs[from.port]?.value ?? '';
    const cmds: Command[] = [];
    if (dst.kind === 'output') {
      if (src.kind !== 'node') return this.toast('a graph input cannot feed a graph output directly', true);
      return void this.run({ type: 'set_node_output', node: src.id, index: from.port, value: dst.name });
    }
    if (!value) {
      value = `${src.name}_out${from.port}`;
      cmds.push({ type: 'set_node_output', node: src.id, index: from.port, value });
    }
    cmds.push({ type: 'connect', node: dst.id, index: to.port, value });
    if (cmds.length === 1) await this.run(cmds[0]);
    else await this.runBatch(`Connect ${src.name} to ${dst.name}`, cmds);
  }

  /** A link between two nodes of the same call's body is a link in the function's body (every call
   *  shows it); one across the call's border would change the function's signature: refused. */
  private async connectInBody(src: Leaf, srcPort: number, dst: Leaf, dstPort: number): Promise<void> {
    if (!src.body || !dst.body || src.body.call !== dst.body.call)
      return this.toast(
        "a link across a local function's border changes its signature: edit the function in its tab",
        true,
      );
    let value = src.body.node.outputs[srcPort] ?? '';
    const cmds: Command[] = [];
    if (!value) {
      value = `${src.name}_out${srcPort}`;
      cmds.push(this.leafCmd(src, { type: 'set_node_output', node: src.id, index: srcPort, value }));
    }
    cmds.push(this.leafCmd(dst, { type: 'connect', node: dst.id, index: dstPort, value }));
    if (cmds.length === 1) await this.run(cmds[0]);
    else await this.runBatch(`Connect ${src.name} to ${dst.name}`, cmds);
  }

  private async disconnect(leaf: number, port: number): Promise<void> {
    const l = this.canvas.vm!.leaves[leaf];
    if (l.kind === 'node') await this.run(this.leafCmd(l, { type: 'disconnect', node: l.id, index: port }));
  }

  /** Double-click on a free terminal: a dialog for the new graph input (or output) it will be linked to. */
  private async terminalDoubleClick(t: TerminalRef): Promise<void> {
    const leaf = this.canvas.vm!.leaves[t.leaf];
    if (leaf.kind !== 'node') return;
    if (leaf.body) return this.toast("a local function's inputs and outputs are edited in its tab", true);
    const term = (t.side === 'in' ? leaf.inputs : leaf.outputs)[t.port];
    if (term.value && t.side === 'in') return;
    const input = t.side === 'in';
    const name = h('input', {
      type: 'text',
      value: term.value || this.uniqueValue(`${leaf.name}_${term.label}`),
      'data-testid': 'io-name',
    });
    const elem = h(
      'select',
      { 'data-testid': 'io-type' },
      ...['float', 'float16', 'double', 'int64', 'int32', 'int8', 'uint8', 'bool'].map((d) =>
        h('option', { value: d, text: d }),
      ),
    );
    const shape = h('input', {
      type: 'text',
      placeholder: "[1, 3, 224, 224] ('N' for a named dimension)",
      'data-testid': 'io-shape',
    });
    const err = h('div', { className: 'error-text' });
    const create = () => {
      let dims: Array<number | string> | undefined;
      try {
        dims = shape.value.trim() ? parseDims(shape.value) : undefined;
      } catch (e) {
        err.textContent = `shape: ${(e as Error).message}`;
        return;
      }
      clear(this.shell.dialogs);
      const value: Record<string, unknown> = { name: name.value.trim(), type: `tensor(${elem.value})` };
      if (dims) value.shape = dims;
      const cmds: Command[] = [];
      if (input) {
        cmds.push(
          { type: 'add_graph_input', value },
          { type: 'connect', node: leaf.id, index: t.port, value: value.name },
        );
      } else {
        if (term.value !== value.name)
          cmds.push({ type: 'set_node_output', node: leaf.id, index: t.port, value: value.name });
        cmds.push({ type: 'add_graph_output', value });
      }
      void this.runBatch(`Add graph ${input ? 'input' : 'output'} ${value.name}`, cmds);
    };
    this.dialog(input ? 'New graph input' : 'New graph output', [
      h('div', { className: 'field' }, h('label', { text: 'name' }), name),
      h('div', { className: 'field' }, h('label', { text: 'element type' }), elem),
      h('div', { className: 'field' }, h('label', { text: 'shape' }), shape),
      err,
      h('button', { text: 'Create', 'data-testid': 'io-create', onclick: create }),
    ]);
  }

  private uniqueValue(base: string): string {
    const used = this.takenNames();
    const stem = base.replace(/[^A-Za-z0-9_]/g, '_');
    if (!used.has(stem)) return stem;
    for (let k = 1; ; k++) if (!used.has(`${stem}_${k}`)) return `${stem}_${k}`;
  }

  async deleteSelection(): Promise<void> {
    const vm = this.canvas.vm;
    if (!vm) return;
    const links = this.canvas.selectedLinks;
    if (links.length) return this.deleteLinks(links);
    const cmds: Command[] = [];
    for (const i of this.canvas.selected) {
      const l = vm.leaves[i];
      if (l.kind === 'node') cmds.push(this.leafCmd(l, { type: 'remove_node', node: l.id }));
      else if (l.kind === 'input') cmds.push({ type: 'remove_graph_input', name: l.name });
      else cmds.push({ type: 'remove_graph_output', name: l.name });
    }
    if (!cmds.length) return;
    this.canvas.selected.clear();
    if (cmds.length === 1) await this.run(cmds[0]);
    else await this.runBatch(`Delete ${cmds.length} items`, cmds);
  }

  /** Disconnects the selected links (visible edge indices), one undo step. */
  private async deleteLinks(links: number[]): Promise<void> {
    const vm = this.canvas.vm!;
    const lay = this.canvas.scene!.lay;
    const cmds: Command[] = [];
    for (const e of links) {
      const edge = vm.edges[lay.edgeLeaf[e]];
      const dst = vm.leaves[edge.dst];
      if (lay.edgeDstItem[e] !== edge.dst || dst.kind !== 'node') continue;
      const src = vm.leaves[edge.src];
      if (dst.body && src.body?.call !== dst.body.call)
        return this.toast("a link across a local function's border is edited in the function's tab", true);
      cmds.push(this.leafCmd(dst, { type: 'disconnect', node: dst.id, index: edge.dstPort }));
    }
    if (cmds.length === 1) await this.run(cmds[0]);
    else if (cmds.length) await this.runBatch(`Disconnect ${cmds.length} links`, cmds);
  }

  /** The values the selected links carry, each once, the link clicked last first. */
  selectedLinkValues(): string[] {
    const lay = this.canvas.scene?.lay;
    const vm = this.canvas.vm;
    if (!lay || !vm) return [];
    const values = this.canvas.selectedLinks.reverse().map((e) => vm.edges[lay.edgeLeaf[e]]?.value);
    return [...new Set(values.filter((v): v is string => !!v))];
  }

  async savePositions(): Promise<void> {
    if (!this.client || !this.doc) return;
    const positions: Record<string, [number, number]> = {};
    const io: Record<string, [number, number]> = {};
    for (const [key, p] of this.canvas.pins) {
      const xy: [number, number] = [Math.round(p[0]), Math.round(p[1])];
      if (key.startsWith('n:')) positions[key.slice(2)] = xy;
      // Graph inputs and outputs ('i:NAME', 'o:NAME') and body nodes of expanded calls ('f:CALL:NODE').
      else if (/^[iof]:/.test(key)) io[key] = xy;
    }
    await this.guard(() => this.client!.putPositions(this.doc!.id, positions, this.graphPath, io));
    // The graph held here is patched rather than re-fetched after most edits: keep its positions current.
    if (this.graph) Object.assign(this.graph, { positions, io_positions: io });
  }

  async arrange(): Promise<void> {
    await this.canvas.arrange();
    await this.savePositions();
  }

  // ---- views ----

  selectedNodes(): ApiNode[] {
    const vm = this.canvas.vm;
    if (!vm || !this.graph) return [];
    const g = this.graph;
    const byId = this.nodesById(g);
    return [...this.canvas.selected]
      .map((i) => vm.leaves[i].body?.node ?? byId.get(vm.leaves[i].id))
      .filter((n): n is ApiNode => !!n);
  }

  private showLists(): void {
    this.explorer.setNodes(this.graph?.nodes ?? []);
    this.initPanel.setInitializers(this.graph?.initializers ?? []);
    void this.showOuterInitializers();
  }

  /** In a subgraph's tab, the initializers of the graphs around it, which it reads like its own (the
   *  seed: a subgraph has its parent's initializers): listed to preview, attach and switch to. */
  private async showOuterInitializers(): Promise<void> {
    const path = this.graphPath;
    if (!path?.steps.length || !this.client || !this.doc) return this.initPanel.setOuter([]);
    try {
      const got = await this.client.outerInitializers(this.doc.id, path);
      if (path === this.graphPath) this.initPanel.setOuter(got.initializers);
    } catch {
      this.initPanel.setOuter([]);
    }
  }

  private showParams(): void {
    const sel = this.selectedNodes();
    this.params.show(sel, this.registry, this.graph, this.doc);
    this.initPanel.showNode(sel.length === 1 ? sel[0] : undefined);
  }

  private onLayout(): void {
    if (this.firstRenderMs) return;
    this.canvas.renderer.onFrame = () => {
      this.canvas.renderer.finish();
      this.firstRenderMs = performance.now();
      this.canvas.marks.firstFrame = this.firstRenderMs;
      this.canvas.renderer.onFrame = null;
    };
  }

  /** Opens a local function's body in a tab of its own (edited like a graph, through its path). */
  openFunction(fn: FunctionKey): void {
    if (!this.doc) return;
    const path: GraphPath = { function: fn, steps: [] };
    const key = JSON.stringify(path);
    if (!this.subTabs.some((t) => t.docId === this.doc!.id && JSON.stringify(t.path) === key))
      this.subTabs.push({
        docId: this.doc.id,
        path,
        label: `${fn.domain ? fn.domain + '.' : ''}${fn.name}`,
        parent: null,
        outer: new Set(),
      });
    void this.guard(() => this.switchTo(this.doc!, path));
  }

  /** Opens a node's subgraph (Loop body, If branch, Scan body) in a tab of its own; a call of a local
   *  function opens the function's body. */
  async openSubgraph(nodeId: number): Promise<void> {
    const node = this.graph?.nodes.find((n) => n.id === nodeId);
    if (node?.function && !node.subgraphs?.length) return this.openFunction(node.function);
    if (!node?.subgraphs?.length || !this.doc) return;
    const open = (sg: { attribute: string; index: number }) => {
      clear(this.shell.dialogs);
      const path: GraphPath = {
        steps: [...(this.graphPath?.steps ?? []), { node: nodeId, attribute: sg.attribute, index: sg.index }],
      };
      if (this.graphPath?.function) path.function = this.graphPath.function;
      const label = `${node.name}.${sg.attribute}${sg.index ? `[${sg.index}]` : ''}`;
      const key = JSON.stringify(path);
      if (!this.subTabs.some((t) => t.docId === this.doc!.id && JSON.stringify(t.path) === key))
        this.subTabs.push({
          docId: this.doc!.id,
          path,
          label,
          parent: this.graphPath,
          outer: new Set([...this.outerNames, ...namesOf(this.graph)]),
        });
      void this.guard(() => this.switchTo(this.doc!, path));
    };
    if (node.subgraphs.length === 1) return open(node.subgraphs[0]);
    this.dialog(
      `Open a subgraph of ${node.name}`,
      node.subgraphs.map((sg) =>
        h('button', {
          text: `${sg.attribute}${sg.index ? `[${sg.index}]` : ''} (${sg.nodes} nodes)`,
          onclick: () => open(sg),
        }),
      ),
    );
  }

  /** "Confirm subgraph edits": the edits already went through the document's history (undoable there);
   *  confirming closes the subgraph's tab and returns to the graph that holds it. */
  async confirmSubgraph(tab: SubTab): Promise<void> {
    this.subTabs = this.subTabs.filter((t) => t !== tab && !isInside(t.path, tab.path));
    const doc = this.docs.find((d) => d.id === tab.docId);
    if (doc) await this.guard(() => this.switchTo(doc, tab.parent));
  }

  renderTabs(): void {
    clear(this.shell.tabs);
    const current = JSON.stringify(this.graphPath);
    for (const d of this.docs) {
      const tab = h(
        'div',
        {
          className: `tab${d.id === this.doc?.id && !this.graphPath ? ' active' : ''}`,
          'data-testid': 'tab',
          onclick: () => (d.id !== this.doc?.id || this.graphPath) && void this.switchTo(d),
        },
        h('span', { className: 'tab-name', text: d.name }),
        d.dirty
          ? h('span', { className: 'modified', title: 'modified', text: ' ●', 'data-testid': 'modified' })
          : null,
        d.changed_on_disk
          ? h('span', { className: 'warn', title: 'changed on disk since it was opened', text: ' ⚠' })
          : null,
        this.client
          ? h('button', {
              className: 'tab-close',
              text: '×',
              onclick: (ev: Event) => (ev.stopPropagation(), void this.closeDoc(d)),
            })
          : null,
      );
      this.shell.tabs.append(tab);
      for (const st of this.subTabs.filter((t) => t.docId === d.id)) {
        const active = d.id === this.doc?.id && JSON.stringify(st.path) === current;
        this.shell.tabs.append(
          h(
            'div',
            {
              className: `tab subtab${active ? ' active' : ''}`,
              'data-testid': 'subtab',
              onclick: () => !active && void this.guard(() => this.switchTo(d, st.path)),
            },
            h('span', { className: 'tab-name', text: `↳ ${st.label}` }),
            h('button', {
              className: 'tab-confirm',
              text: '✓',
              title: 'Confirm subgraph edits',
              'data-testid': 'confirm-subgraph',
              onclick: (ev: Event) => (ev.stopPropagation(), void this.confirmSubgraph(st)),
            }),
          ),
        );
      }
    }
    document.title = this.doc
      ? `${this.doc.dirty ? '● ' : ''}${this.doc.name} - Tessera studio`
      : 'Tessera studio';
  }

  toast(msg: string, error = false): void {
    const t = this.shell.toast;
    t.textContent = msg;
    t.className = error ? 'toast error' : 'toast';
    t.style.display = 'block';
    clearTimeout((t as unknown as { timer?: number }).timer);
    (t as unknown as { timer?: number }).timer = window.setTimeout(
      () => (t.style.display = 'none'),
      error ? 6000 : 2500,
    );
  }

  /** The options File > Export uses: the last chosen in the export dialog. */
  exportOptions: ExportOptions = { ...DEFAULT_EXPORT };

  async exportImage(
    kind: 'svg' | 'png' | 'jpeg',
    o: ExportOptions = this.exportOptions,
  ): Promise<Blob | null> {
    const scene = this.canvas.scene;
    if (!scene) return null;
    const blob =
      kind === 'svg'
        ? new Blob([exportSvg(scene, this.canvas.renderer.state, o)], { type: 'image/svg+xml' })
        : await exportRaster(
            scene,
            this.canvas.renderer.state,
            o,
            kind === 'png' ? 'image/png' : 'image/jpeg',
          );
    const a = h('a', {
      href: URL.createObjectURL(blob),
      download: `${(this.doc?.name ?? 'graph').replace(/\.onnx$/, '')}.${kind === 'jpeg' ? 'jpg' : kind}`,
    });
    document.body.append(a);
    a.click();
    a.remove();
    return blob;
  }

  // ---- local functions ----

  /** New local function: empty (an Identity), or made of the selected nodes, which one call replaces. */
  functionDialog(fromSelection: boolean): void {
    const g = this.graph;
    if (!g || !this.doc) return;
    const taken = new Set((g.functions ?? []).map((f) => f.name));
    let k = 0;
    while (taken.has(`Function_${k}`)) k++;
    const name = h('input', { type: 'text', value: `Function_${k}`, 'data-testid': 'function-name' });
    const err = h('div', { className: 'error-text' });
    const create = () => {
      try {
        const n = name.value.trim();
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) throw new Error('name: a C identifier');
        if (taken.has(n)) throw new Error(`a local function '${n}' exists already`);
        const cmds = fromSelection
          ? functionFromSelection(g, this.selectedNodes(), n, this.uniqueName(`${n}_call`))
          : emptyFunction(g, n);
        clear(this.shell.dialogs);
        void this.runBatch(fromSelection ? `Make function ${n} of the selection` : `New function ${n}`, cmds);
      } catch (e) {
        err.textContent = (e as Error).message;
      }
    };
    this.dialog(fromSelection ? 'Make a local function of the selection' : 'New local function', [
      h('div', { className: 'field' }, h('label', { text: 'name (domain local)' }), name),
      err,
      h('button', { text: 'Create', 'data-testid': 'function-create', onclick: create }),
    ]);
  }

  /** A local function's attribute parameters (names its body's nodes may refer to), comma separated. */
  async functionAttributesDialog(k: number): Promise<void> {
    if (!this.client || !this.doc) return;
    const fn = await this.guard(() => this.client!.localFunction(this.doc!.id, k));
    if (!fn) return;
    const names = h('input', {
      type: 'text',
      value: fn.attributes.join(', '),
      'data-testid': 'function-attrs',
    });
    const err = h('div', { className: 'error-text' });
    const save = () => {
      const list = names.value
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x);
      const bad = list.find((x) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(x));
      if (bad !== undefined) return void (err.textContent = `'${bad}' is not a C identifier`);
      if (new Set(list).size !== list.length) return void (err.textContent = 'a name appears twice');
      clear(this.shell.dialogs);
      void this.run({ type: 'replace_function', function: { ...fn, attributes: list } });
    };
    this.dialog(`Attribute parameters of ${String(fn.name)}`, [
      h('div', { className: 'field' }, h('label', { text: 'names, comma separated' }), names),
      err,
      h('button', { text: 'Save', 'data-testid': 'function-attrs-save', onclick: save }),
    ]);
  }

  // ---- Model and Tools menus (ui/transforms.ts, ui/tools.ts) ----

  /** Model > a transformation: its options; Apply runs it as a job on the whole document, one undo step
   *  (an extraction opens a new tab). */
  transformDialog(spec: TransformSpec): void {
    if (!this.doc) return this.toast('open a model first', true);
    let initial: Record<string, string> = {};
    if (spec.id === 'function_create')
      initial.nodes = this.selectedNodes()
        .map((n) => n.name)
        .join(', ');
    const fns = this.graph?.functions ?? [];
    if (spec.id === 'function_inline' && fns.length === 1)
      initial.function = `${fns[0].domain}:${fns[0].name}`;
    if (spec.id === 'extract') initial = extractInitial(this.selectedNodes(), this.graph);
    const inits = new Set(this.graph?.initializers.map((i) => i.name));
    const env = {
      files: this.client ? (dir: string) => this.client!.files(dir) : undefined,
      inputs: (this.graph?.inputs ?? []).map((i) => i.name).filter((n) => !inits.has(n)),
      values: valueNames(this.graph), // a cut's tensors (Extract)
      links: this.selectedLinkValues(),
    };
    this.dialog(spec.label.replace(/…$/, ''), [
      transformForm(spec, (o, view) => this.transform(spec.id, o, view), initial, env),
    ]);
  }

  /** Runs a transformation as a job (ui/transforms.ts runJob) and applies its result: the edit's answer,
   *  or the extracted model's new tab. Throws why it was refused, failed or cancelled. */
  async transform(name: string, options: Record<string, unknown>, view: JobView): Promise<TransformLog> {
    if (!this.client || !this.doc) throw new Error('open a model first');
    this.lastError = '';
    const doc = this.doc;
    const end = await runJob(this.client, doc.id, name, options, view);
    if (end.document) {
      this.updateDoc(end.document);
      await this.switchTo(end.document);
      return end.log!;
    }
    // The user may be in a subgraph or function tab, or have gone to another tab while it ran: that tab
    // stays (a subgraph the transformation removed falls back to its document's main graph).
    if (this.doc?.id !== doc.id || this.graphPath) {
      await this.adoptJobResult(end.answer!.document, end.answer);
      return end.answer!.log;
    }
    const a = await this.apply(Promise.resolve(end.answer!));
    if (!a) throw new Error(this.lastError || `${name} was refused`);
    return end.answer!.log;
  }

  /** A job's changed or new document arriving while its dialog is closed (or another tab is shown): the
   *  user's tab and graph stay. The document shown is brought up to date in place (its changed nodes
   *  patched, or the graph shown re-fetched; the main graph only when the shown subgraph or function is
   *  gone); another one gets its tab's modified marker, a new one (an extraction) a new tab. */
  async adoptJobResult(d: DocumentInfo, answer?: CommandAnswer): Promise<void> {
    if (this.doc?.id !== d.id || !answer) {
      const i = this.docs.findIndex((x) => x.id === d.id);
      if (i >= 0) this.docs[i] = d;
      else this.docs.push(d);
      return this.renderTabs();
    }
    if (!this.graphPath) {
      await this.apply(Promise.resolve(answer));
      return this.renderTabs();
    }
    // A subgraph or function tab: its graph fetched again, as the transformation left it.
    const path = this.graphPath;
    this.updateDoc(d);
    try {
      await this.switchTo(d, path);
    } catch {
      const gone = JSON.stringify(path);
      this.subTabs = this.subTabs.filter((t) => t.docId !== d.id || JSON.stringify(t.path) !== gone);
      this.toast('the graph shown is gone after the transformation: its main graph is shown');
      await this.guard(() => this.switchTo(d));
    }
  }

  /** Saves the document for a user tool (asking for a path when it has none); true when saved. */
  async saveForTool(): Promise<boolean> {
    if (!this.doc) return false;
    if (this.doc.path) {
      await this.save();
    } else {
      const path = await this.ask('Save as', 'Path (under the studio root)', this.doc.name);
      if (path === null) return false;
      await this.save(path);
    }
    return !!this.doc?.path && !this.doc.dirty;
  }

  /** A one-field dialog: the text entered, or null when cancelled. */
  ask(title: string, label: string, initial: string): Promise<string | null> {
    return new Promise((resolve) => {
      const input = h('input', { type: 'text', value: initial, 'data-testid': 'ask-input' });
      const done = (v: string | null) => (clear(this.shell.dialogs), resolve(v));
      this.dialog(title, [
        h('div', { className: 'field' }, h('label', { text: label }), input),
        h('button', { text: 'OK', 'data-testid': 'ask-ok', onclick: () => done(input.value.trim()) }),
        h('button', { text: 'Cancel', onclick: () => done(null) }),
      ]);
      input.focus();
    });
  }

  // ---- dialogs ----

  /** File > Export…: format, background (the scheme's, transparent, white or a colour), grid, colour
   *  scheme; the whole graph. The choices stay for the File > Export items. */
  exportDialog(): void {
    const o = this.exportOptions;
    const select = (id: string, options: Array<[string, string]>, value: string) =>
      h(
        'select',
        { 'data-testid': id },
        ...options.map(([v, text]) => h('option', { value: v, text, selected: v === value })),
      );
    const format = select(
      'export-format',
      [
        ['svg', 'SVG'],
        ['png', 'PNG'],
        ['jpeg', 'JPEG'],
      ],
      'png',
    );
    const custom = o.background.startsWith('#') ? o.background : '#ffffff';
    const bg = select(
      'export-background',
      [
        ['scheme', "the colour scheme's"],
        ['transparent', 'transparent (JPEG: white)'],
        ['white', 'white'],
        ['custom', 'custom colour'],
      ],
      o.background.startsWith('#') ? 'custom' : o.background,
    );
    const colour = h('input', { type: 'color', value: custom, 'data-testid': 'export-colour' });
    const grid = h('input', { type: 'checkbox', checked: o.grid, 'data-testid': 'export-grid' });
    const scheme = select(
      'export-scheme',
      [
        ['dark', 'dark (as the canvas)'],
        ['light', 'light (for print)'],
      ],
      o.scheme,
    );
    const go = () => {
      const background = (bg.value === 'custom' ? colour.value : bg.value) as ExportOptions['background'];
      this.exportOptions = {
        ...o,
        background,
        grid: grid.checked,
        scheme: scheme.value as ExportOptions['scheme'],
      };
      clear(this.shell.dialogs);
      void this.guard(() => this.exportImage(format.value as 'svg' | 'png' | 'jpeg'));
    };
    this.dialog('Export the whole graph', [
      h('div', { className: 'field' }, h('label', { text: 'format' }), format),
      h('div', { className: 'field' }, h('label', { text: 'background' }), bg, colour),
      h('div', { className: 'field' }, h('label', { text: 'grid' }), grid),
      h('div', { className: 'field' }, h('label', { text: 'colour scheme' }), scheme),
      h('button', { text: 'Export', 'data-testid': 'export-go', onclick: go }),
    ]);
  }

  openDialog(dir = ''): void {
    if (!this.client) return;
    void this.guard(async () => {
      const listing = await this.client!.files(dir);
      const close = () => clear(this.shell.dialogs);
      const up = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
      const rows = listing.entries.map((e) =>
        h('div', {
          className: `file-entry ${e.kind}`,
          'data-testid': 'file-entry',
          text: e.kind === 'dir' ? `${e.name}/` : `${e.name}  (${(e.size / 1024).toFixed(1)} KiB)`,
          ondblclick: () => {
            const rel = dir ? `${dir}/${e.name}` : e.name;
            close();
            if (e.kind === 'dir') this.openDialog(rel);
            else void this.openPath(`${listing.root}/${rel}`);
          },
        }),
      );
      this.dialog(`Open model: ${listing.root}${dir ? '/' + dir : ''}`, [
        dir
          ? h('div', {
              className: 'file-entry dir',
              text: '../',
              ondblclick: () => (close(), this.openDialog(up)),
            })
          : null,
        ...rows,
      ]);
    });
  }

  newDialog(): void {
    const opset = h('input', { type: 'number', min: 1, max: 30, value: '21', 'data-testid': 'new-opset' });
    const contrib = h('input', { type: 'checkbox' });
    this.dialog('New model', [
      h('div', { className: 'field' }, h('label', { text: 'ai.onnx opset' }), opset),
      h(
        'div',
        { className: 'field' },
        h('label', { text: 'ONNX Runtime contrib ops (com.microsoft)' }),
        contrib,
      ),
      h('button', {
        text: 'Create',
        'data-testid': 'new-create',
        onclick: () => (
          clear(this.shell.dialogs),
          void this.newDocument(Number(opset.value), contrib.checked)
        ),
      }),
    ]);
  }

  saveAsDialog(): void {
    const path = h('input', {
      type: 'text',
      value: this.doc?.path ?? 'model.onnx',
      'data-testid': 'saveas-path',
    });
    this.dialog('Save as', [
      h('div', { className: 'field' }, h('label', { text: 'Path (under the studio root)' }), path),
      h('button', { text: 'Save', onclick: () => (clear(this.shell.dialogs), void this.save(path.value)) }),
    ]);
  }

  /** Deletes an initializer of the graph shown, disconnecting the node inputs that read it there and in
   *  the subgraphs that see it (the issue's "delete (disconnecting users)"): one command, one undo step;
   *  the server finds the readers, also in subgraphs the studio has not loaded. */
  removeInitializer(name: string): Promise<unknown> {
    return this.run({ type: 'delete_initializer', name });
  }

  /** The tensor editor on an initializer of the graph shown; Apply replaces it (one undo step). `shape`:
   *  its shape when the graph shown may not have it yet (the editor reopened after a shape change). */
  async editInitializer(name: string, shape?: number[]): Promise<void> {
    await this.guard(async () => {
      const info = this.graph?.initializers.find((i) => i.name === name);
      const dims = shape ?? info?.shape;
      const n = dims ? dims.reduce((a, b) => a * b, 1) : 0;
      if (info && dims && n > EDIT_LIMIT) return this.editLargeInitializer(name, info.dtype, dims);
      const t = await this.client!.initializer(this.doc!.id, name, EDIT_LIMIT, this.graphPath);
      const grid = new TensorGrid(t.dtype, t.shape, t.values ?? []);
      this.dialog(`Edit initializer ${name}`, [
        tensorEditor(
          grid,
          async (v) => {
            const a = await this.run({ type: 'replace_initializer', tensor: { name, ...v } });
            if (a) clear(this.shell.dialogs);
          },
          undefined,
          (dims) => this.reshapeInitializer(name, dims, grid),
        ),
        npyReplaceRow(t.dtype, (npy, shape) => this.replaceFromNpy(name, t.dtype, npy, shape)),
      ]);
    });
  }

  /** An initializer replaced by a .npy file of its type (replace_initializer, one undo step; the shape is
   *  the file's), then the editor reopened on it. */
  private async replaceFromNpy(name: string, dtype: string, npy: string, shape: number[]): Promise<void> {
    const a = await this.run({ type: 'replace_initializer', tensor: { name, dtype, npy_base64: npy } });
    if (a) await this.editInitializer(name, shape);
  }

  /** The tensor editor's shape change of an initializer (reshape_initializer, one undo step: the same
   *  count keeps the values, a larger one fills with zero, a smaller one cuts); the editor reopens on the
   *  result, paged if it grew past what it loads whole. */
  private async reshapeInitializer(name: string, shape: number[], grid: TensorGrid): Promise<void> {
    const reshape: Command = { type: 'reshape_initializer', name, shape };
    const a = await this.runWithEdits(`Reshape initializer '${name}'`, this.initializerEdits(name, grid), [
      reshape,
    ]);
    if (a) await this.editInitializer(name, shape);
  }

  /** The commands writing a grid's cells edited and not applied (before a shape change, so they are not
   *  lost): the whole tensor for a grid loaded whole, runs of set_initializer_values for a paged one. */
  private initializerEdits(name: string, grid: TensorGrid): Command[] {
    if (!grid.edits.size) return [];
    if (!grid.paged) return [{ type: 'replace_initializer', tensor: { name, ...grid.tensor() } }];
    return grid.runs().map((r) => ({ type: 'set_initializer_values', name, dtype: grid.dtype, ...r }));
  }

  /** `edits` then `cmds`, as one command or one batch: one undo step. */
  private runWithEdits(label: string, edits: Command[], cmds: Command[]): Promise<unknown> {
    const all = [...edits, ...cmds];
    return all.length === 1 ? this.run(all[0]) : this.runBatch(label, all);
  }

  /** The tensor editor on an initializer too large to load whole: it fetches the page it shows, and
   *  Apply writes the edited cells in place (set_initializer_values, runs of consecutive elements, one
   *  undo step). The weight itself never travels. */
  private editLargeInitializer(name: string, dtype: string, shape: number[]): void {
    if (!PAGED_TYPES.has(dtype))
      throw new Error(`${name} (${dtype}) is too large for the tensor editor; replace it from a .npy file`);
    const path = this.graphPath;
    const doc = this.doc!.id;
    const loader = async (offset: number, limit: number, rows: number, stride: number) =>
      (await this.client!.initializerWindow(doc, name, { offset, limit, rows, stride }, path)).values ?? [];
    const grid = new TensorGrid(dtype, shape, null, loader);
    const apply = async (runs: Array<{ offset: number; values: unknown[] }>) => {
      if (!runs.length) return clear(this.shell.dialogs);
      const cmds: Command[] = runs.map((r) => ({ type: 'set_initializer_values', name, dtype, ...r }));
      const a = await (cmds.length === 1
        ? this.run(cmds[0])
        : this.runBatch(`Edit initializer '${name}'`, cmds));
      if (a) clear(this.shell.dialogs);
    };
    this.dialog(`Edit initializer ${name}`, [
      tensorEditor(
        grid,
        () => Promise.reject(new Error('a paged tensor is applied by parts')),
        apply,
        (dims) => this.reshapeInitializer(name, dims, grid),
      ),
      npyReplaceRow(dtype, (npy, dims) => this.replaceFromNpy(name, dtype, npy, dims)),
    ]);
  }

  /** The tensor editor on a tensor attribute of the selected nodes; Apply sets it (one undo step). Values
   *  the graph answer left out (a tensor of over 64 values, or with a NaN) are fetched first. */
  async editTensorAttribute(
    nodes: ApiNode[],
    name: string,
    value: TensorValue,
    unset = false,
  ): Promise<void> {
    try {
      const n = value.shape.reduce((a, b) => a * b, 1);
      if (n > EDIT_LIMIT) return this.editLargeTensorAttribute(nodes, name, value);
      if (!value.values) {
        const fn = this.bodyFn.get(nodes[0]); // a function body's node shown inside a call
        const path: GraphPath | null = fn ? { function: fn, steps: [] } : this.graphPath;
        const got = await this.client!.attributeTensor(this.doc!.id, nodes[0].id, name, n, path);
        value = { ...value, values: got.values };
      }
      const grid = new TensorGrid(value.dtype, value.shape, value.values ?? []);
      // An attribute not set yet is given its element type here (the values typed so far carried over).
      const retype = (dtype: string) => {
        const values = retypedValues(grid.values(), value.dtype, dtype);
        const next = { ...value, dtype, values } as TensorValue;
        void this.editTensorAttribute(nodes, name, next, true);
      };
      this.dialog(`Edit ${name}`, [
        unset ? dtypeRow(value.dtype, retype) : null,
        tensorEditor(
          grid,
          async (v) => {
            // The tensor keeps its own name, if it had one (an attribute's tensor may have none).
            const own = (value as TensorValue & { name?: string }).name;
            const attribute = { name, type: 'tensor' as const, value: own ? { ...v, name: own } : v };
            const a = await (nodes.length === 1
              ? this.run(this.at(nodes[0], { type: 'set_attribute', node: nodes[0].id, attribute }))
              : this.runBatch(
                  `Set ${name} on ${nodes.length} nodes`,
                  nodes.map((n) => this.at(n, { type: 'set_attribute', node: n.id, attribute })),
                ));
            if (a) clear(this.shell.dialogs);
          },
          undefined,
          // An attribute not set yet has no tensor on the server to reshape: resized here, set on Apply.
          unset
            ? async (dims) => {
                const values = resizedValues(
                  grid.values(),
                  dims.reduce((a, b) => a * b, 1),
                  value.dtype,
                );
                const next = { ...value, shape: dims, values } as TensorValue;
                await this.editTensorAttribute(nodes, name, next, true);
              }
            : (dims) => this.reshapeTensorAttribute(nodes, name, value, dims, grid),
        ),
      ]);
    } catch (e) {
      this.toast(String((e as Error).message), true);
    }
  }

  /** The tensor editor's shape change of a tensor attribute on every selected node (reshape_attribute,
   *  one undo step), then the editor reopened on the first node's result. */
  private async reshapeTensorAttribute(
    nodes: ApiNode[],
    name: string,
    value: TensorValue,
    shape: number[],
    grid: TensorGrid,
  ): Promise<void> {
    const cmds = nodes.map((n) => this.at(n, { type: 'reshape_attribute', node: n.id, name, shape }));
    const label = nodes.length === 1 ? `Reshape ${name}` : `Reshape ${name} on ${nodes.length} nodes`;
    const a = await this.runWithEdits(label, this.attributeEdits(nodes, name, value, grid), cmds);
    if (a) await this.editTensorAttribute(nodes, name, { ...value, shape, values: undefined });
  }

  /** The commands writing a grid's cells edited and not applied on every node (before a shape change):
   *  the whole tensor (keeping its own name) for a grid loaded whole, runs of set_attribute_values for a
   *  paged one. */
  private attributeEdits(nodes: ApiNode[], name: string, value: TensorValue, grid: TensorGrid): Command[] {
    if (!grid.edits.size) return [];
    if (!grid.paged) {
      const own = (value as TensorValue & { name?: string }).name;
      const v = grid.tensor();
      const attribute = { name, type: 'tensor' as const, value: own ? { ...v, name: own } : v };
      return nodes.map((n) => this.at(n, { type: 'set_attribute', node: n.id, attribute }));
    }
    const runs = grid.runs();
    return nodes.flatMap((n) =>
      runs.map((r) =>
        this.at(n, { type: 'set_attribute_values', node: n.id, name, dtype: grid.dtype, ...r }),
      ),
    );
  }

  /** A list parameter (ints, floats, strings) in the tensor editor, as one row of cells checked against
   *  its element type; Apply sets it on every selected node (one undo step). Its length is changed with
   *  the shape row (one dimension): the editor reopens on the list grown with zeros (empty strings) or
   *  cut, and nothing is set until Apply. */
  private editListAttribute(
    nodes: ApiNode[],
    name: string,
    type: AttrType,
    values: Array<number | string>,
  ): void {
    const dtype = type === 'ints' ? 'int64' : type === 'floats' ? 'float' : 'string';
    const grid = new TensorGrid(dtype, [values.length], values);
    this.dialog(`Edit ${name}`, [
      tensorEditor(
        grid,
        async (v) => {
          const attribute = { name, type, value: v.values };
          const cmds = nodes.map((n) => this.at(n, { type: 'set_attribute', node: n.id, attribute }));
          const a = await (cmds.length === 1
            ? this.run(cmds[0])
            : this.runBatch(`Set ${name} on ${nodes.length} nodes`, cmds));
          if (a) clear(this.shell.dialogs);
        },
        undefined,
        async (shape) => {
          if (shape.length !== 1) throw new Error(`a list has one dimension, not ${shape.length}`);
          const cells = resizedValues(grid.values(), shape[0], dtype);
          this.editListAttribute(nodes, name, type, cells as Array<number | string>);
        },
      ),
    ]);
  }

  /** The paged tensor editor on a tensor attribute too large to load whole (a Constant's value, say), as
   *  for a large initializer: the page shown is fetched from the first node, and Apply writes the edited
   *  cells in place on every node (set_attribute_values, runs of consecutive elements, one undo step;
   *  the cells not edited stay as each node has them). */
  private editLargeTensorAttribute(nodes: ApiNode[], name: string, value: TensorValue): void {
    if (!PAGED_TYPES.has(value.dtype))
      throw new Error(`${name} (${value.dtype}) is too large for the tensor editor`);
    const fn = this.bodyFn.get(nodes[0]);
    const path: GraphPath | null = fn ? { function: fn, steps: [] } : this.graphPath;
    const doc = this.doc!.id;
    const first = nodes[0].id;
    const loader = async (offset: number, limit: number, rows: number, stride: number) =>
      (await this.client!.attributeWindow(doc, first, name, { offset, limit, rows, stride }, path)).values ??
      [];
    const grid = new TensorGrid(value.dtype, value.shape, null, loader);
    const apply = async (runs: Array<{ offset: number; values: unknown[] }>) => {
      if (!runs.length) return clear(this.shell.dialogs);
      const cmds: Command[] = nodes.flatMap((n) =>
        runs.map((r) =>
          this.at(n, { type: 'set_attribute_values', node: n.id, name, dtype: value.dtype, ...r }),
        ),
      );
      const label = nodes.length === 1 ? `Edit ${name}` : `Edit ${name} on ${nodes.length} nodes`;
      const a = await (cmds.length === 1 ? this.run(cmds[0]) : this.runBatch(label, cmds));
      if (a) clear(this.shell.dialogs);
    };
    this.dialog(`Edit ${name}`, [
      tensorEditor(
        grid,
        () => Promise.reject(new Error('a paged tensor is applied by parts')),
        apply,
        (dims) => this.reshapeTensorAttribute(nodes, name, value, dims, grid),
      ),
    ]);
  }

  private dialog(title: string, body: Array<HTMLElement | null>): void {
    clear(this.shell.dialogs);
    const box = h(
      'div',
      { className: 'dialog', role: 'dialog' },
      h(
        'div',
        { className: 'dialog-title' },
        title,
        h('button', { className: 'dialog-close', text: '×', onclick: () => clear(this.shell.dialogs) }),
      ),
      ...body,
    );
    this.shell.dialogs.append(box);
  }

  // ---- keyboard ----

  private onKey(ev: KeyboardEvent): void {
    const target = ev.target as HTMLElement;
    const typing = target.tagName === 'INPUT' || target.tagName === 'TEXTAREA';
    const ctrl = ev.ctrlKey || ev.metaKey;
    if (ctrl && ev.key.toLowerCase() === 's') {
      ev.preventDefault();
      void this.save();
    } else if (ctrl && ev.code === 'Space') {
      ev.preventDefault();
      const [wx, wy] = this.canvas.renderer.toWorld(
        ...this.canvas.px(new MouseEvent('x', { clientX: this.mouse[0], clientY: this.mouse[1] })),
      );
      this.quickAdd.open(this.ops, this.mouse[0], this.mouse[1], (key) => void this.addNode(key, wx, wy));
    } else if (typing) {
      return;
    } else if (ctrl && ev.key.toLowerCase() === 'z') {
      ev.preventDefault();
      void (ev.shiftKey ? this.redo() : this.undo());
    } else if (ctrl && ev.key.toLowerCase() === 'y') {
      ev.preventDefault();
      void this.redo();
    } else if (ev.key === 'Delete' || ev.key === 'Backspace') {
      void this.deleteSelection();
    } else if (ev.key === 'f' && !ctrl) {
      this.canvas.fit();
    }
  }
}

/** Tabs over the left panel: one container per title, the first shown. */
function leftTabs(root: HTMLElement, titles: string[], shown: (k: number) => void): HTMLElement[] {
  const boxes = titles.map((t) => h('div', { className: 'left-page', 'data-page': t.toLowerCase() }));
  const buttons = titles.map((t, k) =>
    h('button', {
      className: k === 0 ? 'left-tab active' : 'left-tab',
      text: t,
      'data-testid': `left-${t.toLowerCase()}`,
      onclick: () => {
        boxes.forEach((b, j) => (b.style.display = j === k ? '' : 'none'));
        buttons.forEach((b, j) => b.classList.toggle('active', j === k));
        shown(k);
      },
    }),
  );
  boxes.forEach((b, j) => (b.style.display = j === 0 ? '' : 'none'));
  root.append(h('div', { className: 'left-tabs' }, ...buttons), ...boxes);
  return boxes;
}

interface SubTab {
  docId: string;
  path: GraphPath;
  label: string;
  parent: GraphPath | null;
  outer: Set<string>;
}

/** Node id -> severity (errors and warnings) as the graph answer gives them. */
function severitiesOf(g: ApiGraph): Map<number, Severity> {
  const out = new Map<number, Severity>();
  for (const n of g.nodes) if (n.severity) out.set(n.id, n.severity);
  return out;
}

function namesOf(g: ApiGraph | null): string[] {
  if (!g) return [];
  const out: string[] = [];
  for (const n of g.nodes) out.push(n.name, ...n.inputs, ...n.outputs);
  for (const v of [...g.inputs, ...g.outputs, ...g.initializers]) out.push(v.name);
  return out;
}

/** Whether `inner` is a subgraph (at any depth) of `outer`. */
function isInside(inner: GraphPath, outer: GraphPath): boolean {
  return (
    inner.steps.length > outer.steps.length &&
    outer.steps.every((s, k) => JSON.stringify(s) === JSON.stringify(inner.steps[k]))
  );
}

/** Where node `n` (or, should the list hold another object for its id, that one) is in g's list. */
function indexOfNode(g: ApiGraph, n: ApiNode): number {
  const i = g.nodes.indexOf(n);
  return i >= 0 ? i : g.nodes.findIndex((x) => x.id === n.id);
}
