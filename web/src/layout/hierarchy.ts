// Hierarchical layout: nodes grouped by name scope (and local function), groups collapsed or expanded.
// Only expanded groups are laid out, each on its own (its direct children: leaves and child groups as
// boxes), innermost first; each group's result is cached under a key of its children and their sizes,
// so expanding one group re-lays out only it and its ancestors. Edges between leaves are lifted to the
// visible items that hold them and routed by the group where their two sides meet. The cache key covers
// everything a group's layout depends on (children, their sizes, the edges between them), so the cache
// stays valid across edits: an edit re-lays out only the groups it touched and their ancestors.
import { GROUP } from '../model/glyph';
import { layered, type LayeredOptions } from './layered';

/** The graph as the layout sees it: flat typed arrays (cheap to post to the worker). */
export interface HierGraph {
  leafW: Float32Array;
  leafH: Float32Array;
  leafGroup: Int32Array; // direct group of each leaf; group 0 is the root
  groupParent: Int32Array; // parent index < own index; root's parent is -1
  groupLabelW: Float32Array; // width of the group's title, so an expanded box is never narrower
  edgeSrc: Int32Array; // leaf indices
  edgeDst: Int32Array;
  pinned?: Float32Array; // per leaf x, y (NaN: laid out): positions the user placed
  /** Per leaf, 1: placed at its pin without taking a slot in its group's layout (nodes added to an
   *  expanded group: the group keeps its layout, so nothing else moves). Needs a pin to be shown. */
  floating?: Uint8Array;
}

export interface HierResult {
  itemX: Float32Array; // items: leaves 0..n-1, then groups; NaN when not visible
  itemY: Float32Array;
  itemW: Float32Array;
  itemH: Float32Array;
  groupState: Uint8Array; // 0 hidden, 1 collapsed box, 2 expanded container
  edgeSrcItem: Int32Array; // visible edges
  edgeDstItem: Int32Array;
  edgeLeaf: Int32Array; // a leaf edge it stands for (ports)
  routeStart: Int32Array; // into routePts (pairs), length edges + 1
  routePts: Float32Array;
  width: number;
  height: number;
  /** Groups laid out again by this run (cache misses): their routes may have changed. */
  relaid: Int32Array;
  /** Set by the layouts patched on the main thread (layout/patch.ts): each edge's index in the layout
   *  it was patched from, -1 for a new one, so that the scene re-boxes only what changed. */
  edgeFrom?: Int32Array;
  stats: { groupsLaidOut: number; cacheHits: number; visibleItems: number };
}

interface LocalLayout {
  key: string;
  x: Float64Array;
  y: Float64Array;
  width: number;
  height: number;
  pairs: Map<number, number>; // pair key -> layout edge index
  routes: Array<number[] | null>;
}

export type LayoutCache = Map<number, LocalLayout>; // by group index

const HASH_SEED = 2166136261;
const HASH_SEED2 = 0x9e3779b9;
function mix(h: number, v: number): number {
  return Math.imul(h ^ (v | 0), 16777619) >>> 0;
}

export function* layoutSteps(
  g: HierGraph,
  expanded: Uint8Array,
  cache: LayoutCache,
  opts: Partial<LayeredOptions> = {},
): Generator<number, HierResult> {
  const n = g.leafW.length;
  const ng = g.groupParent.length;
  const items = n + ng;
  // Topmost collapsed ancestor of each group (-1: every ancestor expanded, so the group is visible).
  const top = new Int32Array(ng).fill(-1);
  const groupState = new Uint8Array(ng);
  groupState[0] = 2;
  for (let k = 1; k < ng; k++) {
    const p = g.groupParent[k];
    if (top[p] >= 0 || groupState[p] !== 2) {
      top[k] = top[p] >= 0 ? top[p] : -1;
      groupState[k] = 0;
      continue;
    }
    groupState[k] = expanded[k] ? 2 : 1;
    if (!expanded[k]) top[k] = k;
  }
  const rep = (leaf: number) => {
    const t = top[g.leafGroup[leaf]];
    return t >= 0 ? n + t : leaf;
  };
  const parentOf = (item: number) => (item < n ? g.leafGroup[item] : g.groupParent[item - n]);
  const depth = new Int32Array(ng);
  for (let k = 1; k < ng; k++) depth[k] = depth[g.groupParent[k]] + 1;
  const depthOf = (item: number) => (item < n ? depth[g.leafGroup[item]] + 1 : depth[item - n]);

  // Children of each expanded group (leaves removed from the view have group -1). Floating leaves are
  // shown but take no slot.
  const floats = (i: number) =>
    !!g.floating?.[i] && !!g.pinned && !Number.isNaN(g.pinned[2 * i]) && groupState[g.leafGroup[i]] === 2;
  const children: number[][] = Array.from({ length: ng }, () => []);
  for (let i = 0; i < n; i++)
    if (groupState[g.leafGroup[i]] === 2 && !floats(i)) children[g.leafGroup[i]].push(i);
  for (let k = 1; k < ng; k++) if (groupState[k] !== 0) children[g.groupParent[k]].push(n + k);

  // Visible edges, lifted; each assigned to the group where its sides meet.
  const veSrc: number[] = [];
  const veDst: number[] = [];
  const veLeaf: number[] = [];
  const veGroup: number[] = [];
  const vePair: number[] = [];
  const seen = new Map<number, number>();
  const groupPairs: Array<Array<[number, number]>> = Array.from({ length: ng }, () => []);
  const pairIndex: Array<Map<number, number>> = Array.from({ length: ng }, () => new Map());
  const localIndex = new Int32Array(items).fill(-1);
  for (let k = 0; k < ng; k++) children[k].forEach((c, i) => (localIndex[c] = i));
  for (let e = 0; e < g.edgeSrc.length; e++) {
    const ra = rep(g.edgeSrc[e]);
    const rb = rep(g.edgeDst[e]);
    if (ra === rb) continue;
    if (ra >= n || rb >= n) {
      const key = ra * items + rb;
      if (seen.has(key)) continue;
      seen.set(key, e);
    }
    let ca = ra;
    let cb = rb;
    while (parentOf(ca) !== parentOf(cb)) {
      if (depthOf(ca) >= depthOf(cb)) ca = n + parentOf(ca);
      else cb = n + parentOf(cb);
    }
    if (ca === cb) continue;
    const grp = parentOf(ca);
    if (floats(ca) || floats(cb)) {
      // Drawn straight between its ends: no route in the group's layout, which does not know the leaf.
      veSrc.push(ra);
      veDst.push(rb);
      veLeaf.push(e);
      veGroup.push(grp);
      vePair.push(-1);
      continue;
    }
    const pk = localIndex[ca] * items + localIndex[cb];
    let pi = pairIndex[grp].get(pk);
    if (pi === undefined) {
      pi = groupPairs[grp].length;
      pairIndex[grp].set(pk, pi);
      groupPairs[grp].push([localIndex[ca], localIndex[cb]]);
    }
    veSrc.push(ra);
    veDst.push(rb);
    veLeaf.push(e);
    veGroup.push(grp);
    vePair.push(pi);
  }

  const itemW = new Float32Array(items).fill(NaN);
  const itemH = new Float32Array(items).fill(NaN);
  for (let i = 0; i < n; i++) {
    itemW[i] = g.leafW[i];
    itemH[i] = g.leafH[i];
  }
  for (let k = 0; k < ng; k++) {
    if (groupState[k] === 1) {
      itemW[n + k] = Math.max(GROUP.collapsedW, g.groupLabelW[k] + 2 * GROUP.pad);
      itemH[n + k] = GROUP.collapsedH;
    }
  }

  // Innermost first: a child group's index is larger than its parent's.
  const local: Array<LocalLayout | undefined> = new Array(ng);
  const relaid: number[] = [];
  let laidOut = 0;
  let hits = 0;
  for (let k = ng - 1; k >= 0; k--) {
    if (groupState[k] !== 2) continue;
    const kids = children[k];
    // Two 32-bit hashes of everything the group's layout depends on: a hit is correct whatever graph
    // or version the entry came from (the layout is a function of these inputs alone).
    let h1 = mix(HASH_SEED, kids.length);
    let h2 = mix(HASH_SEED2, kids.length);
    for (const c of kids) {
      h1 = mix(mix(h1, itemW[c] * 8), itemH[c] * 8);
      h2 = mix(mix(h2, itemH[c] * 8), itemW[c] * 8 + 1);
    }
    for (const [a, b] of groupPairs[k]) {
      h1 = mix(mix(h1, a), b);
      h2 = mix(mix(h2, b), a);
    }
    const key = `${h1}:${h2}:${kids.length}:${groupPairs[k].length}`;
    let lay = cache.get(k);
    if (lay && lay.key === key) {
      hits++;
    } else {
      const pairs = groupPairs[k];
      const res = layered(
        {
          widths: kids.map((c) => itemW[c]),
          heights: kids.map((c) => itemH[c]),
          src: pairs.map((p) => p[0]),
          dst: pairs.map((p) => p[1]),
        },
        opts,
      );
      lay = {
        key,
        x: res.x,
        y: res.y,
        width: res.width,
        height: res.height,
        pairs: new Map(),
        routes: res.routes,
      };
      cache.set(k, lay);
      relaid.push(k);
      laidOut++;
      yield laidOut;
    }
    local[k] = lay;
    if (k > 0) {
      itemW[n + k] = Math.max(lay.width + 2 * GROUP.pad, g.groupLabelW[k] + 2 * GROUP.pad);
      itemH[n + k] = lay.height + GROUP.header + GROUP.pad;
    }
  }

  // Absolute positions, outermost first.
  const itemX = new Float32Array(items).fill(NaN);
  const itemY = new Float32Array(items).fill(NaN);
  itemX[n] = 0;
  itemY[n] = 0;
  const originX = new Float64Array(ng);
  const originY = new Float64Array(ng);
  for (let k = 0; k < ng; k++) {
    if (groupState[k] !== 2) continue;
    const lay = local[k]!;
    const ox = k === 0 ? 0 : itemX[n + k] + GROUP.pad;
    const oy = k === 0 ? 0 : itemY[n + k] + GROUP.header;
    originX[k] = ox;
    originY[k] = oy;
    children[k].forEach((c, i) => {
      itemX[c] = ox + lay.x[i];
      itemY[c] = oy + lay.y[i];
    });
  }
  if (g.pinned) {
    for (let i = 0; i < n; i++) {
      if (Number.isNaN(g.pinned[2 * i]) || (Number.isNaN(itemX[i]) && !floats(i))) continue;
      itemX[i] = g.pinned[2 * i];
      itemY[i] = g.pinned[2 * i + 1];
    }
  }

  const m = veSrc.length;
  const routeStart = new Int32Array(m + 1);
  const pts: number[] = [];
  for (let e = 0; e < m; e++) {
    routeStart[e] = pts.length / 2;
    const grp = veGroup[e];
    const r = vePair[e] < 0 ? null : local[grp]!.routes[vePair[e]];
    const pinnedEnd =
      g.pinned &&
      ((veSrc[e] < n && !Number.isNaN(g.pinned[2 * veSrc[e]])) ||
        (veDst[e] < n && !Number.isNaN(g.pinned[2 * veDst[e]])));
    if (r && !pinnedEnd)
      for (let j = 0; j < r.length; j += 2) pts.push(originX[grp] + r[j], originY[grp] + r[j + 1]);
  }
  routeStart[m] = pts.length / 2;
  const root = local[0]!;
  return {
    itemX,
    itemY,
    itemW,
    itemH,
    groupState,
    edgeSrcItem: Int32Array.from(veSrc),
    edgeDstItem: Int32Array.from(veDst),
    edgeLeaf: Int32Array.from(veLeaf),
    routeStart,
    routePts: Float32Array.from(pts),
    width: root.width,
    height: root.height,
    relaid: Int32Array.from(relaid),
    stats: {
      groupsLaidOut: laidOut,
      cacheHits: hits,
      visibleItems: children.reduce((a, c) => a + c.length, 0),
    },
  };
}

/** Runs the layout to the end without yielding (tests, small graphs). */
export function layoutHierarchy(
  g: HierGraph,
  expanded: Uint8Array,
  cache: LayoutCache = new Map(),
  opts: Partial<LayeredOptions> = {},
): HierResult {
  const it = layoutSteps(g, expanded, cache, opts);
  for (;;) {
    const s = it.next();
    if (s.done) return s.value;
  }
}
