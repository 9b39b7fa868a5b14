import { describe, expect, it } from 'vitest';
import { layered, placeRow } from '../../src/layout/layered';
import { layoutHierarchy, type HierResult } from '../../src/layout/hierarchy';
import { buildGroups, defaultExpansion, hierGraph } from '../../src/model/groups';
import { buildViewModel } from '../../src/model/viewmodel';
import { syntheticGraph } from '../../src/fixtures/synthetic';

function overlaps(r: HierResult, items: number[]): string | null {
  // Sort by y and sweep (layouts are tall, rows narrow): O(n log n + row sizes) instead of all pairs.
  const sorted = items.filter((i) => !Number.isNaN(r.itemX[i])).sort((a, b) => r.itemY[a] - r.itemY[b]);
  for (let a = 0; a < sorted.length; a++) {
    const i = sorted[a];
    for (let b = a + 1; b < sorted.length; b++) {
      const j = sorted[b];
      if (r.itemY[j] >= r.itemY[i] + r.itemH[i]) break;
      const xOverlap = r.itemX[i] < r.itemX[j] + r.itemW[j] && r.itemX[j] < r.itemX[i] + r.itemW[i];
      if (xOverlap) return `items ${i} and ${j} overlap`;
    }
  }
  return null;
}

function siblings(r: HierResult, parents: ArrayLike<number>, leafGroup: ArrayLike<number>): number[][] {
  const n = leafGroup.length;
  const by = new Map<number, number[]>();
  const push = (g: number, item: number) => (by.get(g) ?? by.set(g, []).get(g)!).push(item);
  for (let i = 0; i < n; i++) if (!Number.isNaN(r.itemX[i])) push(leafGroup[i], i);
  for (let k = 1; k < parents.length; k++) if (r.groupState[k] !== 0) push(parents[k], n + k);
  return [...by.values()];
}

describe('placeRow (isotonic placement with gaps)', () => {
  it('keeps targets that already respect the gaps', () => {
    const out = new Float64Array(3);
    placeRow(Float64Array.from([0, 50, 200]), Float64Array.from([40, 40]), out);
    expect([...out]).toEqual([0, 50, 200]);
  });
  it('spreads colliding targets symmetrically around their mean', () => {
    const out = new Float64Array(3);
    placeRow(Float64Array.from([10, 10, 10]), Float64Array.from([20, 20]), out);
    expect([...out]).toEqual([-10, 10, 30]);
  });
});

describe('layered layout', () => {
  it('puts every edge of a DAG downward and nothing overlapping', () => {
    // A diamond with a skip edge: 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 0 -> 3.
    const res = layered({
      widths: [100, 80, 120, 100],
      heights: [40, 40, 40, 40],
      src: [0, 0, 1, 2, 0],
      dst: [1, 2, 3, 3, 3],
    });
    for (const [a, b] of [
      [0, 1],
      [0, 2],
      [1, 3],
      [2, 3],
      [0, 3],
    ])
      expect(res.y[b]).toBeGreaterThan(res.y[a] + 40);
    expect(res.y[1]).toBe(res.y[2]);
    expect(Math.abs(res.x[1] - res.x[2])).toBeGreaterThanOrEqual(100);
    expect(res.routes[4]).toHaveLength(2); // the skip edge bends once, through a dummy in rank 1
  });

  it('survives cycles (lifted group edges can form them)', () => {
    const res = layered({ widths: [10, 10, 10], heights: [10, 10, 10], src: [0, 1, 2], dst: [1, 2, 0] });
    expect(new Set(res.rank).size).toBe(3);
  });

  it('handles an empty graph and isolated nodes', () => {
    expect(layered({ widths: [], heights: [], src: [], dst: [] }).width).toBe(0);
    const res = layered({ widths: [10, 10], heights: [10, 10], src: [], dst: [] });
    expect(Math.abs(res.x[0] - res.x[1])).toBeGreaterThanOrEqual(10);
  });
});

describe('hierarchical layout of synthetic models', () => {
  const check = (nodes: number, scoped: boolean, expandAll: boolean) => {
    const vm = buildViewModel(syntheticGraph({ nodes, scoped }), { showConstants: false });
    const groups = buildGroups(vm);
    const expanded = expandAll ? new Uint8Array(groups.parent.length).fill(1) : defaultExpansion(groups);
    const t0 = performance.now();
    const g = hierGraph(vm, groups);
    const r = layoutHierarchy(g, expanded);
    const ms = performance.now() - t0;
    return { vm, groups, g, r, ms };
  };

  it('lays out a scoped model collapsed, then expanded, without overlaps and with edges downward', () => {
    for (const expandAll of [false, true]) {
      const { vm, groups, r } = check(2000, true, expandAll);
      for (const sib of siblings(r, groups.parent, groups.leafGroup)) expect(overlaps(r, sib)).toBeNull();
      const n = vm.leaves.length;
      for (let e = 0; e < r.edgeSrcItem.length; e++) {
        const a = r.edgeSrcItem[e];
        const b = r.edgeDstItem[e];
        expect(r.itemY[b], `edge ${a}->${b}`).toBeGreaterThanOrEqual(r.itemY[a] + r.itemH[a]);
      }
      if (!expandAll) expect(r.stats.visibleItems).toBeLessThan(n);
    }
  });

  it('reuses cached group layouts when one group is expanded', () => {
    const vm = buildViewModel(syntheticGraph({ nodes: 3000, scoped: true }), { showConstants: false });
    const groups = buildGroups(vm);
    const g = hierGraph(vm, groups);
    const cache = new Map();
    const expanded = new Uint8Array(groups.parent.length).fill(1);
    layoutHierarchy(g, expanded, cache);
    expanded[groups.path.indexOf('/block.1/layer.2')] = 0;
    const r = layoutHierarchy(g, expanded, cache);
    // Only the collapsed layer's parent block and the root are laid out again.
    expect(r.stats.groupsLaidOut).toBe(2);
    expect(r.stats.cacheHits).toBeGreaterThan(10);
  });

  it('keeps cached group layouts across an edit: only the edited group and its ancestors move', () => {
    const api = syntheticGraph({ nodes: 3000, scoped: true });
    const vm = buildViewModel(api, { showConstants: false });
    const groups = buildGroups(vm);
    const cache = new Map();
    const all = () =>
      new Uint8Array(buildGroups(buildViewModel(api, { showConstants: false })).parent.length).fill(1);
    layoutHierarchy(hierGraph(vm, groups), all(), cache);
    // Append a node to /block.3/layer.2 (in the middle of the node list: every later index shifts).
    const at = api.nodes.findIndex((n) => n.scope === '/block.3/layer.3');
    const prev = api.nodes[at - 1];
    api.nodes.splice(at, 0, {
      ...prev,
      id: 99999,
      name: '/block.3/layer.2/Extra',
      op_type: 'Relu',
      inputs: [prev.outputs[0]],
      outputs: ['extra'],
      attributes: [],
    });
    const vm2 = buildViewModel(api, { showConstants: false });
    const r = layoutHierarchy(hierGraph(vm2, buildGroups(vm2)), all(), cache);
    expect(r.stats.groupsLaidOut).toBe(3); // layer.2, block.3, the root
  });

  it('places a floating leaf at its pin without moving anything else', () => {
    const api = syntheticGraph({ nodes: 3000, scoped: true });
    const vm = buildViewModel(api, { showConstants: false });
    const groups = buildGroups(vm);
    const expanded = new Uint8Array(groups.parent.length).fill(1);
    const cache = new Map();
    const before = layoutHierarchy(hierGraph(vm, groups), expanded, cache);
    expect([...before.relaid].length).toBe(groups.parent.length); // a cold cache: every group
    // The same graph with one more leaf in /block.3/layer.2, floating at a pin.
    const prev = api.nodes.filter((n) => n.scope === '/block.3/layer.2').at(-1)!;
    api.nodes.push({ ...prev, id: 99999, name: 'extra', inputs: [prev.outputs[0]], outputs: ['extra'] });
    const vm2 = buildViewModel(api, { showConstants: false });
    const groups2 = buildGroups(vm2);
    const n = vm2.leaves.length;
    const extra = vm2.byNodeId.get(99999)!;
    const pinned = new Float32Array(2 * n).fill(NaN);
    [pinned[2 * extra], pinned[2 * extra + 1]] = [12345, 678];
    const floating = new Uint8Array(n);
    floating[extra] = 1;
    const after = layoutHierarchy({ ...hierGraph(vm2, groups2, pinned), floating }, expanded, cache);
    expect([...after.relaid]).toEqual([]); // every group's layout from the cache
    expect([after.itemX[extra], after.itemY[extra]]).toEqual([12345, 678]);
    // Every other item where it was (leaf indices: the new leaf is the only one not in the old list).
    const old = new Map(vm.leaves.map((l, i) => [l.key, i]));
    vm2.leaves.forEach((l, i) => {
      const j = old.get(l.key);
      if (j === undefined) return;
      expect([after.itemX[i], after.itemY[i]]).toEqual([before.itemX[j], before.itemY[j]]);
    });
    // Its edge is drawn straight (no route through the group's layout, which does not know it).
    const e = [...after.edgeDstItem].indexOf(extra);
    expect(e).toBeGreaterThanOrEqual(0);
    expect(after.routeStart[e + 1] - after.routeStart[e]).toBe(0);
    // Not floating, the leaf takes a slot: its group and the groups holding it are laid out again.
    const slotted = layoutHierarchy(hierGraph(vm2, groups2), expanded, cache);
    expect(slotted.relaid.length).toBe(3);
  });

  it('lays out 50,000 flat nodes in about linear time', () => {
    const small = check(5000, false, true);
    const big = check(50000, false, true);
    expect(overlaps(big.r, [...Array(big.vm.leaves.length).keys()])).toBeNull();
    console.log(`layout: 5,000 nodes ${small.ms.toFixed(0)} ms, 50,000 nodes ${big.ms.toFixed(0)} ms`);
    expect(big.ms).toBeLessThan(8000);
    expect(big.ms / Math.max(small.ms, 1)).toBeLessThan(30); // 10x the nodes: well under quadratic
  });
});
