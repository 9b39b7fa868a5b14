// The layout input kept up to date by the edits patched in place (canvasview: title widths measured
// again for the groups whose count changed, edge lists compacted after a removal) equals the input
// built from scratch for the view model and groups as they are.
import { describe, expect, it } from 'vitest';
import {
  appendToGroups,
  buildGroups,
  hierGraph,
  keptEdges,
  labelWidths,
  removeFromGroups,
} from '../../src/model/groups';
import { appendNodes, buildViewModel, removeLeaves } from '../../src/model/viewmodel';
import { syntheticGraph } from '../../src/fixtures/synthetic';

/** Groups holding any of the leaves, at any depth. */
const ancestors = (groups: ReturnType<typeof buildGroups>, leaves: number[]) => {
  const out = new Set<number>();
  for (const i of leaves) for (let k = groups.leafGroup[i]; k >= 0; k = groups.parent[k]) out.add(k);
  return [...out];
};

describe('layout input patched in place', () => {
  it('after nodes appended (a new scope among them) and removed', () => {
    const api = syntheticGraph({ nodes: 3000, scoped: true });
    const vm = buildViewModel(api, { showConstants: false });
    const groups = buildGroups(vm);
    const hg = hierGraph(vm, groups);
    // 100 nodes under /block.1/layer.3 move its title's count from 2 digits to 3; one in a new scope.
    const src = api.nodes.find((n) => n.scope === '/block.1/layer.3')!;
    const extra = Array.from({ length: 101 }, (_, k) => ({
      ...src,
      id: 90000 + k,
      name: `${k === 100 ? '/block.1/new' : src.scope}/Extra${k}`,
      scope: k === 100 ? '/block.1/new' : src.scope,
      op_type: 'Relu',
      inputs: [src.outputs[0]],
      outputs: [`extra${k}`],
      attributes: [],
    }));
    const added = appendNodes(vm, extra)!;
    appendToGroups(groups, vm, added);
    const widths = labelWidths(groups, hg.groupLabelW, ancestors(groups, added));
    const built = hierGraph(vm, groups);
    expect(Array.from(widths)).toEqual(Array.from(built.groupLabelW));
    expect(widths[groups.path.indexOf('/block.1/layer.3')]).toBeGreaterThan(
      hg.groupLabelW[groups.path.indexOf('/block.1/layer.3')],
    );

    // Removed: the source node (its edges in the middle of the list) and two of the extra nodes.
    const gone = [vm.byNodeId.get(src.id)!, added[3], added[50]];
    const edgeIndex = new Int32Array(vm.edges.length);
    let kept = 0;
    for (let j = 0; j < edgeIndex.length; j++)
      edgeIndex[j] = gone.includes(built.edgeSrc[j]) || gone.includes(built.edgeDst[j]) ? -1 : kept++;
    expect(kept).toBeLessThan(vm.edges.length - 100); // the source fed the 101 extra nodes
    removeLeaves(
      vm,
      gone.map((i) => vm.leaves[i].id),
    )!;
    const changed = removeFromGroups(groups, gone)!;
    const after = hierGraph(vm, groups);
    const edges = keptEdges(built, edgeIndex, kept);
    expect(Array.from(edges.edgeSrc)).toEqual(Array.from(after.edgeSrc));
    expect(Array.from(edges.edgeDst)).toEqual(Array.from(after.edgeDst));
    expect(Array.from(labelWidths(groups, built.groupLabelW, changed))).toEqual(
      Array.from(after.groupLabelW),
    );
  });
});
