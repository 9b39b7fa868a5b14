// The scene's edge boxes (kept for render/diff.ts), computed without building each polyline, are the
// boxes of the polylines the renderer draws.
import { describe, expect, it } from 'vitest';
import { layoutHierarchy } from '../../src/layout/hierarchy';
import { buildGroups, hierGraph } from '../../src/model/groups';
import { buildViewModel } from '../../src/model/viewmodel';
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
