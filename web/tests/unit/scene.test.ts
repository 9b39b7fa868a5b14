// The scene's edge boxes (kept for render/diff.ts), computed without building each polyline, are the
// boxes of the polylines the renderer draws.
import { describe, expect, it } from 'vitest';
import { layoutHierarchy } from '../../src/layout/hierarchy';
import { appendedLayout, removedLayout } from '../../src/layout/patch';
import { buildGroups, hierGraph, removeFromGroups } from '../../src/model/groups';
import { appendNodes, buildViewModel, removeLeaves } from '../../src/model/viewmodel';
import { changedRegions } from '../../src/render/diff';
import { marginStrips } from '../../src/render/renderer';
import { Scene } from '../../src/render/scene';
import { syntheticGraph } from '../../src/fixtures/synthetic';

describe('scene', () => {
  it('boxes every visible edge as its polyline', () => {
    const api = syntheticGraph({ nodes: 1200, scoped: true });
    const vm = buildViewModel(api, { showConstants: false });
    const groups = buildGroups(vm);
    const expanded = Uint8Array.from(groups.path, (p, k) => (k === 0 || p.startsWith('/block.0') ? 1 : 0));
    const scene = new Scene(vm, groups, layoutHierarchy(hierGraph(vm, groups), expanded));
    const [ex, ey, ew, eh] = scene.edgeBox;
    expect(ex.length).toBeGreaterThan(100);
    for (let e = 0; e < ex.length; e++) {
      const p = scene.edgePoints(e);
      const xs = p.filter((_, k) => k % 2 === 0);
      const ys = p.filter((_, k) => k % 2 === 1);
      const box = [
        Math.min(...xs),
        Math.min(...ys),
        Math.max(...xs) - Math.min(...xs),
        Math.max(...ys) - Math.min(...ys),
      ];
      expect([ex[e], ey[e], ew[e], eh[e]]).toEqual(box.map((v) => Math.fround(v)));
    }
  });
});

// A scene patched after an edit (its indexes taken over from the scene before, layout/patch.ts saying
// which edges are kept) answers every query as a scene built from scratch on the same layout.
describe('scene patched in place', () => {
  function setup() {
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

  function sameAnswers(patched: Scene, fresh: Scene): void {
    expect(patched.patched).toBe(true);
    expect(fresh.patched).toBe(false);
    for (let k = 0; k < 4; k++) expect(Array.from(patched.edgeBox[k])).toEqual(Array.from(fresh.edgeBox[k]));
    const [x0, y0, x1, y1] = fresh.bounds;
    const sorted = (a: number[]) => [...a].sort((p, q) => p - q);
    // Windows of a few sizes over the whole extent, as the renderer and picking query them.
    for (const size of [150, 700, 5000]) {
      for (let x = x0 - 100; x < x1 + 100; x += size * 0.9) {
        for (let y = y0 - 100; y < y1 + 100; y += size * 0.9) {
          expect(sorted(patched.items.query(x, y, x + size, y + size))).toEqual(
            sorted(fresh.items.query(x, y, x + size, y + size)),
          );
          expect(sorted(patched.edgesIn(x, y, x + size, y + size))).toEqual(
            sorted(fresh.edgesIn(x, y, x + size, y + size)),
          );
        }
      }
    }
  }

  it('after a node appended beside another and removed again', () => {
    const s = setup();
    const { vm, groups, hg } = s;
    const a = new Scene(vm, groups, s.lay);
    const src = s.api.nodes.find((n) => n.scope === '/block.0/layer.1')!;
    const srcLeaf = vm.byNodeId.get(src.id)!;
    const [sx, sy] = [s.lay.itemX[srcLeaf], s.lay.itemY[srcLeaf]];
    const node = {
      id: 90001,
      name: '/block.0/layer.1/Extra',
      op_type: 'Relu',
      domain: '',
      scope: '/block.0/layer.1',
      inputs: [src.outputs[0]],
      outputs: ['extra'],
      attributes: [],
    };
    // A second node reading the same value: removing the first then drops an edge before another one.
    const node2 = {
      ...node,
      id: 90002,
      name: '/block.0/layer.1/Extra2',
      inputs: [src.outputs[0]],
      outputs: ['extra2'],
    };
    const n0 = vm.leaves.length;
    const e0 = vm.edges.length;
    const relinked: number[] = [];
    const added = appendNodes(vm, [node, node2], relinked)!;
    const leafGroup = new Int32Array(vm.leaves.length);
    leafGroup.set(groups.leafGroup);
    for (const i of added) leafGroup[i] = groups.path.indexOf('/block.0/layer.1');
    groups.leafGroup = leafGroup;
    groups.size[leafGroup[added[0]]] += 2;
    const g2 = hierGraph(vm, groups, new Float32Array(2 * vm.leaves.length).fill(NaN));
    g2.groupLabelW = hg.groupLabelW;
    const floating = new Uint8Array(vm.leaves.length);
    g2.floating = floating;
    // Among other leaves' cells, and far from each other.
    added.forEach((i, k) => {
      [g2.pinned![2 * i], g2.pinned![2 * i + 1]] = [sx + 3000 * k, sy + 120 + 90 * k];
      floating[i] = 1;
    });
    const lay2 = appendedLayout(s.lay, g2, n0, e0, hg.groupLabelW)!;
    expect(lay2).not.toBeNull();
    const touched = { leaves: [...added, ...relinked], groups: [] };
    const fresh = new Scene(vm, groups, lay2);
    const regions = (r: ReturnType<typeof changedRegions>) => r!.map((q) => q.join()).sort();
    const full = regions(changedRegions(a, fresh, touched, 1));
    const b = new Scene(vm, groups, lay2, { prev: a, leaves: touched.leaves });
    sameAnswers(b, fresh);
    // What the edit changed on screen, from the leaves the patch saw moving, as from comparing all.
    expect(b.movedLeaves).toEqual(added);
    expect(regions(changedRegions(a, b, touched, 1))).toEqual(full);

    // Removed again: edges renumbered (the removal compacts them).
    const i = added[0];
    const edgeIndex = new Int32Array(vm.edges.length);
    let kept = 0;
    vm.edges.forEach((e, j) => (edgeIndex[j] = e.src === i || e.dst === i ? -1 : kept++));
    const labelW = g2.groupLabelW;
    const res = removeLeaves(vm, [node.id])!;
    expect(removeFromGroups(groups, [i])).not.toBeNull();
    const g3 = { ...hierGraph(vm, groups, g2.pinned), floating: g2.floating };
    g3.groupLabelW = labelW;
    const lay3 = removedLayout(lay2, g3, [i], () => true, edgeIndex, labelW)!;
    expect(lay3).not.toBeNull();
    expect(Array.from(lay3.edgeFrom!).some((o, e) => o !== e)).toBe(true); // renumbered
    const c = new Scene(vm, groups, lay3, { prev: b, leaves: [...res.removed, ...res.touched] });
    sameAnswers(c, new Scene(vm, groups, lay3));
  });

  it('after a node moved by a layout from the worker (no edge map): leaves moved, edges indexed again', () => {
    const s = setup();
    const a = new Scene(s.vm, s.groups, s.lay);
    const leaf = s.vm.byNodeId.get(s.api.nodes.find((n) => n.scope === '/block.0/layer.2')!.id)!;
    const pinned = new Float32Array(2 * s.vm.leaves.length).fill(NaN);
    [pinned[2 * leaf], pinned[2 * leaf + 1]] = [5000, 100];
    const lay2 = layoutHierarchy({ ...s.hg, pinned }, s.expanded);
    const b = new Scene(s.vm, s.groups, lay2, { prev: a, leaves: [] });
    sameAnswers(b, new Scene(s.vm, s.groups, lay2));
  });
});

describe('cache margins', () => {
  it('are the parts of the cached view around the view, covering it exactly once', () => {
    const strips = marginStrips([0, 0, 40, 30], [10, 10, 30, 20]);
    expect(strips).toHaveLength(4);
    const area = (r: number[]) => (r[2] - r[0]) * (r[3] - r[1]);
    expect(strips.reduce((a, r) => a + area(r), 0)).toBe(40 * 30 - 20 * 10);
    // Sample points: each outside the view lies in exactly one strip, none inside the view.
    for (let x = 0.5; x < 40; x += 1)
      for (let y = 0.5; y < 30; y += 1) {
        const inView = x > 10 && x < 30 && y > 10 && y < 20;
        const n = strips.filter(([a, b, c, d]) => x > a && x < c && y > b && y < d).length;
        expect(n).toBe(inView ? 0 : 1);
      }
    expect(marginStrips([0, 0, 10, 10], [0, 0, 10, 10])).toEqual([]);
  });
});
