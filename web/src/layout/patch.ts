// The layout after an edit that cannot have moved anything, computed from the layout before it on the
// main thread: no round trip to the worker and no pass over every group (which, even when each group's
// layout comes from the cache, costs tens of milliseconds on 50,000 nodes). It gives what layoutSteps
// gives for the same input (tested), or null when the edit may have moved something: then the worker
// lays it out.
import type { HierGraph, HierResult } from './hierarchy';

/** Outermost collapsed group holding leaf i (its box shows the leaf), or -1 when the leaf is shown. */
function collapsedTop(g: HierGraph, state: Uint8Array, i: number): number {
  let top = -1;
  for (let k = g.leafGroup[i]; k > 0; k = g.groupParent[k]) if (state[k] === 1) top = k;
  return top;
}

function sameLabels(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** Leaves n0.. appended to the input (`prevLabelW`: the group title widths before): each must float at
 *  its pin in an expanded group or hide in a collapsed one, no group new or retitled to another width,
 *  and each new edge must end on a floating leaf or lift to a visible edge already drawn. */
export function appendedLayout(
  prev: HierResult,
  g: HierGraph,
  n0: number,
  e0: number,
  prevLabelW: Float32Array,
): HierResult | null {
  const n = g.leafW.length;
  const ng = g.groupParent.length;
  const state = prev.groupState;
  if (ng !== state.length || n0 + ng !== prev.itemX.length || !sameLabels(prevLabelW, g.groupLabelW))
    return null;
  const shift = n - n0;
  const floats = (i: number) =>
    i < n && !!g.floating?.[i] && !!g.pinned && !Number.isNaN(g.pinned[2 * i]) && state[g.leafGroup[i]] === 2;
  const itemX = new Float32Array(n + ng);
  const itemY = new Float32Array(n + ng);
  const itemW = new Float32Array(n + ng);
  const itemH = new Float32Array(n + ng);
  for (const [to, from] of [
    [itemX, prev.itemX],
    [itemY, prev.itemY],
    [itemW, prev.itemW],
    [itemH, prev.itemH],
  ] as const) {
    to.set(from.subarray(0, n0));
    to.set(from.subarray(n0), n);
  }
  for (let i = n0; i < n; i++) {
    itemW[i] = g.leafW[i];
    itemH[i] = g.leafH[i];
    if (floats(i)) {
      itemX[i] = g.pinned![2 * i];
      itemY[i] = g.pinned![2 * i + 1];
    } else if (collapsedTop(g, state, i) < 0)
      return null; // shown in a group: it needs a slot
    else itemX[i] = itemY[i] = NaN;
  }
  // Typed arrays filled in plain loops: Array.from with a mapping function over 50,000 edges was
  // tens of ms of an edit under load.
  const m0 = prev.edgeSrcItem.length;
  const cap = m0 + Math.max(0, g.edgeSrc.length - e0);
  const src = new Int32Array(cap);
  const dst = new Int32Array(cap);
  const leafEdge = new Int32Array(cap);
  const seen = new Set<number>();
  const items = n + ng;
  for (let e = 0; e < m0; e++) {
    const a = prev.edgeSrcItem[e] < n0 ? prev.edgeSrcItem[e] : prev.edgeSrcItem[e] + shift;
    const b = prev.edgeDstItem[e] < n0 ? prev.edgeDstItem[e] : prev.edgeDstItem[e] + shift;
    src[e] = a;
    dst[e] = b;
    leafEdge[e] = prev.edgeLeaf[e];
    if (a >= n || b >= n) seen.add(a * items + b);
  }
  const rep = (i: number) => {
    const top = collapsedTop(g, state, i);
    return top >= 0 ? n + top : i;
  };
  let m = m0;
  for (let e = e0; e < g.edgeSrc.length; e++) {
    const ra = rep(g.edgeSrc[e]);
    const rb = rep(g.edgeDst[e]);
    if (ra === rb) continue;
    const lifted = ra >= n || rb >= n;
    if (lifted && seen.has(ra * items + rb)) continue;
    if (!floats(ra) && !floats(rb)) return null; // a new pair in some group's layout
    if (lifted) seen.add(ra * items + rb);
    src[m] = ra;
    dst[m] = rb;
    leafEdge[m] = e;
    m++;
  }
  const routeStart = new Int32Array(m + 1);
  routeStart.set(prev.routeStart);
  routeStart.fill(prev.routeStart[m0], m0 + 1);
  const edgeFrom = new Int32Array(m).fill(-1);
  for (let e = 0; e < m0; e++) edgeFrom[e] = e;
  return {
    ...prev,
    itemX,
    itemY,
    itemW,
    itemH,
    // Views, not copies, and the routes shared (nothing writes into a layout's edges or routes): each
    // copy was megabytes of an edit at 50,000 nodes, and garbage to collect.
    edgeSrcItem: src.subarray(0, m),
    edgeDstItem: dst.subarray(0, m),
    edgeLeaf: leafEdge.subarray(0, m),
    routeStart,
    routePts: prev.routePts,
    relaid: new Int32Array(0),
    edgeFrom,
  };
}

/** The edges of a patched layout: those of the layout before it copied with their routes, or new ones
 *  (no route), in order; `finish` makes the layout. */
class EdgeRows {
  readonly src: Int32Array;
  readonly dst: Int32Array;
  readonly leafEdge: Int32Array;
  readonly edgeFrom: Int32Array;
  readonly starts: Int32Array;
  readonly pts: Float32Array;
  m = 0; // edges so far
  np = 0; // route points so far

  constructor(cap: number, routeFloats: number) {
    this.src = new Int32Array(cap);
    this.dst = new Int32Array(cap);
    this.leafEdge = new Int32Array(cap);
    this.edgeFrom = new Int32Array(cap);
    this.starts = new Int32Array(cap + 1);
    this.pts = new Float32Array(routeFloats);
  }

  /** Edge e of `prev`, drawn as before, now standing for leaf edge k. */
  copy(prev: HierResult, e: number, k: number): void {
    this.push(prev.edgeSrcItem[e], prev.edgeDstItem[e], k, e);
    for (let j = prev.routeStart[e]; j < prev.routeStart[e + 1]; j++, this.np++) {
      this.pts[2 * this.np] = prev.routePts[2 * j];
      this.pts[2 * this.np + 1] = prev.routePts[2 * j + 1];
    }
  }

  /** A new edge from item a to item b for leaf edge k, routed later. */
  push(a: number, b: number, k: number, from = -1): void {
    const m = this.m++;
    [this.src[m], this.dst[m], this.leafEdge[m], this.edgeFrom[m], this.starts[m]] = [a, b, k, from, this.np];
  }

  finish(prev: HierResult, items: Float32Array[]): HierResult {
    const [itemX, itemY, itemW, itemH] = items;
    const m = this.m;
    this.starts[m] = this.np;
    return {
      ...prev,
      itemX,
      itemY,
      itemW,
      itemH,
      edgeSrcItem: this.src.subarray(0, m),
      edgeDstItem: this.dst.subarray(0, m),
      edgeLeaf: this.leafEdge.subarray(0, m),
      routeStart: this.starts.subarray(0, m + 1),
      routePts: this.pts.subarray(0, 2 * this.np),
      relaid: new Int32Array(0),
      edgeFrom: this.edgeFrom.subarray(0, m),
    };
  }
}

/** The item boxes of `prev`, copied to be patched. */
function itemCopies(prev: HierResult): Float32Array[] {
  return [prev.itemX.slice(), prev.itemY.slice(), prev.itemW.slice(), prev.itemH.slice()];
}

/** Leaves `removed` made tombstones (group -1, size 0) and their edges dropped (`edgeIndex`: each old
 *  edge's new index, -1 when dropped): each removed leaf must have floated or been hidden in a collapsed
 *  group, no group retitled to another width, and no lifted edge may lose the leaf edge it stood for. */
export function removedLayout(
  prev: HierResult,
  g: HierGraph,
  removed: number[],
  wasFloating: (i: number) => boolean,
  edgeIndex: Int32Array,
  prevLabelW: Float32Array,
): HierResult | null {
  if (g.groupParent.length !== prev.groupState.length || !sameLabels(prevLabelW, g.groupLabelW)) return null;
  const gone = new Set(removed);
  for (const i of removed) if (!wasFloating(i) && !Number.isNaN(prev.itemX[i])) return null;
  const items = itemCopies(prev);
  const [itemX, itemY, itemW, itemH] = items;
  for (const i of removed) {
    itemX[i] = itemY[i] = NaN;
    itemW[i] = g.leafW[i];
    itemH[i] = g.leafH[i];
  }
  const m0 = prev.edgeSrcItem.length;
  const rows = new EdgeRows(m0, prev.routePts.length);
  for (let e = 0; e < m0; e++) {
    const a = prev.edgeSrcItem[e];
    const b = prev.edgeDstItem[e];
    const k = edgeIndex[prev.edgeLeaf[e]];
    if (k < 0) {
      if (gone.has(a) || gone.has(b)) continue; // an edge of a removed leaf shown: it goes with it
      return null; // a lifted edge whose leaf edge went: another may stand for it, or none
    }
    rows.copy(prev, e, k);
  }
  return rows.finish(prev, items);
}

/** Whether leaf i floats at its pin in an expanded group (it takes no slot: nothing moves with it). */
function floatsIn(g: HierGraph, state: Uint8Array, i: number): boolean {
  return (
    i < g.leafW.length &&
    !!g.floating?.[i] &&
    !!g.pinned &&
    !Number.isNaN(g.pinned[2 * i]) &&
    state[g.leafGroup[i]] === 2
  );
}

/** Leaves whose size changed (an attribute shown on the glyph): each must float or hide in a collapsed
 *  group, so that no group's layout depends on it. */
export function resizedLayout(prev: HierResult, g: HierGraph, leaves: Iterable<number>): HierResult | null {
  const state = prev.groupState;
  if (g.groupParent.length !== state.length || g.leafW.length + state.length !== prev.itemX.length)
    return null;
  const itemW = prev.itemW.slice();
  const itemH = prev.itemH.slice();
  for (const i of leaves) {
    if (!floatsIn(g, state, i) && collapsedTop(g, state, i) < 0) return null;
    itemW[i] = g.leafW[i];
    itemH[i] = g.leafH[i];
  }
  const edgeFrom = new Int32Array(prev.edgeSrcItem.length);
  for (let e = 0; e < edgeFrom.length; e++) edgeFrom[e] = e;
  return { ...prev, itemW, itemH, relaid: new Int32Array(0), edgeFrom };
}

/** Leaves `relinked` whose input edges were replaced (relinkLeaves: `edgeIndex` gives each old leaf
 *  edge's new index, -1 when dropped; edges `kept`.. of `g` are the new ones): each must float or hide
 *  in a collapsed group, no lifted edge may lose the leaf edge it stood for, and each new edge must end
 *  on a floating leaf or lift to a visible edge already drawn. */
export function relinkedLayout(
  prev: HierResult,
  g: HierGraph,
  relinked: number[],
  edgeIndex: Int32Array,
  kept: number,
): HierResult | null {
  const n = g.leafW.length;
  const state = prev.groupState;
  const ng = state.length;
  if (g.groupParent.length !== ng || n + ng !== prev.itemX.length) return null;
  const floats = (i: number) => floatsIn(g, state, i);
  const mine = new Set(relinked);
  const items = itemCopies(prev);
  const [itemX, itemY, itemW, itemH] = items;
  for (const i of relinked) {
    if (floats(i)) [itemX[i], itemY[i]] = [g.pinned![2 * i], g.pinned![2 * i + 1]];
    else if (collapsedTop(g, state, i) < 0) return null; // its links shape its group's layout
    itemW[i] = g.leafW[i];
    itemH[i] = g.leafH[i];
  }
  const m0 = prev.edgeSrcItem.length;
  const rows = new EdgeRows(m0 + Math.max(0, g.edgeSrc.length - kept), prev.routePts.length);
  const count = n + ng;
  const seen = new Set<number>();
  for (let e = 0; e < m0; e++) {
    const a = prev.edgeSrcItem[e];
    const b = prev.edgeDstItem[e];
    const k = edgeIndex[prev.edgeLeaf[e]];
    if (k < 0) {
      if (mine.has(a) || mine.has(b)) continue; // drawn straight to a floating leaf: it goes
      return null; // a lifted edge whose leaf edge went: another may stand for it, or none
    }
    if (a >= n || b >= n) seen.add(a * count + b);
    rows.copy(prev, e, k);
  }
  const rep = (i: number) => {
    const top = collapsedTop(g, state, i);
    return top >= 0 ? n + top : i;
  };
  for (let e = kept; e < g.edgeSrc.length; e++) {
    const ra = rep(g.edgeSrc[e]);
    const rb = rep(g.edgeDst[e]);
    if (ra === rb) continue;
    const lifted = ra >= n || rb >= n;
    if (lifted && seen.has(ra * count + rb)) continue;
    if (!floats(ra) && !floats(rb)) return null; // a new pair in some group's layout
    if (lifted) seen.add(ra * count + rb);
    rows.push(ra, rb, e);
  }
  return rows.finish(prev, items);
}
