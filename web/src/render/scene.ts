// What is drawn: instance data built from the view model and the layout. The base layers (boxes and
// edges of every visible item) are built once per layout; the detail layers (terminals, text) only for
// items in view, and only when zoomed in far enough to read them (level of detail).
import { buildAtlas, glyphBox, glyphInset, type Atlas } from './atlas';
import { THEME, opColor, type Rgba } from './colors';
import { FloatBuilder } from './gl';
import { SpatialGrid } from './spatial';
import { FONT, GROUP, HEADER_H, LINE_H, PAD, TERM_R, TERM_R_OPTIONAL, terminalX } from '../model/glyph';
import type { Groups } from '../model/groups';
import type { Leaf, Terminal, ViewModel } from '../model/viewmodel';
import type { HierResult } from '../layout/hierarchy';

export const RECT_STRIDE = 14;
export const LINE_STRIDE = 9;
export const GLYPH_STRIDE = 12;

export type Lod = 'far' | 'mid' | 'near';
export type Region = [number, number, number, number]; // x0, y0, x1, y1 in world units
export const DECIMATE_BELOW = 0.05; // scale under which boxes are merged per 2-pixel cell
const NO_EDGES_BELOW = 0.004; // scale under which edges are left out (boxes are dots)

function range(a: number, b: number): number[] {
  const out = new Array<number>(Math.max(0, b - a));
  for (let i = a; i < b; i++) out[i - a] = i;
  return out;
}
export const lodFor = (scale: number): Lod => (scale < 0.3 ? 'far' : scale < 0.6 ? 'mid' : 'near');

export interface SceneState {
  selected: Set<number>; // leaf indices
  selectedEdge: number; // visible edge index or -1 (the link clicked last)
  selectedEdges?: Set<number>; // every selected link (Shift/Ctrl+click adds one), selectedEdge among them
}

export type Pick =
  | { kind: 'terminal'; leaf: number; side: 'in' | 'out'; port: number }
  | { kind: 'node'; leaf: number }
  | { kind: 'group'; group: number; collapsed: boolean }
  | { kind: 'edge'; edge: number };

let atlas: Atlas | null = null;
export function sharedAtlas(): Atlas {
  return (atlas ??= buildAtlas());
}

export interface TextRun {
  s: string;
  x: number;
  cy: number;
  size: number;
  col: Rgba;
}

/** Leaves and groups in two grids: leaves keep their indices across edits (their grid is patched),
 *  while the groups' item indices (after the leaves) move when leaves are appended; their few boxes are
 *  indexed again with each scene. */
export class ItemIndex {
  constructor(
    readonly leaves: SpatialGrid,
    readonly groups: SpatialGrid,
  ) {}

  /** Items whose rectangles intersect [x0, x1] x [y0, y1]: leaves first. */
  query(x0: number, y0: number, x1: number, y1: number, out: number[] = []): number[] {
    this.leaves.query(x0, y0, x1, y1, out);
    return this.groups.query(x0, y0, x1, y1, out);
  }
}

/** What an edit patched in place: the scene before it (its indexes are taken over and patched, so it
 *  must not be queried afterwards) and the leaves whose look changed (their edges are boxed again). */
export interface ScenePatch {
  prev: Scene;
  leaves: Iterable<number>;
}

export class Scene {
  readonly n: number;
  /** When set, text is recorded as runs (for SVG/PNG export) instead of glyph quads. */
  textSink: TextRun[] | null = null;
  readonly items: ItemIndex;
  private readonly edgeIndex: SpatialGrid;
  /** Bounding box of each visible edge's polyline (x, y, w, h), kept so that the next scene can tell
   *  which part of the view an edit changed without this scene's view model (which the edit patched). */
  readonly edgeBox: [Float32Array, Float32Array, Float32Array, Float32Array];
  /** Built by patching the previous scene's indexes (tests, the benchmark's marks). */
  readonly patched: boolean;
  /** When patched: the leaves whose rectangle differs from the previous scene's (render/diff.ts then
   *  needs no second pass over every leaf). */
  readonly movedLeaves: number[] | null = null;
  /** The layout those leaves moved from (the previous scene's). */
  readonly movedFrom: HierResult | null = null;

  constructor(
    readonly vm: ViewModel,
    readonly groups: Groups,
    readonly lay: HierResult,
    patch?: ScenePatch,
  ) {
    this.n = vm.leaves.length;
    const n = this.n;
    const shownGroups: number[] = [];
    for (let i = n + 1; i < lay.itemX.length; i++) if (!Number.isNaN(lay.itemX[i])) shownGroups.push(i);
    const groupGrid = new SpatialGrid(lay.itemX, lay.itemY, lay.itemW, lay.itemH, shownGroups);
    const m = lay.edgeSrcItem.length;
    const box: Scene['edgeBox'] = [
      new Float32Array(m),
      new Float32Array(m),
      new Float32Array(m),
      new Float32Array(m),
    ];
    this.edgeBox = box;
    const prev = patch?.prev;
    this.patched = !!prev && prev.vm === vm && prev.n <= n;
    if (!prev || !this.patched) {
      const leaves: number[] = [];
      for (let i = 0; i < n; i++) if (!Number.isNaN(lay.itemX[i])) leaves.push(i);
      this.items = new ItemIndex(
        new SpatialGrid(lay.itemX, lay.itemY, lay.itemW, lay.itemH, leaves),
        groupGrid,
      );
      for (let e = 0; e < m; e++) this.boxEdge(e);
      this.edgeIndex = new SpatialGrid(...box, range(0, m));
      return;
    }
    // Leaves keep their index: only those whose rectangle changed move in the grid.
    const la = prev.lay;
    const moved = new Uint8Array(n);
    const leafGrid = prev.items.leaves;
    const movedLeaves: number[] = [];
    const [ax, ay, aw, ah] = [la.itemX, la.itemY, la.itemW, la.itemH];
    const [bx, by, bw, bh] = [lay.itemX, lay.itemY, lay.itemW, lay.itemH];
    for (let i = 0; i < n; i++) {
      // Inline (a call per leaf was most of a patched scene's cost on 50,000 leaves); NaN: hidden.
      if (i < prev.n) {
        const x = ax[i], X = bx[i], y = ay[i], Y = by[i], w = aw[i], W = bw[i], h = ah[i], H = bh[i]; // prettier-ignore
        if (
          (x === X || (x !== x && X !== X)) &&
          (y === Y || (y !== y && Y !== Y)) &&
          (w === W || (w !== w && W !== W)) &&
          (h === H || (h !== h && H !== H))
        )
          continue;
      }
      moved[i] = 1;
      movedLeaves.push(i);
      if (i < prev.n) leafGrid.remove(i);
    }
    leafGrid.rebind(lay.itemX, lay.itemY, lay.itemW, lay.itemH);
    for (const i of movedLeaves) leafGrid.insert(i);
    this.items = new ItemIndex(leafGrid, groupGrid);
    this.movedLeaves = movedLeaves;
    this.movedFrom = la;
    for (const i of patch.leaves) if (i < n) moved[i] = 1; // terminals may have changed
    // Edges: kept ones (layout/patch.ts says which) whose ends did not move keep their box.
    const from = lay.edgeFrom;
    if (!from || from.length !== m) {
      for (let e = 0; e < m; e++) this.boxEdge(e);
      this.edgeIndex = new SpatialGrid(...box, range(0, m));
      return;
    }
    const ngA = la.itemX.length - prev.n;
    const still = (j: number) => (j < n ? !moved[j] : j - n < ngA && sameRect(la, prev.n + (j - n), lay, j));
    const [px, py, pw, ph] = prev.edgeBox;
    const to = new Int32Array(la.edgeSrcItem.length).fill(-1);
    const reboxed: number[] = [];
    let renumbered = false;
    for (let e = 0; e < m; e++) {
      const o = from[e];
      if (o >= 0) {
        to[o] = e;
        renumbered ||= o !== e;
      }
      if (o >= 0 && still(lay.edgeSrcItem[e]) && still(lay.edgeDstItem[e])) {
        box[0][e] = px[o];
        box[1][e] = py[o];
        box[2][e] = pw[o];
        box[3][e] = ph[o];
        continue;
      }
      this.boxEdge(e);
      reboxed.push(e);
    }
    const grid = prev.edgeIndex;
    for (const e of reboxed) if (from[e] >= 0) grid.remove(from[e]);
    if (renumbered || to.includes(-1)) grid.renumber(to);
    grid.rebind(...box);
    for (const e of reboxed) grid.insert(e);
    this.edgeIndex = grid;
  }

  /** Sets edgeBox[e]: the box of edge e's polyline (edgePoints) without building it (no allocation
   *  per edge, which on 50,000 edges was most of building a scene). */
  private boxEdge(e: number): void {
    const l = this.lay;
    const vm = this.vm;
    const a = l.edgeSrcItem[e];
    const b = l.edgeDstItem[e];
    const leafEdge = vm.edges[l.edgeLeaf[e]];
    const sx =
      a < this.n
        ? l.itemX[a] + terminalX(leafEdge.srcPort, vm.leaves[a].outputs.length, l.itemW[a])
        : l.itemX[a] + l.itemW[a] / 2;
    const sy = l.itemY[a] + l.itemH[a];
    const tx =
      b < this.n
        ? l.itemX[b] + terminalX(leafEdge.dstPort, vm.leaves[b].inputs.length, l.itemW[b])
        : l.itemX[b] + l.itemW[b] / 2;
    const ty = l.itemY[b];
    let x0 = Math.min(sx, tx), x1 = Math.max(sx, tx); // prettier-ignore
    let y0 = Math.min(sy, ty - 10), y1 = Math.max(sy + 10, ty); // prettier-ignore
    for (let k = l.routeStart[e]; k < l.routeStart[e + 1]; k++) {
      const x = l.routePts[2 * k];
      const y = l.routePts[2 * k + 1];
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
    const [ex, ey, ew, eh] = this.edgeBox;
    ex[e] = x0;
    ey[e] = y0;
    ew[e] = x1 - x0;
    eh[e] = y1 - y0;
  }

  /** Worst finding among the leaves below group k: 2 error, 1 warning, 0 none (a collapsed group's
   *  badge). Computed when first asked, from the leaves with a finding only. */
  groupSeverity(k: number): number {
    if (!this.groupSev) {
      const g = this.groups;
      const sev = new Uint8Array(g.parent.length);
      this.vm.leaves.forEach((leaf, i) => {
        const s = leaf.removed ? 0 : leaf.severity === 'error' ? 2 : leaf.severity === 'warning' ? 1 : 0;
        for (let k = s ? g.leafGroup[i] : -1; k >= 0 && sev[k] < s; k = g.parent[k]) sev[k] = s;
      });
      this.groupSev = sev;
    }
    return this.groupSev[k] ?? 0;
  }
  private groupSev: Uint8Array | null = null;

  /** Leaves' findings were patched in place (no new scene): group badges are computed again. */
  forgetSeverities(): void {
    this.groupSev = null;
  }

  /** Where leaf i shows: its own box, or the box of the collapsed group hiding it; null when neither is
   *  drawn (a tombstone, a leaf of a hidden graph part). */
  shownRect(i: number): [number, number, number, number] | null {
    const l = this.lay;
    if (i >= this.n) return null;
    if (!Number.isNaN(l.itemX[i])) return this.leafRect(i);
    let top = -1; // the outermost collapsed group holding it is the one drawn
    for (let k = this.groups.leafGroup[i]; k > 0; k = this.groups.parent[k])
      if (l.groupState[k] === 1) top = k;
    return top < 0 || Number.isNaN(l.itemX[this.n + top]) ? null : this.leafRect(this.n + top);
  }

  /** Visible edges whose polyline's box meets the rectangle. */
  edgesIn(x0: number, y0: number, x1: number, y1: number): number[] {
    return this.edgeIndex.query(x0, y0, x1, y1);
  }

  /** Extent of every visible item (pinned nodes may sit outside the layout's own box). */
  get bounds(): [number, number, number, number] {
    if (this.extent) return this.extent;
    const l = this.lay;
    let x0 = 0, y0 = 0, x1 = Math.max(1, l.width), y1 = Math.max(1, l.height); // prettier-ignore
    for (let i = 0; i < this.n; i++) {
      if (Number.isNaN(l.itemX[i])) continue;
      x0 = Math.min(x0, l.itemX[i]);
      y0 = Math.min(y0, l.itemY[i]);
      x1 = Math.max(x1, l.itemX[i] + l.itemW[i]);
      y1 = Math.max(y1, l.itemY[i] + l.itemH[i]);
    }
    return (this.extent = [x0, y0, x1, y1]);
  }
  private extent: [number, number, number, number] | null = null;

  leafRect(i: number): [number, number, number, number] {
    const l = this.lay;
    return [l.itemX[i], l.itemY[i], l.itemW[i], l.itemH[i]];
  }

  termPos(leaf: number, side: 'in' | 'out', port: number): [number, number] {
    const [x, y, w, h] = this.leafRect(leaf);
    const terms = side === 'in' ? this.vm.leaves[leaf].inputs : this.vm.leaves[leaf].outputs;
    return [x + terminalX(port, terms.length, w), side === 'in' ? y : y + h];
  }

  /** Polyline of visible edge e: source terminal, a short stub, the bends, a stub, target terminal. */
  edgePoints(e: number): number[] {
    const l = this.lay;
    const a = l.edgeSrcItem[e];
    const b = l.edgeDstItem[e];
    const leafEdge = this.vm.edges[l.edgeLeaf[e]];
    const [sx, sy] =
      a < this.n
        ? this.termPos(a, 'out', leafEdge.srcPort)
        : [l.itemX[a] + l.itemW[a] / 2, l.itemY[a] + l.itemH[a]];
    const [tx, ty] =
      b < this.n ? this.termPos(b, 'in', leafEdge.dstPort) : [l.itemX[b] + l.itemW[b] / 2, l.itemY[b]];
    const pts = [sx, sy, sx, sy + 10];
    for (let k = l.routeStart[e]; k < l.routeStart[e + 1]; k++)
      pts.push(l.routePts[2 * k], l.routePts[2 * k + 1]);
    pts.push(tx, ty - 10, tx, ty);
    return pts;
  }

  /** Boxes and edges of the items in `region` (all when absent): groups behind, outermost first. */
  buildBase(
    state: SceneState,
    lod: Lod,
    scale: number,
    rects: FloatBuilder,
    lines: FloatBuilder,
    region?: Region,
  ): void {
    rects.reset();
    lines.reset();
    const l = this.lay;
    const n = this.n;
    const all = !region;
    const items = region ? this.items.query(...region).sort((a, b) => a - b) : null;
    const groups = items ? items.filter((i) => i > n).map((i) => i - n) : range(1, l.groupState.length);
    for (const k of groups) {
      const s = l.groupState[k];
      if (s === 0) continue;
      const x = l.itemX[n + k], y = l.itemY[n + k], w = l.itemW[n + k], h = l.itemH[n + k]; // prettier-ignore
      if (s === 2) rects.push(x, y, w, h, ...THEME.groupFill, ...THEME.groupStroke, 8, 1);
      else {
        rects.push(x, y, w, h, ...THEME.groupCollapsed, ...THEME.groupStroke, 8, 1.5);
        // The type-check badge of what the box hides (a call's body included), as a node's.
        const sev = this.groupSeverity(k);
        if (sev)
          rects.push(
            x + w - 9,
            y - 5,
            14,
            14,
            ...(sev === 2 ? THEME.error : THEME.warning),
            ...THEME.background,
            7,
            1.5,
          );
      }
    }
    const far = lod === 'far';
    // Far out, many boxes share a pixel: one box per 2-pixel cell (and edges as single straight
    // segments, none at all when boxes are dots) keeps the primitive count near the pixel count.
    const cell = far && scale < DECIMATE_BELOW ? 2 / scale : 0;
    const edges =
      cell && scale < NO_EDGES_BELOW
        ? []
        : region
          ? this.edgeIndex.query(...region)
          : range(0, l.edgeSrcItem.length);
    for (const e of edges) {
      const p = this.edgePoints(e);
      const sel = e === state.selectedEdge || !!state.selectedEdges?.has(e);
      const col: Rgba = sel ? THEME.edgeSelected : far ? THEME.edgeFar : THEME.edge;
      const width = sel ? 3 : far ? 1 : 1.5;
      if (cell) lines.push(p[0], p[1], p[p.length - 2], p[p.length - 1], ...col, width);
      else
        for (let k = 0; k + 3 < p.length; k += 2)
          lines.push(p[k], p[k + 1], p[k + 2], p[k + 3], ...col, width);
    }
    const taken = new Set<number>();
    const leaves = items ? items.filter((i) => i < n) : range(0, n);
    for (const i of leaves) {
      if (all && Number.isNaN(l.itemX[i])) continue;
      const leaf = this.vm.leaves[i];
      const x = l.itemX[i], y = l.itemY[i], w = l.itemW[i], h = l.itemH[i]; // prettier-ignore
      const sel = state.selected.has(i);
      const col = opColor(leaf.op);
      if (cell && !sel) {
        const key = Math.floor(x / cell) * 1048576 + Math.floor(y / cell);
        if (taken.has(key)) continue;
        taken.add(key);
        rects.push(x, y, Math.max(w, cell), Math.max(h, cell), ...col, ...col, 0, 0);
        continue;
      }
      if (far) {
        rects.push(x, y, w, h, ...col, ...(sel ? THEME.selected : col), 4, sel ? 3 : 0);
        continue;
      }
      rects.push(x, y, w, h, ...THEME.body, ...(sel ? THEME.selected : THEME.bodyStroke), 6, sel ? 2.5 : 1);
      rects.push(x + 1, y + 1, w - 2, HEADER_H, ...col, ...col, 5, 0);
      rects.push(x + 1, y + HEADER_H / 2, w - 2, HEADER_H / 2 + 1, ...col, ...col, 0, 0);
      if (leaf.severity === 'error' || leaf.severity === 'warning') {
        const c = leaf.severity === 'error' ? THEME.error : THEME.warning;
        rects.push(x + w - 9, y - 5, 14, 14, ...c, ...THEME.background, 7, 1.5);
      }
    }
  }

  buildDetail(
    view: [number, number, number, number],
    lod: Lod,
    rects: FloatBuilder,
    glyphs: FloatBuilder,
  ): number {
    rects.reset();
    glyphs.reset();
    if (lod === 'far') return 0;
    // In item order, whatever the region: where decorations overlap, a pass drawing part of the view
    // (an edit, a first frame) must stack them as a pass drawing all of it does.
    const inView = Int32Array.from(this.items.query(view[0], view[1], view[2], view[3])).sort();
    const l = this.lay;
    for (const i of inView) {
      if (i >= this.n) {
        this.groupText(i - this.n, glyphs);
        continue;
      }
      const leaf = this.vm.leaves[i];
      const x = l.itemX[i], y = l.itemY[i], w = l.itemW[i], h = l.itemH[i]; // prettier-ignore
      leaf.inputs.forEach((t, k) => this.terminal(rects, x + terminalX(k, leaf.inputs.length, w), y, t));
      leaf.outputs.forEach((t, k) =>
        this.terminal(rects, x + terminalX(k, leaf.outputs.length, w), y + h, t),
      );
      this.text(glyphs, leaf.op, x + PAD, y + HEADER_H / 2 + 1, FONT.title, THEME.text, w - 2 * PAD);
      if (lod === 'mid') continue;
      this.text(
        glyphs,
        displayName(leaf),
        x + PAD,
        y + HEADER_H + LINE_H / 2 + 3,
        FONT.body,
        THEME.text,
        w - 2 * PAD,
      );
      leaf.lines.forEach((s, k) =>
        this.text(
          glyphs,
          s,
          x + PAD,
          y + HEADER_H + LINE_H * (k + 1.5) + 3,
          FONT.body,
          THEME.textDim,
          w - 2 * PAD,
        ),
      );
    }
    return inView.length;
  }

  private groupText(k: number, glyphs: FloatBuilder): void {
    const l = this.lay;
    const it = this.n + k;
    const label = `${this.groups.label[k]}  (${this.groups.size[k]})`;
    const collapsed = l.groupState[k] === 1;
    const y = collapsed ? l.itemY[it] + l.itemH[it] / 2 : l.itemY[it] + GROUP.header / 2;
    this.text(
      glyphs,
      (collapsed ? '+ ' : '- ') + label,
      l.itemX[it] + 10,
      y,
      FONT.title,
      THEME.text,
      l.itemW[it] - 20,
    );
  }

  private terminal(rects: FloatBuilder, cx: number, cy: number, t: Terminal): void {
    const r = t.optional ? TERM_R_OPTIONAL : TERM_R;
    const fill = t.state === 'free' ? THEME.termFree : t.state === 'init' ? THEME.termInit : THEME.termLinked;
    const stroke = t.state === 'free' ? THEME.termFreeStroke : fill;
    rects.push(cx - r, cy - r, 2 * r, 2 * r, ...fill, ...stroke, r, t.variadicFree ? 1 : 1.5);
  }

  /** Left-aligned text vertically centred on cy, clipped with an ellipsis to maxW. */
  text(glyphs: FloatBuilder, s: string, x: number, cy: number, size: number, col: Rgba, maxW: number): void {
    const a = sharedAtlas();
    const [gw, gh, adv] = glyphBox(size);
    const maxChars = Math.max(1, Math.floor(maxW / adv));
    const str = s.length > maxChars ? s.slice(0, maxChars - 1) + '…' : s;
    if (this.textSink) {
      this.textSink.push({ s: str, x, cy, size, col });
      return;
    }
    const x0 = x - glyphInset(size);
    const y0 = cy - gh / 2;
    for (let k = 0; k < str.length; k++) {
      const ch = str[k];
      if (ch === ' ') continue;
      const uv = a.uv.get(ch) ?? a.fallback;
      glyphs.push(x0 + k * adv, y0, gw, gh, uv[0], uv[1], uv[2], uv[3], ...col);
    }
  }

  pick(x: number, y: number, scale: number): Pick | null {
    const slack = 6 / scale;
    const hits = this.items.query(x - slack, y - slack, x + slack, y + slack);
    // Terminals first (they stick out of their node), then nodes, then groups, innermost first.
    // Terminals are drawn (and so picked) only from the middle level of detail on.
    for (const i of hits) {
      if (i >= this.n || lodFor(scale) === 'far') continue;
      const t = this.pickTerminal(i, x, y, Math.max(TERM_R + 3, 8 / scale));
      if (t) return t;
    }
    let best: Pick | null = null;
    let bestDepth = -1;
    const tol = lodFor(scale) === 'far' ? 3 / scale : 0; // boxes a few pixels tall are still hit
    for (const i of hits) {
      const [ix, iy, iw, ih] = this.leafRect(i);
      if (x < ix - tol || x > ix + iw + tol || y < iy - tol || y > iy + ih + tol) continue;
      if (i < this.n) return { kind: 'node', leaf: i };
      const k = i - this.n;
      const collapsed = this.lay.groupState[k] === 1;
      const onHeader = collapsed || y <= iy + GROUP.header;
      if (!onHeader) continue;
      const d = depthOf(this.groups.parent, k);
      if (d > bestDepth) {
        bestDepth = d;
        best = { kind: 'group', group: k, collapsed };
      }
    }
    if (best) return best;
    return this.pickEdge(x, y, slack);
  }

  private pickTerminal(i: number, x: number, y: number, r: number): Pick | null {
    const leaf = this.vm.leaves[i];
    for (const side of ['in', 'out'] as const) {
      const terms = side === 'in' ? leaf.inputs : leaf.outputs;
      for (let k = 0; k < terms.length; k++) {
        const [tx, ty] = this.termPos(i, side, k);
        if ((tx - x) ** 2 + (ty - y) ** 2 <= r * r) return { kind: 'terminal', leaf: i, side, port: k };
      }
    }
    return null;
  }

  private pickEdge(x: number, y: number, slack: number): Pick | null {
    let best = -1;
    let bestD = slack * slack;
    for (const e of this.edgeIndex.query(x - slack, y - slack, x + slack, y + slack)) {
      const p = this.edgePoints(e);
      for (let k = 0; k + 3 < p.length; k += 2) {
        const d = segDist2(x, y, p[k], p[k + 1], p[k + 2], p[k + 3]);
        if (d < bestD) {
          bestD = d;
          best = e;
        }
      }
    }
    return best >= 0 ? { kind: 'edge', edge: best } : null;
  }
}

export function displayName(leaf: Leaf): string {
  return leaf.scope && leaf.name.startsWith(leaf.scope + '/')
    ? leaf.name.slice(leaf.scope.length + 1)
    : leaf.name;
}

function sameRect(a: HierResult, i: number, b: HierResult, j: number): boolean {
  const eq = (x: number, y: number) => x === y || (Number.isNaN(x) && Number.isNaN(y));
  return (
    eq(a.itemX[i], b.itemX[j]) &&
    eq(a.itemY[i], b.itemY[j]) &&
    eq(a.itemW[i], b.itemW[j]) &&
    eq(a.itemH[i], b.itemH[j])
  );
}

function depthOf(parent: number[], k: number): number {
  let d = 0;
  for (let g = k; g > 0; g = parent[g]) d++;
  return d;
}

function segDist2(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len = dx * dx + dy * dy;
  const t = len > 0 ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / len)) : 0;
  return (px - ax - t * dx) ** 2 + (py - ay - t * dy) ** 2;
}
