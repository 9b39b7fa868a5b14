// The layout after an edit that moves nothing, patched on the main thread (layout/patch.ts), equals
// what the worker's full pass gives for the same input; edits that may move something are refused.
import { describe, expect, it } from 'vitest';
import { layoutHierarchy, type HierGraph, type HierResult } from '../../src/layout/hierarchy';
import { appendedLayout, removedLayout } from '../../src/layout/patch';
import { buildGroups, hierGraph, removeFromGroups, type Groups } from '../../src/model/groups';
import { appendNodes, buildViewModel, removeLeaves, type ViewModel } from '../../src/model/viewmodel';
import { syntheticGraph } from '../../src/fixtures/synthetic';
import type { ApiGraph, ApiNode } from '../../src/api/types';

function same(a: HierResult, b: HierResult): void {
  for (const k of [
    'itemX',
    'itemY',
    'itemW',
    'itemH',
    'groupState',
    'edgeSrcItem',
    'edgeDstItem',
    'edgeLeaf',
    'routeStart',
    'routePts',
  ] as const)
    expect(
      Array.from(a[k] as ArrayLike<number>)
        .map(String)
        .map((v, j) => `${j}:${v}`),
      k,
    ).toEqual(
      Array.from(b[k] as ArrayLike<number>)
        .map(String)
        .map((v, j) => `${j}:${v}`),
    );
  expect([a.width, a.height]).toEqual([b.width, b.height]);
}

// A scoped graph with /block.0 expanded (its layers too) and every other block collapsed.
function setup(): {
  api: ApiGraph;
  vm: ViewModel;
  groups: Groups;
  expanded: Uint8Array;
  hg: HierGraph;
  lay: HierResult;
} {
  const api = syntheticGraph({ nodes: 1500, scoped: true });
  const vm = buildViewModel(api, { showConstants: false });
  const groups = buildGroups(vm);
  const expanded = Uint8Array.from(groups.path, (p, k) => (k === 0 || p.startsWith('/block.0') ? 1 : 0));
  const hg = {
    ...hierGraph(vm, groups, new Float32Array(2 * vm.leaves.length).fill(NaN)),
    floating: new Uint8Array(vm.leaves.length),
  };
  return { api, vm, groups, expanded, hg, lay: layoutHierarchy(hg, expanded) };
}

function appended(
  s: ReturnType<typeof setup>,
  node: ApiNode,
  pin?: [number, number],
): { fast: HierResult | null; full: HierResult } {
  const { vm, groups, hg } = s;
  const n0 = vm.leaves.length;
  const e0 = vm.edges.length;
  const added = appendNodes(vm, [node])!;
  expect(added).not.toBeNull();
  const before = groups.parent.length;
  const leafGroup = new Int32Array(vm.leaves.length);
  leafGroup.set(groups.leafGroup);
  const k = groups.path.indexOf(node.scope ?? '');
  expect(k).toBeGreaterThanOrEqual(0);
  leafGroup[added[0]] = k;
  groups.leafGroup = leafGroup;
  expect(groups.parent.length).toBe(before);
  const g2 = hierGraph(vm, groups, new Float32Array(2 * vm.leaves.length).fill(NaN));
  g2.groupLabelW = hg.groupLabelW; // same widths (the count's digits do not change here)
  g2.floating = new Uint8Array(vm.leaves.length);
  if (pin) {
    [g2.pinned![2 * added[0]], g2.pinned![2 * added[0] + 1]] = pin;
    g2.floating[added[0]] = 1;
  }
  return { fast: appendedLayout(s.lay, g2, n0, e0, hg.groupLabelW), full: layoutHierarchy(g2, s.expanded) };
}

const relu = (id: number, scope: string, input: string): ApiNode => ({
  id,
  name: `${scope}/Extra${id}`,
  op_type: 'Relu',
  domain: '',
  scope,
  inputs: [input],
  outputs: [`extra${id}`],
  attributes: [],
});

describe('layouts patched on the main thread', () => {
  it('appends a leaf floating in an expanded group as the full layout does', () => {
    const s = setup();
    const src = s.api.nodes.find((n) => n.scope === '/block.0/layer.1')!;
    const { fast, full } = appended(s, relu(90001, '/block.0/layer.1', src.outputs[0]), [10, 2000]);
    expect(fast).not.toBeNull();
    same(fast!, full);
  });

  it('appends a leaf hidden in a collapsed group as the full layout does', () => {
    const s = setup();
    const src = s.api.nodes.find((n) => n.scope === '/block.2/layer.0')!;
    const { fast, full } = appended(s, relu(90002, '/block.2/layer.0', src.outputs[0]));
    expect(fast).not.toBeNull();
    same(fast!, full);
  });

  it('refuses a leaf that needs a slot or a new lifted edge', () => {
    const s = setup();
    const src = s.api.nodes.find((n) => n.scope === '/block.0/layer.1')!;
    expect(appended(s, relu(90003, '/block.0/layer.1', src.outputs[0])).fast).toBeNull(); // not floating
    const t = setup();
    const far = t.api.nodes.find((n) => n.scope === '/block.0/layer.0')!;
    // /block.3 reading a value of /block.0: an edge between two root-level items that was not there.
    expect(appended(t, relu(90004, '/block.3/layer.0', far.outputs[0])).fast).toBeNull();
  });

  it('removes a floating leaf, or a hidden one whose edges other edges stand for too, as the full layout does', () => {
    const s = setup();
    const src = s.api.nodes.find((n) => n.scope === '/block.0/layer.1')!;
    const { fast } = appended(s, relu(90005, '/block.0/layer.1', src.outputs[0]), [10, 2000]);
    // The state after the append becomes the base of the removal.
    const floatingLay = fast!;
    const floating = new Uint8Array(s.vm.leaves.length);
    floating[s.vm.byNodeId.get(90005)!] = 1;
    const remove = (id: number, lay: HierResult, isFloating: (i: number) => boolean) => {
      const i = s.vm.byNodeId.get(id)!;
      const labelW = hierGraph(s.vm, s.groups).groupLabelW;
      const edgeIndex = new Int32Array(s.vm.edges.length);
      let kept = 0;
      s.vm.edges.forEach((e, j) => (edgeIndex[j] = e.src === i || e.dst === i ? -1 : kept++));
      const pinned = new Float32Array(2 * s.vm.leaves.length).fill(NaN);
      [pinned[2 * i], pinned[2 * i + 1]] = [10, 2000];
      removeLeaves(s.vm, [id]);
      expect(removeFromGroups(s.groups, [i])).not.toBeNull();
      const g = { ...hierGraph(s.vm, s.groups, pinned), floating };
      g.leafW[i] = g.leafH[i] = 0;
      g.groupLabelW = labelW;
      return {
        fast: removedLayout(lay, g, [i], isFloating, edgeIndex, labelW),
        full: layoutHierarchy(g, s.expanded),
      };
    };
    const r = remove(90005, floatingLay, (i) => floating[i] === 1);
    expect(r.fast).not.toBeNull();
    same(r.fast!, r.full);
    // A node inside collapsed /block.2/layer.0 whose input edge lifts to nothing drawn (same group).
    const inner = s.api.nodes.filter((n) => n.scope === '/block.2/layer.0')[3];
    const h = remove(inner.id, r.full, () => false);
    expect(h.fast).not.toBeNull();
    same(h.fast!, h.full);
  });
});
