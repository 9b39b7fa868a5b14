// Local functions made from the canvas: an empty one (an Identity from X to Y, so it checks), or the
// selected nodes moved into a new function and replaced by one call to it, in one undo step.
import type { ApiGraph, ApiNode, Command } from '../api/types';

export const LOCAL_DOMAIN = 'local';

/** The model's opset imports the function's body uses (ai.onnx and the others, not the local one). */
function bodyOpsets(g: ApiGraph): Array<{ domain: string; version: number }> {
  return (g.opset_imports ?? []).filter((o) => o.domain !== LOCAL_DOMAIN);
}

/** The batch that imports the local domain when the model does not yet. */
function importLocal(g: ApiGraph): Command[] {
  return (g.opset_imports ?? []).some((o) => o.domain === LOCAL_DOMAIN)
    ? []
    : [{ type: 'set_opset_import', domain: LOCAL_DOMAIN, version: 1 }];
}

export function emptyFunction(g: ApiGraph, name: string): Command[] {
  const fn = {
    domain: LOCAL_DOMAIN,
    name,
    inputs: ['X'],
    outputs: ['Y'],
    attributes: [],
    opset_imports: bodyOpsets(g),
    nodes: [{ name: 'identity', op_type: 'Identity', inputs: ['X'], outputs: ['Y'] }],
  };
  return [...importLocal(g), { type: 'add_function', function: fn }];
}

/** The selected nodes of `g` become function `name`: its inputs are the values they read from outside
 *  (in order of first use), its outputs those they make that the rest of the graph (or a graph output)
 *  reads; one call node takes their place after the last node feeding it. Throws what prevents it. */
export function functionFromSelection(
  g: ApiGraph,
  selected: ApiNode[],
  name: string,
  callName: string,
): Command[] {
  if (!selected.length) throw new Error('select the nodes to make a function of');
  const ids = new Set(selected.map((n) => n.id));
  const nodes = g.nodes.filter((n) => ids.has(n.id)); // graph order, so the body is in order too
  for (const n of nodes) {
    for (const a of n.attributes) {
      if (a.type === 'graph' || a.type === 'graphs')
        throw new Error(`node '${n.name}' holds a subgraph: functions made here take plain nodes`);
      const t = a.value as { values?: unknown } | null;
      if (a.type === 'tensor' && t && t.values === undefined)
        throw new Error(`node '${n.name}': attribute '${a.name}' is a large tensor the studio does not hold`);
    }
  }
  const made = new Set(nodes.flatMap((n) => n.outputs).filter((v) => v));
  const inputs: string[] = [];
  for (const n of nodes)
    for (const v of n.inputs) if (v && !made.has(v) && !inputs.includes(v)) inputs.push(v);
  const readOutside = new Set<string>(g.outputs.map((o) => o.name));
  for (const n of g.nodes) if (!ids.has(n.id)) for (const v of n.inputs) if (v) readOutside.add(v);
  const outputs = [...made].filter((v) => readOutside.has(v));
  if (!outputs.length) throw new Error('nothing outside the selection reads what it makes');
  const fn = {
    domain: LOCAL_DOMAIN,
    name,
    inputs,
    outputs,
    attributes: [],
    opset_imports: bodyOpsets(g),
    nodes: nodes.map((n) => ({
      name: n.name,
      op_type: n.op_type,
      domain: n.domain,
      inputs: n.inputs,
      outputs: n.outputs,
      attributes: n.attributes,
    })),
  };
  // The call goes right after the last node making one of its inputs (in the list left once the
  // selection is removed): at the first selected node's place it would read values made later when the
  // selection spans other nodes (a skip connection), and the graph would no longer be sorted.
  const feeds = new Set(inputs);
  const rest = g.nodes.filter((n) => !ids.has(n.id));
  let position = 0;
  rest.forEach((n, k) => n.outputs.some((v) => feeds.has(v)) && (position = k + 1));
  return [
    ...importLocal(g),
    { type: 'add_function', function: fn },
    ...nodes.map((n) => ({ type: 'remove_node', node: n.id })),
    {
      type: 'add_node',
      node: { name: callName, op_type: name, domain: LOCAL_DOMAIN, inputs, outputs },
      position,
    },
  ];
}
