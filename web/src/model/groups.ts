// Groups from name scopes: '/encoder/layer.3/attention' nests as encoder > layer.3 > attention.
// Group 0 is the root (the graph itself); a group's parent always has a smaller index.
import { FONT, leafHeight, leafWidth, textWidth } from './glyph';
import type { HierGraph } from '../layout/hierarchy';
import type { ViewModel } from './viewmodel';

export interface Groups {
  parent: number[];
  path: string[]; // '/encoder/layer.3'
  label: string[]; // 'layer.3'
  leafGroup: Int32Array; // replaced (longer) when leaves are appended
  size: number[]; // leaves below, at any depth
  /** Groups that are calls of local functions (their leaves are the body's nodes): group -> call node
   *  id. They open collapsed, whatever the budget of defaultExpansion. */
  callOf?: Map<number, number>;
}

/** The scope without trailing slashes; the regular expression only where there is one (called for
 *  every leaf on the first render's critical path). */
const trimScope = (scope: string) => (scope.endsWith('/') ? scope.replace(/\/+$/, '') : scope);

export function buildGroups(vm: ViewModel): Groups {
  const parent = [-1];
  const path = [''];
  const label = [''];
  const index = new Map<string, number>([['', 0]]);
  const groupOf = scopeGroups(parent, path, label, index);
  const leafGroup = new Int32Array(vm.leaves.length);
  for (let i = 0; i < vm.leaves.length; i++) leafGroup[i] = groupOf(trimScope(vm.leaves[i].scope));
  const size = new Array<number>(parent.length).fill(0);
  for (const g of leafGroup) size[g]++;
  for (let k = parent.length - 1; k > 0; k--) size[parent[k]] += size[k];
  const callOf = new Map<number, number>();
  for (let i = 0; i < vm.leaves.length; i++) {
    const body = vm.leaves[i].body;
    if (body) callOf.set(leafGroup[i], body.call);
  }
  return { parent, path, label, leafGroup, size, callOf };
}

/** Groups for leaves appended to the view model (appendNodes): new scopes become new groups at the end
 *  (a parent still before its children), sizes grow along the ancestors. Returns the new groups. */
export function appendToGroups(groups: Groups, vm: ViewModel, leaves: number[]): number[] {
  const index = new Map(groups.path.map((p, k) => [p, k]));
  const before = groups.parent.length;
  const groupOf = scopeGroups(groups.parent, groups.path, groups.label, index);
  const leafGroup = new Int32Array(vm.leaves.length);
  leafGroup.set(groups.leafGroup);
  for (const i of leaves) leafGroup[i] = groupOf(trimScope(vm.leaves[i].scope));
  groups.leafGroup = leafGroup;
  for (let k = before; k < groups.parent.length; k++) groups.size.push(0);
  for (const i of leaves) for (let k = leafGroup[i]; k >= 0; k = groups.parent[k]) groups.size[k]++;
  return Array.from({ length: groups.parent.length - before }, (_, j) => before + j);
}

/** Takes removed leaves (removeLeaves' tombstones) out of their groups: group -1, sizes shrink along
 *  the ancestors. Returns the groups whose count changed, or null when a group would be left without
 *  any leaf below it (a rebuild drops such a group: the caller rebuilds). */
export function removeFromGroups(groups: Groups, leaves: number[]): number[] | null {
  const fewer = new Map<number, number>();
  for (const i of leaves)
    for (let k = groups.leafGroup[i]; k >= 0; k = groups.parent[k]) fewer.set(k, (fewer.get(k) ?? 0) + 1);
  for (const [k, d] of fewer) if (k > 0 && groups.size[k] <= d) return null;
  for (const [k, d] of fewer) groups.size[k] -= d;
  for (const i of leaves) groups.leafGroup[i] = -1;
  return [...fewer.keys()];
}

function scopeGroups(
  parent: number[],
  path: string[],
  label: string[],
  index: Map<string, number>,
): (scope: string) => number {
  const groupOf = (scope: string): number => {
    const known = index.get(scope);
    if (known !== undefined) return known;
    const cut = scope.lastIndexOf('/');
    const up = groupOf(cut > 0 ? scope.slice(0, cut) : '');
    const name = scope.slice(cut + 1);
    if (!name) return up; // '/a//b' or a trailing '/': no empty groups
    const k = parent.length;
    parent.push(up);
    path.push(scope);
    label.push(name);
    index.set(scope, k);
    return k;
  };
  return groupOf;
}

export function hierGraph(vm: ViewModel, groups: Groups, pinned?: Float32Array): HierGraph {
  const n = vm.leaves.length;
  const leafW = new Float32Array(n);
  const leafH = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const l = vm.leaves[i];
    if (l.removed) continue; // tombstones take no room
    leafW[i] = leafWidth(l);
    leafH[i] = leafHeight(l);
  }
  return {
    leafW,
    leafH,
    leafGroup: groups.leafGroup,
    groupParent: Int32Array.from(groups.parent),
    groupLabelW: Float32Array.from(groups.label, (s, k) =>
      textWidth(`${s}  (${groups.size[k]})`, FONT.title),
    ),
    ...edgeEnds(vm),
    pinned,
  };
}

/** The edges' leaf indices as typed arrays, in a plain loop (TypedArray.from with a mapping function
 *  goes through the iterator protocol: several times slower at 50,000 edges, on the first render's
 *  critical path). */
function edgeEnds(vm: ViewModel): { edgeSrc: Int32Array; edgeDst: Int32Array } {
  const m = vm.edges.length;
  const edgeSrc = new Int32Array(m);
  const edgeDst = new Int32Array(m);
  for (let e = 0; e < m; e++) {
    edgeSrc[e] = vm.edges[e].src;
    edgeDst[e] = vm.edges[e].dst;
  }
  return { edgeSrc, edgeDst };
}

/** Collapsed by default; expands breadth-first while the visible count stays under `budget`
 *  (a model whose nodes all sit in one scope should not open as a single box). */
export function defaultExpansion(groups: Groups, budget = 400): Uint8Array {
  const ng = groups.parent.length;
  const expanded = new Uint8Array(ng);
  expanded[0] = 1;
  const kids: number[][] = Array.from({ length: ng }, () => []);
  for (let k = 1; k < ng; k++) kids[groups.parent[k]].push(k);
  const direct = new Array<number>(ng).fill(0);
  for (const g of groups.leafGroup) direct[g]++;
  let visible = direct[0] + kids[0].length;
  const queue = [...kids[0]];
  while (queue.length) {
    const k = queue.shift()!;
    if (groups.callOf?.has(k)) continue; // a call shows as one box until asked
    const extra = direct[k] + kids[k].length - 1;
    if (visible + extra > budget) continue;
    expanded[k] = 1;
    visible += extra;
    queue.push(...kids[k]);
  }
  return expanded;
}

/** The layout input's edge lists without the removed leaves' edges (`edgeIndex`: each old edge's new
 *  index, -1 when dropped; `kept` of them stay), compacted from the old lists: no pass over the view
 *  model's edge objects. */
export function keptEdges(
  hg: HierGraph,
  edgeIndex: Int32Array,
  kept: number,
): { edgeSrc: Int32Array; edgeDst: Int32Array } {
  const edgeSrc = new Int32Array(kept);
  const edgeDst = new Int32Array(kept);
  for (let j = 0; j < edgeIndex.length; j++) {
    const k = edgeIndex[j];
    if (k < 0) continue;
    edgeSrc[k] = hg.edgeSrc[j];
    edgeDst[k] = hg.edgeDst[j];
  }
  return { edgeSrc, edgeDst };
}

/** Title widths of every group, measured again only for `changed` and for groups `prev` lacks (new). */
export function labelWidths(groups: Groups, prev: Float32Array, changed: Iterable<number>): Float32Array {
  const ng = groups.label.length;
  const out = new Float32Array(ng);
  out.set(prev.subarray(0, Math.min(ng, prev.length)));
  const measure = (k: number) => (out[k] = textWidth(`${groups.label[k]}  (${groups.size[k]})`, FONT.title));
  for (let k = prev.length; k < ng; k++) measure(k);
  for (const k of changed) if (k < ng) measure(k);
  return out;
}
