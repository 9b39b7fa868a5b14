// Connect and disconnect patched in place: relinkLeaves gives the leaves, edges and terminal states a
// rebuild of the view model gives, and the layouts patched on the main thread for a relinked or resized
// floating leaf equal the worker's full pass; what could move something is refused.
import { describe, expect, it } from 'vitest';
import type { ApiGraph, ApiNode, RegistryOp } from '../../src/api/types';
import { layoutHierarchy, type HierResult } from '../../src/layout/hierarchy';
import { relinkedLayout, resizedLayout } from '../../src/layout/patch';
import { buildGroups, hierGraph, keptEdges } from '../../src/model/groups';
import { buildViewModel, registryKey, relinkLeaves, type ViewModel } from '../../src/model/viewmodel';
import { syntheticGraph } from '../../src/fixtures/synthetic';

const conv: RegistryOp = {
  domain: '',
  op_type: 'Conv',
  since_version: 11,
  category: 'nn',
  inputs: [
    { name: 'X', option: 'single', types: ['T'] },
    { name: 'W', option: 'single', types: ['T'] },
    { name: 'B', option: 'optional', types: ['T'] },
  ],
  outputs: [{ name: 'Y', option: 'single', types: ['T'] }],
  attributes: [],
};
const registry = new Map([[registryKey('', 'Conv'), conv]]);
const mk = (id: number, scope: string, inputs: string[], outputs: string[], op = 'Conv'): ApiNode => ({
  id,
  name: `n${id}`,
  op_type: op,
  domain: '',
  scope,
  inputs,
  outputs,
  attributes: [],
});
// x -> a -> b -> z (graph output); a also feeds c; d reads c; k is a hidden Constant.
const base = (): ApiGraph => ({
  version: 1,
  graph: 'main',
  nodes: [
    mk(1, '', [], ['kc'], 'Constant'),
    mk(2, '/enc', ['x', 'W'], ['y']),
    mk(3, '/enc', ['y', 'W'], ['z']),
    mk(4, '/dec', ['y', 'W'], ['u']),
    mk(5, '/dec', ['u', 'W'], ['v']),
  ],
  inputs: [{ name: 'x', type: 'tensor(float)', shape: [1, 3] }],
  outputs: [{ name: 'z', type: 'tensor(float)', shape: [1, 6] }],
  initializers: [{ name: 'W', dtype: 'float', shape: [8, 3, 3, 3], bytes: 864 }],
});
const leaves = (v: ViewModel) =>
  new Map(v.leaves.map((l) => [l.key, { ...l, severity: l.severity ?? null }]));
const edgeKeys = (v: ViewModel) =>
  v.edges
    .map((e) => `${v.leaves[e.src].key}:${e.srcPort}->${v.leaves[e.dst].key}:${e.dstPort}:${e.value}`)
    .sort();

describe('nodes relinked in place', () => {
  // Each case: the node's inputs after the edit.
  const cases: Array<[string, number, string[]]> = [
    ['disconnects the only reader of u (its producer c shows a free output)', 5, ['', 'W']],
    ['connects d to x instead of u', 5, ['x', 'W']],
    ['connects the optional bias of b to the Constant', 3, ['y', 'W', 'kc']],
    ['drops a trailing input', 4, ['y']],
    ['reads its own group again after a free input', 4, ['u', 'W']],
  ];
  for (const [what, id, inputs] of cases) {
    it(`${what}: as a rebuild`, () => {
      const g = base();
      const vm = buildViewModel(g, { showConstants: false, registry });
      const node = { ...g.nodes.find((n) => n.id === id)!, inputs };
      const e0 = vm.edges.length;
      const res = relinkLeaves(vm, [node])!;
      expect(res).not.toBeNull();
      expect(res.relinked).toEqual([vm.byNodeId.get(id)]);
      expect(res.edgeIndex.length).toBe(e0);
      const after = { ...g, nodes: g.nodes.map((n) => (n.id === id ? node : n)) };
      const full = buildViewModel(after, { showConstants: false, registry });
      expect(leaves(vm)).toEqual(leaves(full));
      expect(edgeKeys(vm)).toEqual(edgeKeys(full));
      expect(new Map(vm.used)).toEqual(new Map(full.used));
      // The edges kept come first, in their order; every edge into the relinked leaf was replaced.
      for (let j = 0; j < e0; j++) if (res.edgeIndex[j] >= 0) expect(res.edgeIndex[j]).toBeLessThan(res.kept);
    });
  }

  it('reports the producers whose terminals changed', () => {
    const g = base();
    const vm = buildViewModel(g, { showConstants: false, registry });
    const c = vm.byNodeId.get(4)!;
    const res = relinkLeaves(vm, [{ ...g.nodes[4], inputs: ['', 'W'] }])!;
    expect(res.touched).toEqual([c]);
    expect(vm.leaves[c].outputs[0].state).toBe('free');
    const back = relinkLeaves(vm, [{ ...g.nodes[4], inputs: ['u', 'W'] }])!;
    expect(back.touched).toEqual([c]);
    expect(vm.leaves[c].outputs[0].state).toBe('linked');
  });

  it('refuses what needs a rebuild, leaving the view model as it was', () => {
    const g = base();
    const vm = buildViewModel(g, { showConstants: false, registry });
    const before = { leaves: [...vm.leaves], edges: [...vm.edges], used: new Map(vm.used) };
    expect(relinkLeaves(vm, [{ ...g.nodes[0], inputs: ['x'] }])).toBeNull(); // a hidden Constant
    expect(relinkLeaves(vm, [{ ...g.nodes[4], inputs: ['x', 'W'], outputs: ['v2'] }])).toBeNull();
    expect(relinkLeaves(vm, [{ ...g.nodes[4], op_type: 'Relu' }])).toBeNull();
    expect(relinkLeaves(vm, [{ ...g.nodes[4], scope: '/enc' }])).toBeNull();
    expect(relinkLeaves(vm, [{ ...g.nodes[4], id: 99 }])).toBeNull();
    expect(vm.leaves).toEqual(before.leaves);
    expect(vm.edges).toEqual(before.edges);
    expect(new Map(vm.used)).toEqual(before.used);
  });
});

function same(a: HierResult, b: HierResult): void {
  const keys = ['itemX', 'itemY', 'itemW', 'itemH', 'groupState', 'edgeSrcItem', 'edgeDstItem', 'edgeLeaf'];
  const arr = (r: HierResult, k: string) =>
    Array.from((r as unknown as Record<string, ArrayLike<number>>)[k]);
  for (const k of keys) expect(arr(a, k), k).toEqual(arr(b, k));
  // Routes per edge (a floating leaf's edges have none).
  const routes = (r: HierResult) =>
    Array.from({ length: r.edgeSrcItem.length }, (_, e) =>
      Array.from(r.routePts.subarray(2 * r.routeStart[e], 2 * r.routeStart[e + 1])),
    );
  expect(routes(a)).toEqual(routes(b));
}

describe('layouts patched for relinked and resized leaves', () => {
  // A scoped graph with /block.0 expanded and the rest collapsed; one node of /block.0/layer.1 floats
  // at a pin (an added node), reading the output of the group's first node.
  function setup(floatIt = true) {
    const api = syntheticGraph({ nodes: 1500, scoped: true });
    const inScope = api.nodes.filter((n) => n.scope === '/block.0/layer.1');
    const extra: ApiNode = {
      ...mk(90001, '/block.0/layer.1', [inScope[0].outputs[0]], ['extra']),
      op_type: 'Relu',
    };
    api.nodes.push(extra);
    const vm = buildViewModel(api, { showConstants: false });
    const groups = buildGroups(vm);
    const expanded = Uint8Array.from(groups.path, (p, k) => (k === 0 || p.startsWith('/block.0') ? 1 : 0));
    const i = vm.byNodeId.get(90001)!;
    const pinned = new Float32Array(2 * vm.leaves.length).fill(NaN);
    [pinned[2 * i], pinned[2 * i + 1]] = [10, 2000];
    const floating = new Uint8Array(vm.leaves.length);
    floating[i] = floatIt ? 1 : 0;
    const hg = { ...hierGraph(vm, groups, pinned), floating };
    return { api, vm, groups, expanded, hg, lay: layoutHierarchy(hg, expanded), i, extra, inScope };
  }

  it('relinks a floating leaf as the full layout does', () => {
    const s = setup();
    // Connected to another node of its group, then disconnected.
    for (const inputs of [[s.inScope[3].outputs[0]], ['']]) {
      const res = relinkLeaves(s.vm, [{ ...s.extra, inputs }])!;
      const kept = keptEdges(s.hg, res.edgeIndex, res.kept);
      const edgeSrc = Int32Array.from(s.vm.edges, (e) => e.src);
      const edgeDst = Int32Array.from(s.vm.edges, (e) => e.dst);
      expect(Array.from(edgeSrc.subarray(0, res.kept))).toEqual(Array.from(kept.edgeSrc));
      expect(Array.from(edgeDst.subarray(0, res.kept))).toEqual(Array.from(kept.edgeDst));
      const g = { ...s.hg, edgeSrc, edgeDst };
      const fast = relinkedLayout(s.lay, g, res.relinked, res.edgeIndex, res.kept);
      expect(fast).not.toBeNull();
      const full = layoutHierarchy(g, s.expanded);
      same(fast!, full);
      s.hg = g;
      s.lay = full;
    }
  });

  it('refuses a relinked leaf that has a slot in its group', () => {
    const s = setup(false);
    const res = relinkLeaves(s.vm, [{ ...s.extra, inputs: [s.inScope[3].outputs[0]] }])!;
    const g = {
      ...s.hg,
      edgeSrc: Int32Array.from(s.vm.edges, (e) => e.src),
      edgeDst: Int32Array.from(s.vm.edges, (e) => e.dst),
    };
    expect(relinkedLayout(s.lay, g, res.relinked, res.edgeIndex, res.kept)).toBeNull();
  });

  it('resizes a floating leaf as the full layout does, and refuses one with a slot', () => {
    const s = setup();
    const g = { ...s.hg, leafW: s.hg.leafW.slice(), leafH: s.hg.leafH.slice() };
    g.leafW[s.i] += 40;
    g.leafH[s.i] += 14;
    const fast = resizedLayout(s.lay, g, [s.i]);
    expect(fast).not.toBeNull();
    same(fast!, layoutHierarchy(g, s.expanded));
    const t = setup(false);
    expect(resizedLayout(t.lay, { ...t.hg }, [t.i])).toBeNull();
  });
});
