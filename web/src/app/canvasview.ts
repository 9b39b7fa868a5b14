// The canvas workspace: owns the renderer and the layout worker, turns pointer input into camera moves,
// selection, node drags, links and box zooms, and reports edits to the app as intents (the app turns
// them into server commands). The canvas never edits the model itself.
import type { ApiGraph, RegistryOp } from '../api/types';
import { LayoutCancelled, LayoutClient } from '../layout/client';
import { appendedLayout, relinkedLayout, removedLayout, resizedLayout } from '../layout/patch';
import { makeLayoutWorker } from '../layout/prestart';
import type { HierGraph, HierResult } from '../layout/hierarchy';
import {
  appendToGroups,
  buildGroups,
  defaultExpansion,
  hierGraph,
  keptEdges,
  labelWidths,
  removeFromGroups,
  type Groups,
} from '../model/groups';
import {
  appendNodes,
  buildViewModel,
  patchedLeaf,
  relinkLeaves,
  removeLeaves,
  type Leaf,
  type ViewModel,
} from '../model/viewmodel';
import type { ApiNode } from '../api/types';
import { GROUP, leafSize } from '../model/glyph';
import { changedRegions, type SceneChanges } from '../render/diff';
import { Renderer } from '../render/renderer';
import { DECIMATE_BELOW, Scene, type Pick, type Region } from '../render/scene';

export interface TerminalRef {
  leaf: number;
  side: 'in' | 'out';
  port: number;
}

export interface CanvasEvents {
  selectionChanged(): void;
  connect(from: TerminalRef, to: TerminalRef): void;
  disconnect(leaf: number, port: number): void;
  moved(): void;
  dropOp(key: string, x: number, y: number): void;
  terminalDoubleClick(t: TerminalRef): void;
  nodeDoubleClick(leaf: number): void;
  layoutDone(ms: number, result: HierResult): void;
  status(text: string): void;
}

type Drag =
  | { kind: 'pan'; x: number; y: number }
  | { kind: 'move'; x: number; y: number; moved: boolean; start: Map<number, [number, number]> }
  | { kind: 'link'; from: TerminalRef; x: number; y: number }
  | { kind: 'box'; x: number; y: number; zoom: boolean };

export class CanvasView {
  readonly renderer: Renderer;
  readonly layout: LayoutClient;
  vm: ViewModel | null = null;
  groups: Groups | null = null;
  scene: Scene | null = null;
  api: ApiGraph | null = null;
  expanded: Uint8Array = new Uint8Array(1);
  showConstants = false;
  registry = new Map<string, RegistryOp>();
  /** Local function bodies for the calls shown as groups (see ViewOptions.bodies); set before setGraph. */
  bodies = new Map<string, ApiGraph>();
  pins = new Map<string, [number, number]>(); // leaf key -> position the user placed
  /** Leaves added to an expanded group since its layout: shown at their pin without a slot in the
   *  group's layout, so adding a node moves nothing else (Arrange nodes lays them out with the rest). */
  floating = new Set<string>();
  /** Where the next nodes appended by an edit go (the palette's drop point, the cursor of Ctrl+Space),
   *  in order; nodes without one are placed beside the node feeding them. */
  nextPins: Array<[number, number]> = [];
  boxZoomNext = false;
  expandOnLoad = false; // open with every group expanded (the benchmark's flat view)
  layoutMs = 0;
  /** Leaves shown or hideable (not tombstones), kept up to date by the edits patched in place. */
  private liveLeaves = 0;
  marks: Record<string, number> = {}; // performance.now() of the last graph's stages (bench, tests)
  private drag: Drag | null = null;
  private lastHier: HierGraph | null = null;
  private lastExpanded = new Uint8Array(0);
  private fitPending = true;
  private marquee: HTMLDivElement;

  constructor(
    readonly canvas: HTMLCanvasElement,
    private readonly events: CanvasEvents,
  ) {
    // The worker first: its start-up (fetch, compile) overlaps the WebGL context's, the slowest step
    // of opening the page under software rendering.
    this.layout = new LayoutClient(makeLayoutWorker);
    // Its WebGL context is made later (Renderer.prepare): while the server answers the first graph
    // requests, or once the first layout job is sent. Made here, it delayed both by ~0.2-0.6 s.
    this.renderer = new Renderer(canvas);
    this.marquee = document.createElement('div');
    this.marquee.className = 'marquee';
    canvas.parentElement!.appendChild(this.marquee);
    // The canvas is sized from its stage (it is larger: the cached view around it), so the stage is
    // observed; measured now too, so that a graph opened before the observer's first call is framed.
    new ResizeObserver(() => this.renderer.resize()).observe(canvas.parentElement!);
    this.renderer.resize();
    this.bind();
  }

  get selected(): Set<number> {
    return this.renderer.state.selected;
  }

  /** A new graph (or a new version of it): keeps camera, expansion of groups by path, and selection by key. */
  async setGraph(api: ApiGraph, fit: boolean): Promise<void> {
    const prevExpanded = new Set<string>();
    if (this.groups) this.groups.path.forEach((p, k) => this.expanded[k] && prevExpanded.add(p));
    const prevSel = new Set([...this.selected].map((i) => this.vm?.leaves[i]?.key));
    this.marks = { graph: performance.now() };
    this.api = api;
    this.vm = buildViewModel(api, {
      showConstants: this.showConstants,
      registry: this.registry,
      bodies: this.bodies,
    });
    this.liveLeaves = countLive(this.vm.leaves);
    this.groups = buildGroups(this.vm);
    this.expanded = this.expandOnLoad
      ? new Uint8Array(this.groups.parent.length).fill(1)
      : defaultExpansion(this.groups);
    if (!fit && prevExpanded.size)
      this.groups.path.forEach((p, k) => (this.expanded[k] = k === 0 || prevExpanded.has(p) ? 1 : 0));
    this.pins.clear();
    if (fit) this.floating.clear();
    for (const [id, pos] of Object.entries(api.positions ?? {})) this.pins.set(`n:${id}`, pos);
    for (const [key, pos] of Object.entries(api.io_positions ?? {})) this.pins.set(key, pos);
    this.selected.clear();
    this.vm.leaves.forEach((l, i) => prevSel.has(l.key) && this.selected.add(i));
    this.clearLinks();
    this.marks.viewModel = performance.now();
    const hg = this.hier();
    // An edit that moved nothing (an attribute, a name that keeps the size) keeps the layout: no worker
    // round trip, the scene is rebuilt from the new view model on the old positions.
    if (
      !fit &&
      this.scene &&
      this.lastHier &&
      sameLayoutInput(this.lastHier, hg) &&
      sameArray(this.lastExpanded, this.expanded)
    ) {
      this.lastHier = hg;
      this.scene = new Scene(this.vm, this.groups, this.scene.lay);
      this.renderer.setScene(this.scene);
      return;
    }
    this.lastHier = hg;
    this.layout.setGraph(hg);
    this.marks.sent = performance.now();
    this.fitPending = fit;
    await this.relayout();
  }

  /** An edit that changed nodes without touching the graph's structure (a rename, an attribute, a
   *  severity) patches those leaves in place: no view model, groups or scene rebuilt, no layout unless a
   *  node's size changed (then only its group and the groups holding it are laid out again, from the
   *  worker's cache). `nodes`: the nodes as the server now has them; `api` already holds them.
   *  False when the edit needs setGraph (new, removed or re-linked nodes, hidden constants...). */
  async patchNodes(api: ApiGraph, nodes: ApiNode[]): Promise<boolean> {
    const vm = this.vm;
    const hg = this.lastHier;
    if (!vm || !hg || !this.scene) return false;
    const patched: Array<[number, NonNullable<ReturnType<typeof patchedLeaf>>]> = [];
    for (const n of nodes) {
      const i = vm.byNodeId.get(n.id);
      const leaf = i === undefined ? null : patchedLeaf(vm.leaves[i], n);
      if (!leaf) return false;
      patched.push([i!, leaf]);
    }
    this.marks = { graph: performance.now() };
    let resized = false;
    for (const [i, leaf] of patched) {
      vm.leaves[i] = leaf;
      const [w, h] = leafSize(leaf);
      if (w === hg.leafW[i] && h === hg.leafH[i]) continue;
      hg.leafW[i] = w;
      hg.leafH[i] = h;
      resized = true;
    }
    this.api = api;
    vm.version = api.version;
    this.marks.viewModel = performance.now();
    if (!resized) {
      // Badges, selection outlines and text stay within a few units of the box; a hidden leaf shows
      // through its collapsed group's badge.
      const m = 12;
      const scene = this.scene;
      scene.forgetSeverities();
      this.renderer.invalidateRegions(
        patched.flatMap(([i]) => {
          const r = scene.shownRect(i);
          return r ? [[r[0] - m, r[1] - m, r[0] + r[2] + m, r[1] + r[3] + m] as Region] : [];
        }),
      );
      return true;
    }
    this.layout.setGraph(hg);
    this.fitPending = false;
    // Leaves that float (or hide in a collapsed group) take no slot: their new size moves nothing else.
    const leaves = patched.map(([i]) => i);
    await this.relayout({ leaves, groups: [] }, resizedLayout(this.scene.lay, hg, leaves) ?? undefined);
    return true;
  }

  /** An edit that changed the inputs of nodes (connect, disconnect) and perhaps patched others (their
   *  severities): the view model relinks those leaves in place (viewmodel.relinkLeaves), the layout
   *  input takes the new edges, and only the groups whose links changed are laid out again (none when
   *  the relinked nodes float: then the layout is patched here). False when the view model must be
   *  rebuilt, or when no node was relinked (patchNodes's case). */
  async relinkNodes(api: ApiGraph, nodes: ApiNode[]): Promise<boolean> {
    const vm = this.vm;
    const groups = this.groups;
    const hg = this.lastHier;
    if (!vm || !groups || !hg || !this.scene || hg.edgeSrc.length !== vm.edges.length) return false;
    const patches: Array<[number, Leaf]> = [];
    const relink: ApiNode[] = [];
    for (const n of nodes) {
      const i = vm.byNodeId.get(n.id);
      if (i === undefined) return false;
      const leaf = patchedLeaf(vm.leaves[i], n);
      if (leaf) patches.push([i, leaf]);
      else relink.push(n);
    }
    if (!relink.length) return false;
    const start = performance.now();
    const res = relinkLeaves(vm, relink);
    if (!res) return false;
    this.marks = { graph: start };
    for (const [i, leaf] of patches) {
      // The patch is of the node as it is now; keep the terminal states relinkLeaves just set.
      const cur = vm.leaves[i];
      vm.leaves[i] = { ...leaf, inputs: cur.inputs, outputs: cur.outputs };
    }
    const touched = [...new Set([...res.relinked, ...res.touched, ...patches.map(([i]) => i)])];
    for (const i of touched) [hg.leafW[i], hg.leafH[i]] = leafSize(vm.leaves[i]);
    const kept = keptEdges(hg, res.edgeIndex, res.kept);
    const edgeSrc = new Int32Array(vm.edges.length);
    const edgeDst = new Int32Array(vm.edges.length);
    edgeSrc.set(kept.edgeSrc);
    edgeDst.set(kept.edgeDst);
    for (let e = res.kept; e < vm.edges.length; e++)
      [edgeSrc[e], edgeDst[e]] = [vm.edges[e].src, vm.edges[e].dst];
    this.lastHier = { ...hg, edgeSrc, edgeDst };
    this.api = api;
    vm.version = api.version;
    this.marks.viewModel = performance.now();
    const fast = relinkedLayout(this.scene.lay, this.lastHier, res.relinked, res.edgeIndex, res.kept);
    this.layout.setGraph(this.lastHier);
    this.marks.sent = performance.now();
    this.fitPending = false;
    // A collapsed group holding a relinked leaf draws the leaf's links lifted to it: redrawn whole.
    await this.relayout({ leaves: touched, groups: ancestors(groups, res.relinked) }, fast ?? undefined);
    return true;
  }

  /** Nodes just appended to the graph (add_node) become leaves appended to the view model, its groups
   *  and the layout input, instead of rebuilding all three (a 50,000-node rebuild is hundreds of ms);
   *  the worker then re-lays out only the groups whose children changed. False when the view model
   *  must be rebuilt (see appendNodes). */
  async appendNodes(api: ApiGraph, nodes: ApiNode[]): Promise<boolean> {
    const vm = this.vm;
    const groups = this.groups;
    const hg = this.lastHier;
    if (!vm || !groups || !hg || !this.scene) return false;
    const start = performance.now();
    const before = vm.edges.length;
    const n0 = vm.leaves.length;
    const pinsAsked = this.nextPins.splice(0);
    const relinked: number[] = []; // leaves whose outputs are now linked
    const added = appendNodes(vm, nodes, relinked);
    if (!added) return false;
    this.marks = { graph: start };
    const touched = [...added, ...relinked];
    const newGroups = appendToGroups(groups, vm, added);
    const expanded = new Uint8Array(groups.parent.length);
    expanded.set(this.expanded);
    for (const k of newGroups) expanded[k] = 1; // a new scope opens, so the new node shows
    this.expanded = expanded;
    const n = vm.leaves.length;
    const growF = (a: Float32Array, size: number, fill: number) => {
      const b = new Float32Array(size).fill(fill);
      b.set(a);
      return b;
    };
    const growI = (a: Int32Array, size: number) => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    const leafW = growF(hg.leafW, n, 0);
    const leafH = growF(hg.leafH, n, 0);
    for (const i of added) [leafW[i], leafH[i]] = leafSize(vm.leaves[i]);
    // Titles show the count of leaves below: the new leaves' ancestors' widths change (only theirs are
    // measured again: a pass over every group's title was milliseconds per edit on 2,400 groups).
    const groupLabelW = labelWidths(groups, hg.groupLabelW, ancestors(groups, added));
    const edgeSrc = growI(hg.edgeSrc, vm.edges.length);
    const edgeDst = growI(hg.edgeDst, vm.edges.length);
    for (let e = before; e < vm.edges.length; e++)
      [edgeSrc[e], edgeDst[e]] = [vm.edges[e].src, vm.edges[e].dst];
    const pinned = growF(hg.pinned ?? new Float32Array(hg.leafW.length * 2).fill(NaN), 2 * n, NaN);
    added.forEach((i, k) => {
      const key = vm.leaves[i].key;
      const asked = pinsAsked[k];
      if (asked) this.pins.set(key, asked);
      // In an expanded group the node floats: the group keeps its layout (nothing else moves).
      const p = this.pins.get(key) ?? (newGroups.length ? null : this.placeNew(i, leafW[i], leafH[i]));
      if (!p) return;
      this.pins.set(key, p);
      if (this.scene!.lay.groupState[groups.leafGroup[i]] === 2) this.floating.add(key);
      [pinned[2 * i], pinned[2 * i + 1]] = p;
    });
    // Grown, not rebuilt: a set lookup per leaf was a few ms per edit at 50,000 leaves.
    const floating = new Uint8Array(n);
    if (hg.floating) floating.set(hg.floating.subarray(0, n0));
    for (const i of added) floating[i] = this.floating.has(vm.leaves[i].key) ? 1 : 0;
    this.lastHier = {
      leafW,
      leafH,
      leafGroup: groups.leafGroup,
      groupParent: Int32Array.from(groups.parent),
      groupLabelW,
      edgeSrc,
      edgeDst,
      pinned,
      floating,
    };
    this.api = api;
    vm.version = api.version;
    this.marks.viewModel = performance.now();
    // Nothing moves when the new leaves float or hide in collapsed groups: no layout to wait for.
    this.liveLeaves += added.length;
    const fast = appendedLayout(this.scene!.lay, this.lastHier, n0, before, hg.groupLabelW);
    this.layout.setGraph(this.lastHier);
    this.marks.sent = performance.now();
    this.fitPending = false;
    await this.relayout({ leaves: touched, groups: ancestors(groups, added) }, fast ?? undefined);
    return true;
  }

  /** Where a node appended without a position goes: below the first shown node feeding it (else at the
   *  right of its group, or of the graph), moved right past the boxes already there. Null when its
   *  group is collapsed or hidden: the layout shows the group, not the node. */
  private placeNew(i: number, w: number, h: number): [number, number] | null {
    const s = this.scene!;
    const vm = this.vm!;
    const l = s.lay;
    const k = this.groups!.leafGroup[i];
    if (k >= l.groupState.length || l.groupState[k] !== 2) return null;
    const shown = (j: number) => j < s.n && !Number.isNaN(l.itemX[j]);
    const src = vm.leaves[i].inputs
      .map((t) => (t.value ? vm.producer?.get(t.value)?.[0] : undefined))
      .find((j): j is number => j !== undefined && shown(j));
    let x: number;
    let y: number;
    if (src !== undefined) [x, y] = [l.itemX[src], l.itemY[src] + l.itemH[src] + 40];
    else if (k > 0) [x, y] = [l.itemX[s.n + k] + l.itemW[s.n + k] + 40, l.itemY[s.n + k] + GROUP.header];
    else [x, y] = [s.bounds[2] + 60, s.bounds[1]];
    for (let tries = 0; tries < 100; tries++) {
      const hits = s.items
        .query(x - 20, y - 20, x + w + 20, y + h + 20)
        .filter((j) => j < s.n || l.groupState[j - s.n] === 1);
      if (!hits.length) break;
      x = Math.max(...hits.map((j) => l.itemX[j] + l.itemW[j])) + 30;
    }
    return [Math.round(x), Math.round(y)];
  }

  /** Nodes an edit removed (and nodes it changed without touching the graph's structure, `patched`)
   *  update the view model, its groups and the layout input in place: the removed leaves become
   *  tombstones (same indices), the worker re-lays out only their groups, and only what changed on
   *  screen is drawn again. False when the view model must be rebuilt (see removeLeaves). */
  async removeNodes(api: ApiGraph, ids: number[], patched: ApiNode[]): Promise<boolean> {
    const vm = this.vm;
    const groups = this.groups;
    const hg = this.lastHier;
    if (!vm || !groups || !hg || !this.scene) return false;
    const gone = new Set(ids);
    const patches: Array<[number, Leaf]> = [];
    for (const n of patched) {
      if (gone.has(n.id)) continue;
      const i = vm.byNodeId.get(n.id);
      const leaf = i === undefined ? null : patchedLeaf(vm.leaves[i], n);
      if (!leaf) return false;
      patches.push([i!, leaf]);
    }
    // Checked before anything changes: a group left empty, or a node not shown, means a rebuild.
    const indices = ids.map((id) => vm.byNodeId.get(id));
    if (indices.some((i) => i === undefined)) return false;
    const probe = { ...groups, size: groups.size.slice(), leafGroup: groups.leafGroup.slice() };
    if (!removeFromGroups(probe, indices as number[])) return false;
    const start = performance.now();
    // Each edge's index once the removed leaves' edges are gone (-1 for those).
    const goneLeaves = new Set(indices as number[]);
    const edgeIndex = new Int32Array(vm.edges.length);
    let kept = 0;
    if (hg.edgeSrc.length !== vm.edges.length) return false; // the layout input lags the view model
    for (let j = 0; j < edgeIndex.length; j++)
      edgeIndex[j] = goneLeaves.has(hg.edgeSrc[j]) || goneLeaves.has(hg.edgeDst[j]) ? -1 : kept++;
    for (const i of goneLeaves) this.floating.delete(vm.leaves[i].key);
    const res = removeLeaves(vm, ids);
    if (!res) return false;
    this.liveLeaves -= res.removed.length;
    this.marks = { graph: start };
    const changedGroups = removeFromGroups(groups, res.removed)!;
    for (const [i, leaf] of patches) {
      // The patch is of the node as it is now; keep the terminal states removeLeaves just set.
      const cur = vm.leaves[i];
      vm.leaves[i] = { ...leaf, inputs: cur.inputs, outputs: cur.outputs };
    }
    for (const i of res.removed) {
      this.selected.delete(i);
      hg.leafW[i] = 0;
      hg.leafH[i] = 0;
    }
    this.clearLinks();
    const touched = [...res.removed, ...res.touched, ...patches.map(([i]) => i)];
    let resized = false; // a patched node of another size: its group must be laid out again
    for (const [i] of patches) {
      const [w, h] = leafSize(vm.leaves[i]);
      resized ||= w !== hg.leafW[i] || h !== hg.leafH[i];
      [hg.leafW[i], hg.leafH[i]] = [w, h];
    }
    this.lastHier = {
      ...hg,
      leafGroup: groups.leafGroup,
      groupLabelW: labelWidths(groups, hg.groupLabelW, changedGroups),
      ...keptEdges(hg, edgeIndex, kept),
    };
    this.api = api;
    vm.version = api.version;
    this.marks.viewModel = performance.now();
    const fast = resized
      ? null
      : removedLayout(
          this.scene.lay,
          this.lastHier,
          res.removed,
          (i) => !!hg.floating?.[i],
          edgeIndex,
          hg.groupLabelW,
        );
    this.layout.setGraph(this.lastHier);
    this.marks.sent = performance.now();
    this.fitPending = false;
    await this.relayout({ leaves: touched, groups: changedGroups }, fast ?? undefined);
    this.events.selectionChanged();
    return true;
  }

  /** The layout input for the view model as it is, with the user's pins and the floating leaves. */
  private hier(): HierGraph {
    const hg = hierGraph(this.vm!, this.groups!, this.pinnedArray());
    const leaves = this.vm!.leaves;
    hg.floating = new Uint8Array(leaves.length);
    // A plain loop, and none when nothing floats (a graph just opened): Uint8Array.from with a mapping
    // function over 50,000 leaves was milliseconds of the first render's critical path.
    if (this.floating.size)
      for (let i = 0; i < leaves.length; i++) hg.floating[i] = this.floating.has(leaves[i].key) ? 1 : 0;
    return hg;
  }

  private pinnedArray(): Float32Array {
    const vm = this.vm!;
    const a = new Float32Array(vm.leaves.length * 2).fill(NaN);
    if (!this.pins.size) return a;
    vm.leaves.forEach((l, i) => {
      const p = this.pins.get(l.key);
      if (p) [a[2 * i], a[2 * i + 1]] = p;
    });
    return a;
  }

  /** Lays out what is expanded and shows the result. `changes`: what an edit patched in place; then only
   *  the parts of the view where the new scene differs from the old one are drawn again. */
  async relayout(changes?: SceneChanges, known?: HierResult): Promise<void> {
    if (!this.vm || !this.groups) return;
    if (!known) this.events.status('laying out… (Esc cancels)');
    try {
      // `known`: the layout computed here already (layout/patch.ts): the worker is not asked.
      const now = performance.timeOrigin + performance.now();
      const job = known ? null : this.layout.layout(this.expanded);
      const { result, ms, started, finished, loaded } = job
        ? await this.cancellable(job)
        : { result: known!, ms: 0, started: now, finished: now, loaded: 0 };
      // WebGL's start, when no server answer came first to overlap it (the static fixture), once the
      // layout is back: made while the worker starts, it kept the worker from starting (its start-up
      // needs this thread) for 0.2-0.7 s, more than the layout itself takes at 10,000 nodes. Made while
      // the worker lays out (the worker made by the page, already running), it took 280-380 ms instead
      // of 70-100 and slowed the layout as much, at load 13 on 2 cores: no gain.
      this.renderer.prepare();
      if (loaded) this.marks.workerLoaded = loaded - performance.timeOrigin;
      this.marks.workerStart = started - performance.timeOrigin;
      this.marks.workerEnd = finished - performance.timeOrigin;
      this.lastExpanded = this.expanded.slice();
      this.layoutMs = ms;
      this.marks.layout = performance.now();
      const old = this.scene;
      // An edit patched in place: the new scene takes over the old one's indexes and patches them.
      const patch = changes && old ? { prev: old, leaves: changes.leaves } : undefined;
      this.scene = new Scene(this.vm, this.groups, result, patch);
      this.marks.built = performance.now();
      const scale = this.renderer.camera.scale;
      const regions =
        changes && old && !this.fitPending && scale >= DECIMATE_BELOW
          ? changedRegions(old, this.scene, changes, 1 / scale)
          : null;
      this.marks.scene = performance.now();
      this.marks.regions = regions?.length ?? -1;
      this.renderer.setScene(this.scene, regions ?? undefined);
      if (this.fitPending) this.openView();
      this.fitPending = false;
      this.events.layoutDone(ms, result);
      const hidden = this.vm.hiddenConstants ? `, ${this.vm.hiddenConstants} constants hidden` : '';
      this.events.status(
        `${this.liveLeaves.toLocaleString('en-US')} nodes, ${result.stats.visibleItems.toLocaleString('en-US')} items shown${hidden}; layout ${ms.toFixed(0)} ms`,
      );
      // The first scene drawn now, not at the browser's next animation frame (15-95 ms away on a loaded
      // machine), as an edit's frame is (Renderer.flush); later layouts (a group opened) likewise.
      if (!old) this.renderer.flush();
    } catch (e) {
      if (e instanceof LayoutCancelled) return this.events.status('layout cancelled');
      throw e;
    }
  }

  /** A layout job that Escape cancels while it runs (a large graph expanded whole takes seconds). */
  private async cancellable<T>(job: Promise<T>): Promise<T> {
    const stop = (ev: KeyboardEvent) => ev.key === 'Escape' && this.layout.cancel();
    window.addEventListener('keydown', stop);
    try {
      return await job;
    } finally {
      window.removeEventListener('keydown', stop);
    }
  }

  /** Re-sends the graph with the current pins (after arrange or a move) and lays it out again. */
  async repin(): Promise<void> {
    if (!this.vm || !this.groups) return;
    this.lastHier = this.hier();
    this.layout.setGraph(this.lastHier);
    await this.relayout();
  }

  async arrange(): Promise<void> {
    this.pins.clear();
    this.floating.clear();
    await this.repin();
  }

  async setShowConstants(on: boolean): Promise<void> {
    this.showConstants = on;
    if (this.api) await this.setGraph(this.api, false);
  }

  async toggleGroup(k: number): Promise<void> {
    this.expanded[k] = this.expanded[k] ? 0 : 1;
    await this.relayout();
  }

  async expandAll(on: boolean): Promise<void> {
    this.expanded.fill(on ? 1 : 0);
    this.expanded[0] = 1;
    await this.relayout();
  }

  /** Selects a node by server id, expanding the groups that hide it, and centres the view on it. */
  async focusNode(nodeId: number): Promise<boolean> {
    // A call shown as a group of its body: its first body node.
    const i = this.vm?.byNodeId.get(nodeId) ?? this.vm?.calls?.get(nodeId)?.[0];
    return i !== undefined && this.focusLeaf(i);
  }

  /** A node of a local function's body (a diagnostic of graph 'function DOMAIN.NAME'): its leaf in the
   *  first call shown, that call's group expanded. */
  async focusBodyNode(graph: string, nodeId: number): Promise<boolean> {
    const i = this.vm?.leaves.findIndex(
      (l) => l.body?.node.id === nodeId && graph.startsWith(`function ${l.body.fn.domain}.${l.body.fn.name}`),
    );
    return i !== undefined && i >= 0 && this.focusLeaf(i);
  }

  private async focusLeaf(i: number): Promise<boolean> {
    if (!this.groups) return false;
    let changed = false;
    for (let k = this.groups.leafGroup[i]; k > 0; k = this.groups.parent[k]) {
      if (!this.expanded[k]) changed = true;
      this.expanded[k] = 1;
    }
    if (changed) await this.relayout();
    this.select([i]);
    const [x, y, w, h] = this.scene!.leafRect(i);
    const c = this.renderer.camera;
    c.scale = Math.max(c.scale, 0.8);
    c.tx = this.renderer.viewW / 2 - (x + w / 2) * c.scale;
    c.ty = this.renderer.viewH / 2 - (y + h / 2) * c.scale;
    this.renderer.request();
    return true;
  }

  /** The selected links' visible edge indices, the one clicked last at the end. */
  get selectedLinks(): number[] {
    const st = this.renderer.state;
    const all = [...(st.selectedEdges ?? [])].filter((e) => e !== st.selectedEdge);
    return st.selectedEdge >= 0 ? [...all, st.selectedEdge] : all;
  }

  /** Selects a link; `add` (Shift/Ctrl+click, as for nodes) adds it to the selected links, or takes it
   *  out when it is already one of them. */
  selectLink(edge: number, add = false): void {
    const st = this.renderer.state;
    const links = new Set(add ? this.selectedLinks : []);
    if (add && links.has(edge)) links.delete(edge);
    else links.add(edge);
    st.selectedEdges = links;
    st.selectedEdge = links.has(edge) ? edge : ([...links].pop() ?? -1);
    this.renderer.invalidate();
    this.events.selectionChanged();
  }

  private clearLinks(): void {
    this.renderer.state.selectedEdge = -1;
    this.renderer.state.selectedEdges = undefined;
  }

  select(leaves: number[], add = false): void {
    if (!add) this.selected.clear();
    for (const i of leaves) this.selected.add(i);
    this.clearLinks();
    this.renderer.invalidate();
    this.events.selectionChanged();
  }

  /** The first view of a graph: all of it when that is readable, else its top at a readable zoom
   *  (a tall model fitted whole would show only coloured boxes; F fits it). */
  openView(): void {
    if (!this.scene) return;
    this.fit();
    const c = this.renderer.camera;
    if (c.scale >= 0.6) return;
    const [x0, y0, x1] = this.scene.bounds;
    c.scale = 0.8;
    c.tx = this.renderer.viewW / 2 - ((x0 + x1) / 2) * c.scale;
    c.ty = 30 - y0 * c.scale;
    this.renderer.request();
  }

  fit(): void {
    if (!this.scene) return;
    const [x0, y0, x1, y1] = this.scene.bounds;
    this.zoomToBox(x0 - 40, y0 - 40, x1 + 40, y1 + 40, 1.5);
  }

  zoomToBox(x0: number, y0: number, x1: number, y1: number, maxScale = 8): void {
    const { viewW: width, viewH: height } = this.renderer;
    const s = Math.min(width / Math.max(1, x1 - x0), height / Math.max(1, y1 - y0), maxScale);
    const c = this.renderer.camera;
    c.scale = Math.max(s, 1e-4);
    c.tx = width / 2 - ((x0 + x1) / 2) * c.scale;
    c.ty = height / 2 - ((y0 + y1) / 2) * c.scale;
    this.renderer.request();
  }

  zoomAt(factor: number, px: number, py: number): void {
    const c = this.renderer.camera;
    const s = Math.min(8, Math.max(1e-4, c.scale * factor));
    c.tx = px - ((px - c.tx) * s) / c.scale;
    c.ty = py - ((py - c.ty) * s) / c.scale;
    c.scale = s;
    this.renderer.request();
  }

  pan(dx: number, dy: number): void {
    this.renderer.camera.tx += dx;
    this.renderer.camera.ty += dy;
    this.renderer.request();
  }

  /** The view's rectangle on the page (the stage; the canvas is larger and moves while panning). */
  viewRect(): DOMRect {
    return this.canvas.parentElement!.getBoundingClientRect();
  }

  /** Pixel (device) coordinates of a mouse event in the view. */
  px(ev: MouseEvent): [number, number] {
    const r = this.viewRect();
    const dpr = this.renderer.viewW / Math.max(1, r.width);
    return [(ev.clientX - r.left) * dpr, (ev.clientY - r.top) * dpr];
  }

  pickAt(ev: MouseEvent): Pick | null {
    if (!this.scene) return null;
    const [wx, wy] = this.renderer.toWorld(...this.px(ev));
    return this.scene.pick(wx, wy, this.renderer.camera.scale);
  }

  private bind(): void {
    const c = this.canvas;
    c.addEventListener('wheel', (ev) => this.onWheel(ev), { passive: false });
    c.addEventListener('pointerdown', (ev) => this.onDown(ev));
    c.addEventListener('pointermove', (ev) => this.onMove(ev));
    c.addEventListener('pointerup', (ev) => this.onUp(ev));
    c.addEventListener('dblclick', (ev) => this.onDouble(ev));
    c.addEventListener('contextmenu', (ev) => ev.preventDefault());
    c.addEventListener('dragover', (ev) => ev.preventDefault());
    c.addEventListener('drop', (ev) => {
      ev.preventDefault();
      const key = ev.dataTransfer?.getData('application/x-tessera-op');
      if (!key) return;
      const [wx, wy] = this.renderer.toWorld(...this.px(ev));
      this.events.dropOp(key, wx, wy);
    });
  }

  private onWheel(ev: WheelEvent): void {
    ev.preventDefault();
    const [x, y] = this.px(ev);
    if (ev.ctrlKey || ev.metaKey) this.zoomAt(Math.exp(-ev.deltaY * 0.002), x, y);
    else if (ev.shiftKey) this.pan(-ev.deltaY, 0);
    else this.pan(-ev.deltaX, -ev.deltaY);
  }

  private onDown(ev: PointerEvent): void {
    const [x, y] = this.px(ev);
    this.canvas.setPointerCapture(ev.pointerId);
    if (ev.button === 1 || ev.button === 2) {
      ev.preventDefault();
      this.drag = { kind: 'pan', x, y };
      return;
    }
    if (ev.button !== 0) return;
    const hit = this.pickAt(ev);
    if (ev.altKey || this.boxZoomNext || !hit) {
      this.drag = { kind: 'box', x, y, zoom: ev.altKey || this.boxZoomNext };
      this.boxZoomNext = false;
      return;
    }
    if (hit.kind === 'terminal') {
      this.drag = { kind: 'link', from: hit, x, y };
      return;
    }
    if (hit.kind === 'node') {
      const additive = ev.ctrlKey || ev.shiftKey;
      if (additive && this.selected.has(hit.leaf)) {
        this.selected.delete(hit.leaf);
        this.select([...this.selected]);
      } else if (!this.selected.has(hit.leaf) || additive) this.select([hit.leaf], additive);
      const start = new Map<number, [number, number]>();
      for (const i of this.selected) start.set(i, [this.scene!.lay.itemX[i], this.scene!.lay.itemY[i]]);
      this.drag = { kind: 'move', x, y, moved: false, start };
      return;
    }
    if (hit.kind === 'edge') {
      this.selected.clear();
      this.selectLink(hit.edge, ev.ctrlKey || ev.shiftKey);
      return;
    }
    this.select([]);
  }

  private onMove(ev: PointerEvent): void {
    const d = this.drag;
    if (!d) return;
    const [x, y] = this.px(ev);
    const s = this.renderer.camera.scale;
    if (d.kind === 'pan') {
      this.pan(x - d.x, y - d.y);
      d.x = x;
      d.y = y;
    } else if (d.kind === 'move') {
      const lay = this.scene!.lay;
      for (const [i, [sx, sy]] of d.start) {
        lay.itemX[i] = sx + (x - d.x) / s;
        lay.itemY[i] = sy + (y - d.y) / s;
      }
      d.moved = true;
      this.renderer.invalidate();
    } else if (d.kind === 'link') {
      const [fx, fy] = this.scene!.termPos(d.from.leaf, d.from.side, d.from.port);
      this.renderer.overlay = [fx, fy, ...this.renderer.toWorld(x, y)];
      this.renderer.request();
    } else {
      const k = this.viewRect().width / this.renderer.viewW;
      Object.assign(this.marquee.style, {
        display: 'block',
        left: `${Math.min(x, d.x) * k}px`,
        top: `${Math.min(y, d.y) * k}px`,
        width: `${Math.abs(x - d.x) * k}px`,
        height: `${Math.abs(y - d.y) * k}px`,
      });
      this.marquee.classList.toggle('zoom', d.zoom);
    }
  }

  private onUp(ev: PointerEvent): void {
    const d = this.drag;
    this.drag = null;
    if (!d) return;
    const [x, y] = this.px(ev);
    if (d.kind === 'move' && d.moved) {
      const lay = this.scene!.lay;
      for (const i of d.start.keys()) this.pins.set(this.vm!.leaves[i].key, [lay.itemX[i], lay.itemY[i]]);
      this.events.moved();
      void this.repin();
    } else if (d.kind === 'link') {
      this.renderer.overlay = [];
      this.renderer.request();
      const hit = this.pickAt(ev);
      if (hit?.kind === 'terminal' && hit.side !== d.from.side) {
        const [from, to] = d.from.side === 'out' ? [d.from, hit] : [hit, d.from];
        this.events.connect(from, to);
      } else if (!hit && d.from.side === 'in' && Math.hypot(x - d.x, y - d.y) > 10) {
        const t = this.vm!.leaves[d.from.leaf].inputs[d.from.port];
        if (t?.value) this.events.disconnect(d.from.leaf, d.from.port);
      }
    } else if (d.kind === 'box') {
      this.marquee.style.display = 'none';
      if (Math.hypot(x - d.x, y - d.y) < 4) {
        if (!d.zoom) this.select([]);
        return;
      }
      const [ax, ay] = this.renderer.toWorld(Math.min(x, d.x), Math.min(y, d.y));
      const [bx, by] = this.renderer.toWorld(Math.max(x, d.x), Math.max(y, d.y));
      if (d.zoom) return this.zoomToBox(ax, ay, bx, by);
      const inside = this.scene!.items.query(ax, ay, bx, by).filter((i) => {
        const [ix, iy, iw, ih] = this.scene!.leafRect(i);
        return i < this.scene!.n && ix >= ax && iy >= ay && ix + iw <= bx && iy + ih <= by;
      });
      this.select(inside, ev.ctrlKey || ev.shiftKey);
    }
  }

  private onDouble(ev: MouseEvent): void {
    const hit = this.pickAt(ev);
    if (hit?.kind === 'group') void this.toggleGroup(hit.group);
    else if (hit?.kind === 'terminal') this.events.terminalDoubleClick(hit);
    else if (hit?.kind === 'node') this.events.nodeDoubleClick(hit.leaf);
  }
}

function countLive(leaves: Leaf[]): number {
  let n = 0;
  for (const l of leaves) if (!l.removed) n++;
  return n;
}

function sameArray(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return false;
  return true;
}

function sameLayoutInput(a: HierGraph, b: HierGraph): boolean {
  return (
    sameArray(a.leafW, b.leafW) &&
    sameArray(a.leafH, b.leafH) &&
    sameArray(a.leafGroup, b.leafGroup) &&
    sameArray(a.groupParent, b.groupParent) &&
    sameArray(a.groupLabelW, b.groupLabelW) &&
    sameArray(a.edgeSrc, b.edgeSrc) &&
    sameArray(a.edgeDst, b.edgeDst) &&
    sameArray(a.pinned ?? [], b.pinned ?? []) &&
    sameArray(a.floating ?? [], b.floating ?? [])
  );
}

/** Groups holding any of `leaves`, at any depth (their titles count the leaves below). */
function ancestors(groups: Groups, leaves: number[]): number[] {
  const out = new Set<number>();
  for (const i of leaves) for (let k = groups.leafGroup[i]; k >= 0; k = groups.parent[k]) out.add(k);
  return [...out];
}
