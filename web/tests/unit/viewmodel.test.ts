import { describe, expect, it } from 'vitest';
import type { ApiGraph, ApiNode, RegistryOp } from '../../src/api/types';
import { appendToGroups, buildGroups, defaultExpansion, removeFromGroups } from '../../src/model/groups';
import {
  appendNodes,
  buildViewModel,
  patchedLeaf,
  registryKey,
  removeLeaves,
  type ViewModel,
} from '../../src/model/viewmodel';
import { counted } from '../../src/ui/checklist';
import { matchOps } from '../../src/ui/palette';

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
  attributes: [{ name: 'kernel_shape', type: 'ints', required: false }],
};
const concat: RegistryOp = {
  ...conv,
  op_type: 'Concat',
  category: 'tensor',
  inputs: [{ name: 'inputs', option: 'variadic', types: ['T'] }],
  attributes: [],
};
const registry = new Map([conv, concat].map((o) => [registryKey(o.domain, o.op_type), o]));

const graph: ApiGraph = {
  version: 3,
  graph: 'main',
  nodes: [
    {
      id: 1,
      name: 'k',
      op_type: 'Constant',
      domain: '',
      scope: '',
      inputs: [],
      outputs: ['kc'],
      attributes: [],
    },
    {
      id: 2,
      name: '/enc/layer.0/conv',
      op_type: 'Conv',
      domain: '',
      scope: '/enc/layer.0',
      inputs: ['x', 'W', ''],
      outputs: ['y'],
      attributes: [],
    },
    {
      id: 3,
      name: '/enc/cat',
      op_type: 'Concat',
      domain: '',
      scope: '/enc',
      inputs: ['y', 'kc'],
      outputs: ['z'],
      attributes: [],
    },
  ],
  inputs: [{ name: 'x', type: 'tensor(float)', shape: [1, 3] }],
  outputs: [{ name: 'z', type: 'tensor(float)', shape: [1, 6] }],
  initializers: [{ name: 'W', dtype: 'float', shape: [8, 3, 3, 3], bytes: 864 }],
};

describe('view model', () => {
  it('hides constants, colours terminals, grows variadic inputs and links values', () => {
    const vm = buildViewModel(graph, { showConstants: false, registry });
    expect(vm.hiddenConstants).toBe(1);
    expect(vm.leaves.map((l) => l.key)).toEqual(['i:x', 'n:2', 'n:3', 'o:z']);
    const conv = vm.leaves[1];
    expect(conv.inputs.map((t) => t.state)).toEqual(['linked', 'init', 'free']);
    expect(conv.inputs.map((t) => t.optional)).toEqual([false, false, true]);
    const cat = vm.leaves[2];
    expect(cat.inputs.map((t) => [t.state, t.variadicFree])).toEqual([
      ['linked', false],
      ['init', false],
      ['free', true],
    ]);
    expect(vm.edges.map((e) => `${e.src}:${e.srcPort}->${e.dst}:${e.dstPort}`)).toEqual([
      '0:0->1:0',
      '1:0->2:0',
      '2:0->3:0',
    ]);
  });

  it('shows constants as nodes when asked', () => {
    const vm = buildViewModel(graph, { showConstants: true, registry });
    expect(vm.leaves.some((l) => l.op === 'Constant')).toBe(true);
    expect(vm.leaves[3].inputs[1].state).toBe('linked'); // Concat's input from the visible Constant
  });

  it('groups by name scope', () => {
    const vm = buildViewModel(graph, { showConstants: false, registry });
    const g = buildGroups(vm);
    expect(g.path).toEqual(['', '/enc', '/enc/layer.0']);
    expect(g.parent).toEqual([-1, 0, 1]);
    expect(g.size).toEqual([4, 2, 1]);
    expect([...defaultExpansion(g, 1)]).toEqual([1, 0, 0]);
    expect([...defaultExpansion(g)]).toEqual([1, 1, 1]);
  });
});

describe('edits patched in place', () => {
  const node = (i: number) => graph.nodes[i];
  it('patches a renamed or re-parameterised node, keeping terminals and links', () => {
    const vm = buildViewModel(graph, { showConstants: false, registry });
    const conv = vm.leaves[1];
    const renamed = { ...node(1), name: '/enc/layer.0/conv2', severity: 'error' as const };
    renamed.attributes = [{ name: 'kernel_shape', type: 'ints', value: [3, 3] }];
    const p = patchedLeaf(conv, renamed)!;
    expect(p.name).toBe('/enc/layer.0/conv2');
    expect(p.lines).toEqual(['kernel_shape: [3, 3]']);
    expect(p.severity).toBe('error');
    expect(p.inputs).toBe(conv.inputs);
    expect(conv.name).toBe('/enc/layer.0/conv'); // the old leaf is left as it was
  });

  it('refuses what changes the structure: links, operator, scope, constants', () => {
    const vm = buildViewModel(graph, { showConstants: true, registry });
    const conv = vm.leaves.find((l) => l.id === 2)!;
    expect(patchedLeaf(conv, { ...node(1), inputs: ['x', 'W', 'x'] })).toBeNull();
    expect(patchedLeaf(conv, { ...node(1), outputs: ['y2'] })).toBeNull();
    expect(patchedLeaf(conv, { ...node(1), op_type: 'ConvTranspose' })).toBeNull();
    expect(patchedLeaf(conv, { ...node(1), scope: '/enc' })).toBeNull();
    expect(patchedLeaf(conv, { ...node(1), id: 3 })).toBeNull();
    const k = vm.leaves.find((l) => l.id === 1)!;
    expect(patchedLeaf(k, { ...node(0), name: 'k2' })).toBeNull();
    // A trailing omitted optional input reads the same as a shorter list.
    expect(patchedLeaf(conv, { ...node(1), inputs: ['x', 'W'] })).not.toBeNull();
  });

  it('reuses the leaves of unchanged node objects on rebuild, unless their terminals read differently', () => {
    const g: ApiGraph = { ...graph, nodes: graph.nodes.map((n) => ({ ...n })) };
    const a = buildViewModel(g, { showConstants: false, registry });
    const b = buildViewModel(g, { showConstants: false, registry });
    expect(b.leaves[1]).toBe(a.leaves[1]);
    expect(b.leaves[2]).toBe(a.leaves[2]);
    // Graph output z removed: the Concat's output terminal becomes free, so its leaf is rebuilt.
    const c = buildViewModel({ ...g, outputs: [] }, { showConstants: false, registry });
    expect(c.leaves[2]).not.toBe(a.leaves[2]);
    expect(c.leaves[2].outputs[0].state).toBe('free');
    expect(c.leaves[1]).toBe(a.leaves[1]);
    // A severity set on the node object shows on the reused leaf.
    g.nodes[1].severity = 'warning';
    expect(buildViewModel(g, { showConstants: false, registry }).leaves[1].severity).toBe('warning');
    // Another registry (another document's opsets) rebuilds.
    const other = new Map([...registry].map(([k, o]) => [k, { ...o }]));
    expect(buildViewModel(g, { showConstants: false, registry: other }).leaves[1]).not.toBe(a.leaves[1]);
  });
});

describe('palette search', () => {
  it('matches name, domain and category, exact names first', () => {
    const ops = [
      concat,
      conv,
      { ...conv, op_type: 'ConvTranspose' },
      { ...conv, op_type: 'QLinearConv', domain: 'com.microsoft' },
    ];
    expect(matchOps(ops, 'conv').map((o) => o.op_type)).toEqual(['Conv', 'ConvTranspose', 'QLinearConv']);
    expect(matchOps(ops, 'microsoft').map((o) => o.op_type)).toEqual(['QLinearConv']);
    expect(matchOps(ops, 'tensor').map((o) => o.op_type)).toEqual(['Concat']);
  });
});

describe('type-check list title', () => {
  it('counts in the singular for one', () => {
    expect(counted(1, 'error')).toBe('1 error');
    expect(counted(0, 'warning')).toBe('0 warnings');
    expect(counted(12000, 'error')).toBe('12,000 errors');
  });
});

describe('nodes appended in place', () => {
  it('gives the leaves, edges, terminal states and groups a full rebuild gives', () => {
    const added: ApiNode = {
      id: 9,
      name: '/enc/new/relu',
      op_type: 'Relu',
      domain: '',
      scope: '/enc/new',
      inputs: ['y'],
      outputs: ['r'],
      attributes: [],
    };
    // y feeds the Concat already; a graph without a consumer of z's producer shows the free -> linked case.
    const base: ApiGraph = { ...graph, nodes: graph.nodes.map((n) => ({ ...n })), outputs: [] };
    const vm = buildViewModel(base, { showConstants: false, registry });
    const groups = buildGroups(vm);
    const cat = vm.leaves.findIndex((l) => l.id === 3);
    expect(vm.leaves[cat].outputs[0].state).toBe('free');
    const z: ApiNode = {
      ...added,
      id: 10,
      name: '/enc/z_user',
      scope: '/enc',
      inputs: ['z'],
      outputs: ['q'],
    };
    const before = vm.leaves.slice();
    const relinked: number[] = [];
    const leaves = appendNodes(vm, [added, z], relinked)!;
    // Exactly the old leaves that were replaced (their outputs now linked) are reported.
    const replaced = before.map((l, i) => (l !== vm.leaves[i] ? i : -1)).filter((i) => i >= 0);
    expect([...new Set(relinked)].sort()).toEqual(replaced);
    expect(relinked).toContain(cat);
    const newGroups = appendToGroups(groups, vm, leaves);
    const full = buildViewModel(
      { ...base, nodes: [...base.nodes, added, z] },
      { showConstants: false, registry },
    );
    const fullGroups = buildGroups(full);
    const byKey = (v: typeof vm) => new Map(v.leaves.map((l) => [l.key, l]));
    expect(byKey(vm)).toEqual(byKey(full));
    const edgeKeys = (v: typeof vm) =>
      v.edges.map((e) => `${v.leaves[e.src].key}:${e.srcPort}->${v.leaves[e.dst].key}:${e.dstPort}`).sort();
    expect(edgeKeys(vm)).toEqual(edgeKeys(full));
    expect(vm.leaves[cat].outputs[0].state).toBe('linked'); // z is read now
    expect(newGroups.map((k) => groups.path[k])).toEqual(['/enc/new']);
    const sizeOf = (g: typeof groups) => new Map(g.path.map((p, k) => [p, g.size[k]]));
    expect(sizeOf(groups)).toEqual(sizeOf(fullGroups));
    vm.leaves.forEach((l, i) =>
      expect(groups.path[groups.leafGroup[i]]).toBe(
        fullGroups.path[fullGroups.leafGroup[full.leaves.findIndex((f) => f.key === l.key)]],
      ),
    );
  });

  it('refuses what needs a rebuild: constants, outputs already read', () => {
    const vm = buildViewModel(graph, { showConstants: false, registry });
    const k: ApiNode = {
      id: 7,
      name: 'k2',
      op_type: 'Constant',
      domain: '',
      scope: '',
      inputs: [],
      outputs: ['k2'],
      attributes: [],
    };
    expect(appendNodes(vm, [k])).toBeNull();
    const dangling = { ...k, op_type: 'Relu', outputs: ['z'] }; // z is a graph output already produced
    expect(appendNodes(vm, [dangling])).toBeNull();
  });
});

describe('nodes removed in place', () => {
  // x -> a (Conv, /enc/layer.0) -> b (Concat, /enc) -> z (graph output); a also feeds c (/dec); d reads c.
  const mk = (
    id: number,
    name: string,
    op: string,
    scope: string,
    inputs: string[],
    outputs: string[],
  ): ApiNode => ({
    id,
    name,
    op_type: op,
    domain: '',
    scope,
    inputs,
    outputs,
    attributes: [],
  });
  const base = (): ApiGraph => ({
    ...graph,
    nodes: [
      mk(1, 'k', 'Constant', '', [], ['kc']),
      mk(2, 'a', 'Conv', '/enc/layer.0', ['x', 'W', ''], ['y']),
      mk(3, 'b', 'Concat', '/enc', ['y', 'kc'], ['z']),
      mk(4, 'c', 'Conv', '/dec', ['y', 'W'], ['u']),
      mk(5, 'd', 'Conv', '/dec', ['u', 'W'], ['v']),
      mk(6, 'e', 'Conv', '/dec/tail', ['v', 'W'], ['w']),
    ],
  });
  const live = (v: ViewModel) =>
    new Map(v.leaves.filter((l) => !l.removed).map((l) => [l.key, { ...l, severity: l.severity ?? null }]));
  const edgeKeys = (v: ViewModel) =>
    v.edges.map((e) => `${v.leaves[e.src].key}:${e.srcPort}->${v.leaves[e.dst].key}:${e.dstPort}`).sort();

  for (const ids of [[3], [4], [5, 4], [2], [6]]) {
    it(`gives what a rebuild gives after removing ${ids.join(', ')}`, () => {
      const g = base();
      const vm = buildViewModel(g, { showConstants: false, registry });
      const groups = buildGroups(vm);
      const indices = ids.map((id) => vm.byNodeId.get(id)!);
      const res = removeLeaves(vm, ids)!;
      expect(res.removed).toEqual(indices);
      const changed = removeFromGroups(groups, res.removed);
      const after = { ...g, nodes: g.nodes.filter((n) => !ids.includes(n.id)) };
      const full = buildViewModel(after, { showConstants: false, registry });
      expect(live(vm)).toEqual(live(full));
      expect(edgeKeys(vm)).toEqual(edgeKeys(full));
      for (const i of res.removed) expect(vm.leaves[i].removed).toBe(true);
      // Groups: removing a or e empties /enc/layer.0 or /dec/tail, which a rebuild drops: refused
      // (nothing changed), the caller rebuilds.
      const fullGroups = buildGroups(full);
      if (ids.includes(2) || ids.includes(6)) {
        expect(changed).toBeNull();
        expect(fullGroups.path.length).toBe(groups.path.length - 1);
        expect(groups.leafGroup[res.removed[0]]).toBeGreaterThan(0);
        return;
      }
      const sizes = (gr: typeof groups) =>
        new Map(gr.path.map((p, k) => [p, gr.size[k]] as const).filter(([, n]) => n > 0));
      expect(sizes(groups)).toEqual(sizes(fullGroups));
      expect(changed!.length).toBeGreaterThan(0);
      for (const i of res.removed) expect(groups.leafGroup[i]).toBe(-1);
    });
  }

  it('frees the terminals that lose their last reader and refuses hidden constants', () => {
    const g = base();
    const vm = buildViewModel(g, { showConstants: false, registry });
    const c = vm.byNodeId.get(4)!;
    const d = vm.byNodeId.get(5)!;
    expect(vm.leaves[c].outputs[0].state).toBe('linked');
    const res = removeLeaves(vm, [5])!;
    expect(res.touched).toEqual([c]);
    expect(vm.leaves[c].outputs[0].state).toBe('free');
    expect(vm.leaves[d].key).toBe(''); // a tombstone is never taken for the node if it comes back
    expect(vm.byNodeId.has(5)).toBe(false);
    expect(removeLeaves(vm, [5])).toBeNull(); // gone already
    expect(removeLeaves(buildViewModel(g, { showConstants: false, registry }), [1])).toBeNull();
    // b feeds graph output z: removing it leaves the output's terminal free.
    const vm2 = buildViewModel(g, { showConstants: false, registry });
    const out = vm2.leaves.findIndex((l) => l.key === 'o:z');
    expect(vm2.leaves[out].inputs[0].state).toBe('linked');
    expect(removeLeaves(vm2, [3])!.touched).toContain(out);
    expect(vm2.leaves[out].inputs[0].state).toBe('free');
  });
});
