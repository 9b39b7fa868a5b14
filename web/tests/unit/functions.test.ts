import { describe, expect, it } from 'vitest';
import type { ApiGraph, ApiNode } from '../../src/api/types';
import { emptyFunction, functionFromSelection } from '../../src/app/functions';

const node = (
  id: number,
  op: string,
  inputs: string[],
  outputs: string[],
  extra: Partial<ApiNode> = {},
): ApiNode => ({
  id,
  name: `n${id}`,
  op_type: op,
  domain: '',
  scope: '',
  inputs,
  outputs,
  attributes: [],
  ...extra,
});

// x -> n1 Relu -> a -> n2 Mul(a, w) -> b -> n3 Sigmoid -> c -> n4 Add(c, a) -> y (graph output)
const graph: ApiGraph = {
  version: 1,
  graph: 'main',
  nodes: [
    node(1, 'Relu', ['x'], ['a']),
    node(2, 'Mul', ['a', 'w'], ['b'], { attributes: [{ name: 'k', type: 'int', value: 2 }] }),
    node(3, 'Sigmoid', ['b'], ['c']),
    node(4, 'Add', ['c', 'a'], ['y']),
  ],
  inputs: [{ name: 'x', type: 'tensor(float)', shape: [1] }],
  outputs: [{ name: 'y', type: 'tensor(float)', shape: [1] }],
  initializers: [{ name: 'w', dtype: 'float', shape: [1], bytes: 4 }],
  opset_imports: [{ domain: '', version: 17 }],
};

describe('local functions from the canvas', () => {
  it('moves the selection into a function and one call in its place, in one batch', () => {
    const cmds = functionFromSelection(graph, [graph.nodes[2], graph.nodes[1]], 'Block', 'Block_call');
    expect(cmds.map((c) => c.type)).toEqual([
      'set_opset_import',
      'add_function',
      'remove_node',
      'remove_node',
      'add_node',
    ]);
    const fn = cmds[1].function as Record<string, unknown>;
    expect(fn.inputs).toEqual(['a', 'w']); // read from outside, in order of first use
    expect(fn.outputs).toEqual(['c']); // b stays inside; c is read by n4
    expect((fn.nodes as ApiNode[]).map((n) => n.name)).toEqual(['n2', 'n3']); // graph order
    expect((fn.nodes as ApiNode[])[0].attributes).toEqual([{ name: 'k', type: 'int', value: 2 }]);
    expect(fn.opset_imports).toEqual([{ domain: '', version: 17 }]);
    expect(cmds[4]).toEqual({
      type: 'add_node',
      node: { name: 'Block_call', op_type: 'Block', domain: 'local', inputs: ['a', 'w'], outputs: ['c'] },
      position: 1,
    });
  });

  it('puts the call after the last node feeding it, so the graph stays sorted', () => {
    // n1 and n4 selected: n4 also reads c, made by n3 in between; at n1's place the call would read c
    // before it is made.
    const cmds = functionFromSelection(graph, [graph.nodes[0], graph.nodes[3]], 'Ends', 'Ends_call');
    const add = cmds.find((c) => c.type === 'add_node')!;
    expect((add.node as ApiNode).inputs).toEqual(['x', 'c']);
    expect(add.position).toBe(2); // after n2 and n3, the nodes left
    // Fed only by graph inputs and initializers: first.
    const first = functionFromSelection(graph, [graph.nodes[0]], 'Head', 'Head_call');
    expect(first.find((c) => c.type === 'add_node')!.position).toBe(0);
  });

  it('keeps outputs read by graph outputs, imports the local domain once', () => {
    const g = { ...graph, opset_imports: [...graph.opset_imports!, { domain: 'local', version: 1 }] };
    const cmds = functionFromSelection(g, [g.nodes[3]], 'Tail', 'Tail_call');
    expect(cmds[0].type).toBe('add_function');
    expect((cmds[0].function as { outputs: string[] }).outputs).toEqual(['y']);
  });

  it('refuses what it cannot move, saying why', () => {
    expect(() => functionFromSelection(graph, [], 'F', 'c')).toThrow('select the nodes');
    const loop = node(5, 'Loop', [], ['z'], { attributes: [{ name: 'body', type: 'graph', value: 3 }] });
    expect(() =>
      functionFromSelection({ ...graph, nodes: [...graph.nodes, loop] }, [loop], 'F', 'c'),
    ).toThrow("node 'n5' holds a subgraph");
    const big = node(6, 'Constant', [], ['k'], {
      attributes: [{ name: 'value', type: 'tensor', value: { dtype: 'float', shape: [1000] } }],
    });
    expect(() => functionFromSelection({ ...graph, nodes: [big, ...graph.nodes] }, [big], 'F', 'c')).toThrow(
      "attribute 'value' is a large tensor",
    );
    expect(() =>
      functionFromSelection(
        graph,
        [graph.nodes[3], graph.nodes[2], graph.nodes[1], graph.nodes[0]].slice(0, 4),
        'F',
        'c',
      ),
    ).not.toThrow();
  });

  it('makes an empty function that checks: an Identity from X to Y', () => {
    const cmds = emptyFunction(graph, 'Empty');
    expect(cmds[1]).toMatchObject({
      type: 'add_function',
      function: {
        domain: 'local',
        name: 'Empty',
        inputs: ['X'],
        outputs: ['Y'],
        nodes: [{ op_type: 'Identity' }],
      },
    });
  });
});
