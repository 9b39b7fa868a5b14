import { describe, expect, it } from 'vitest';
import type { ApiGraph, ApiNode } from '../../src/api/types';
import { layoutHierarchy } from '../../src/layout/hierarchy';
import { buildGroups, defaultExpansion, hierGraph } from '../../src/model/groups';
import { buildViewModel, functionKeyString, removeLeaves } from '../../src/model/viewmodel';
import { changedRegions } from '../../src/render/diff';
import { FloatBuilder } from '../../src/render/gl';
import { RECT_STRIDE, LINE_STRIDE, Scene } from '../../src/render/scene';
import { THEME } from '../../src/render/colors';

// x -> call F (twice, chained) -> Relu -> z; F's body: t = Mul(X, X); Y = Add(t, X).
const fn = { domain: 'local', name: 'F' };
const node = (id: number, name: string, op: string, inputs: string[], outputs: string[]): ApiNode => ({
  id,
  name,
  op_type: op,
  domain: '',
  scope: name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '',
  inputs,
  outputs,
  attributes: [],
});
const call = (id: number, name: string, x: string, y: string): ApiNode => ({
  ...node(id, name, 'F', [x], [y]),
  domain: 'local',
  function: fn,
});
const graph: ApiGraph = {
  version: 1,
  graph: 'main',
  nodes: [
    call(1, '/enc/f0', 'x', 'y0'),
    call(2, '/enc/f1', 'y0', 'y1'),
    node(3, 'relu', 'Relu', ['y1'], ['z']),
  ],
  inputs: [{ name: 'x', type: 'tensor(float)' }],
  outputs: [{ name: 'z', type: 'tensor(float)' }],
  initializers: [],
};
const body: ApiGraph = {
  version: 1,
  graph: 'function local.F',
  nodes: [node(1, 'mul', 'Mul', ['X', 'X'], ['t']), node(2, 'add', 'Add', ['t', 'X'], ['Y'])],
  inputs: [{ name: 'X', type: '' }],
  outputs: [{ name: 'Y', type: '' }],
  initializers: [],
};
const bodies = new Map([[functionKeyString(fn), body]]);
const edgesOf = (vm: ReturnType<typeof buildViewModel>) =>
  vm.edges.map((e) => `${vm.leaves[e.src].key}:${e.srcPort}->${vm.leaves[e.dst].key}:${e.dstPort}`);

describe('calls of local functions as groups', () => {
  it('without bodies a call is one node', () => {
    const vm = buildViewModel(graph, { showConstants: false });
    expect(vm.leaves.map((l) => l.key)).toEqual(['i:x', 'n:1', 'n:2', 'n:3', 'o:z']);
  });

  it("shows each call as its body's nodes, linked to the call's inputs and outputs", () => {
    const vm = buildViewModel(graph, { showConstants: false, bodies });
    expect(vm.leaves.map((l) => l.key)).toEqual(['i:x', 'f:1:1', 'f:1:2', 'f:2:1', 'f:2:2', 'n:3', 'o:z']);
    expect(edgesOf(vm)).toEqual([
      'i:x:0->f:1:1:0',
      'i:x:0->f:1:1:1',
      'f:1:1:0->f:1:2:0',
      'i:x:0->f:1:2:1',
      'f:1:2:0->f:2:1:0', // the first call's output is the second call's input
      'f:1:2:0->f:2:1:1',
      'f:2:1:0->f:2:2:0',
      'f:1:2:0->f:2:2:1',
      'f:2:2:0->n:3:0',
      'n:3:0->o:z:0',
    ]);
    // Body nodes keep their own names and ids for the function's commands, and are not graph nodes.
    const add = vm.leaves[2];
    expect(add.body?.node).toBe(body.nodes[1]);
    expect(add.body?.call).toBe(1);
    expect(add.name).toBe('add');
    expect(vm.byNodeId.has(1)).toBe(false);
    expect(vm.byNodeId.get(3)).toBe(5);
    expect(vm.calls?.get(2)).toEqual([3, 4]);
    expect(add.outputs[0].state).toBe('linked');
    // A rebuild reuses the leaves (a 2,000-call model rebuilt after an edit allocates little).
    expect(buildViewModel(graph, { showConstants: false, bodies }).leaves[2]).toBe(add);
  });

  it('groups each call under its scope, collapsed by default whatever the budget', () => {
    const vm = buildViewModel(graph, { showConstants: false, bodies });
    const g = buildGroups(vm);
    expect(g.path).toEqual(['', '/enc', '/enc/\u0192 F f0', '/enc/\u0192 F f1']);
    expect(g.label[2]).toBe('\u0192 F f0');
    expect([...g.callOf!.entries()]).toEqual([
      [2, 1],
      [3, 2],
    ]);
    expect(g.size).toEqual([7, 4, 2, 2]);
    expect([...defaultExpansion(g)]).toEqual([1, 1, 0, 0]);
  });

  it('lays a collapsed call out as one box and an expanded one as its body, links lifted', () => {
    const vm = buildViewModel(graph, { showConstants: false, bodies });
    const groups = buildGroups(vm);
    const hg = hierGraph(vm, groups);
    const collapsed = layoutHierarchy(hg, defaultExpansion(groups));
    expect(collapsed.stats.visibleItems).toBe(6); // x, /enc, two call boxes, Relu, z
    expect([...collapsed.groupState]).toEqual([2, 2, 1, 1]);
    expect(Number.isNaN(collapsed.itemX[1])).toBe(true); // body nodes hidden
    const open = Uint8Array.from([1, 1, 1, 0]);
    const expanded = layoutHierarchy(hg, open);
    expect(expanded.stats.visibleItems).toBe(8); // the first call's two body nodes inside its box
    expect([...expanded.groupState]).toEqual([2, 2, 2, 1]);
    // The body sits inside the call's box, below the graph input feeding it.
    const box = 7 + 2; // items: 7 leaves, then groups
    expect(expanded.itemX[1]).toBeGreaterThanOrEqual(expanded.itemX[box]);
    expect(expanded.itemY[2]).toBeLessThan(expanded.itemY[box] + expanded.itemH[box]);
    expect(expanded.itemY[1]).toBeGreaterThan(expanded.itemY[0]);
  });

  it('removing a graph node that reads a call output frees the body node that produces it', () => {
    const vm = buildViewModel(graph, { showConstants: false, bodies });
    const r = removeLeaves(vm, [3])!;
    expect(r.touched).toEqual([4, 6]); // the body's Add and the graph output z
    expect(vm.leaves[4].outputs[0].state).toBe('free');
    // A call (not a leaf of its own) needs a rebuild.
    expect(removeLeaves(buildViewModel(graph, { showConstants: false, bodies }), [1])).toBeNull();
  });

  it("badges a collapsed call with its body's worst finding, as a collapsed scope; not once expanded", () => {
    // The body's Mul has an error (the server's graph answer for the function says so).
    const bad = { ...body, nodes: [{ ...body.nodes[0], severity: 'error' as const }, body.nodes[1]] };
    const vm = buildViewModel(graph, {
      showConstants: false,
      bodies: new Map([[functionKeyString(fn), bad]]),
    });
    const groups = buildGroups(vm);
    const hg = hierGraph(vm, groups);
    // Red badges (the error colour as fill) drawn at the top right of a box, as a node's.
    const badges = (scene: Scene) => {
      const rects = new FloatBuilder(RECT_STRIDE);
      scene.buildBase(
        { selected: new Set(), selectedEdge: -1 },
        'near',
        1,
        rects,
        new FloatBuilder(LINE_STRIDE),
      );
      const out: Array<[number, number]> = [];
      for (let r = 0; r < rects.count; r++) {
        const v = rects.data.subarray(r * RECT_STRIDE, (r + 1) * RECT_STRIDE);
        if (v[2] === 14 && v[3] === 14 && [0, 1, 2].every((c) => v[4 + c] === Math.fround(THEME.error[c])))
          out.push([v[0] + 9, v[1] + 5]); // the box's top right corner
      }
      return out;
    };
    const corner = (s: Scene, item: number): [number, number] => [
      s.lay.itemX[item] + s.lay.itemW[item],
      s.lay.itemY[item],
    ];
    const n = vm.leaves.length;
    // Collapsed: the first call's box (group 2) carries the badge; /enc expanded and the second call
    // (whose body node ids differ: its own leaves, also with the error) too.
    const collapsed = new Scene(vm, groups, layoutHierarchy(hg, Uint8Array.from([1, 1, 0, 0])));
    expect(badges(collapsed)).toEqual([corner(collapsed, n + 2), corner(collapsed, n + 3)]);
    expect(collapsed.groupSeverity(1)).toBe(2); // /enc, expanded: its leaves show their own badges
    // Expanded: the body's Mul shows its own badge; the call's box none.
    const open = new Scene(vm, groups, layoutHierarchy(hg, Uint8Array.from([1, 1, 1, 0])));
    expect(badges(open)).toEqual(expect.arrayContaining([corner(open, n + 3)]));
    expect(badges(open)).not.toContainEqual(corner(open, n + 2));
    expect(badges(open)).toHaveLength(2); // the second call's box, the first call's Mul

    // The error fixed (an edit patched in place): the badge goes, and the region redrawn is the box's.
    const mul = vm.leaves.findIndex((l) => l.body?.call === 1 && l.op === 'Mul');
    const before = collapsed.shownRect(mul)!;
    expect(before).toEqual(collapsed.leafRect(n + 2));
    vm.leaves[mul] = { ...vm.leaves[mul], severity: null };
    collapsed.forgetSeverities();
    expect(badges(collapsed)).toEqual([corner(collapsed, n + 3)]);
    const again = new Scene(vm, groups, { ...collapsed.lay, relaid: new Int32Array(0) }); // nothing laid out
    const regions = changedRegions(collapsed, again, { leaves: [mul], groups: [] }, 1)!;
    expect(
      regions.some(
        ([x0, y0, x1, y1]) =>
          x0 < before[0] && y0 < before[1] && x1 > before[0] + before[2] && y1 > before[1] + before[3],
      ),
    ).toBe(true);
  });
});
