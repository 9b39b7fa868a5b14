// Where two scenes of one graph differ, as world rectangles: what an edit changed on screen. The renderer
// rasterises only those (renderer.setScene with regions), which under software WebGL is most of the
// cost of a frame. Leaves keep their index from one scene to the next (nodes are appended, removed ones
// stay as tombstones), groups keep theirs after the leaves (item n + k).
import { GROUP } from '../model/glyph';
import type { Region, Scene } from './scene';

/** What the edit touched beyond geometry: leaves whose look changed (terminals, name, severity, added
 *  or removed) and groups whose title changed (the count of leaves below). */
export interface SceneChanges {
  leaves: Iterable<number>;
  groups: Iterable<number>;
}

/** Past this many rectangles a full render costs less than sorting them out. */
const MAX_REGIONS = 4000;
/** World units around an item that its drawing may cover: selection outline, severity badge, terminals. */
const ITEM_MARGIN = 12;

/** The rectangles of `b` (and of `a`, where things were) that differ; null when the whole view should
 *  be rendered again (the root group was laid out again: everything may have moved). */
export function changedRegions(a: Scene, b: Scene, changes: SceneChanges, pixel: number): Region[] | null {
  const la = a.lay;
  const lb = b.lay;
  if (Array.from(lb.relaid).includes(0)) return null;
  const ngA = la.groupState.length;
  const ngB = lb.groupState.length;
  const movedA = new Uint8Array(a.n + ngA);
  const movedB = new Uint8Array(b.n + ngB);
  const out: Region[] = [];
  const m = ITEM_MARGIN + 2 * pixel;
  const rect = (l: Scene['lay'], i: number, header = false) => {
    const x = l.itemX[i];
    if (Number.isNaN(x)) return;
    const y = l.itemY[i];
    const h = header ? Math.min(l.itemH[i], GROUP.header) : l.itemH[i];
    out.push([x - m, y - m, x + l.itemW[i] + m, y + h + m]);
  };
  const same = (i: number, j: number) =>
    sameNum(la.itemX[i], lb.itemX[j]) &&
    sameNum(la.itemY[i], lb.itemY[j]) &&
    sameNum(la.itemW[i], lb.itemW[j]) &&
    sameNum(la.itemH[i], lb.itemH[j]);
  const mark = (i: number, j: number) => {
    if (i >= 0) {
      movedA[i] = 1;
      rect(la, i);
    }
    if (j >= 0) {
      movedB[j] = 1;
      rect(lb, j);
    }
  };
  // A scene patched from `a` knows which leaves moved; else every leaf is compared.
  const moved = b.movedLeaves;
  if (moved && b.movedFrom === la) for (const i of moved) mark(i < a.n ? i : -1, i);
  else
    for (let i = 0; i < Math.max(a.n, b.n); i++) {
      const ia = i < a.n ? i : -1;
      const ib = i < b.n ? i : -1;
      if (ia < 0 || ib < 0 || !same(ia, ib)) mark(ia, ib);
    }
  for (let k = 0; k < Math.max(ngA, ngB); k++) {
    const ia = k < ngA ? a.n + k : -1;
    const ib = k < ngB ? b.n + k : -1;
    if (ia < 0 || ib < 0 || !same(ia, ib) || la.groupState[k] !== lb.groupState[k]) mark(ia, ib);
  }
  // Touched leaves where they are shown; a hidden one through the collapsed group drawn for it (its
  // badge says the worst finding below).
  for (const i of changes.leaves) {
    mark(i < a.n ? i : -1, i < b.n ? i : -1);
    for (const s of [a, b]) {
      const r = Number.isNaN(s.lay.itemX[i]) ? s.shownRect(i) : null;
      if (r) out.push([r[0] - m, r[1] - m, r[0] + r[2] + m, r[1] + r[3] + m]);
    }
  }
  // Groups whose count changed: the title of an expanded one; a collapsed one whole, with its edges
  // (the lifted edges of a collapsed group change with the leaves it hides).
  for (const k of changes.groups) {
    if (k < ngA && la.groupState[k] === 1) movedA[a.n + k] = 1;
    if (k < ngB && lb.groupState[k] === 1) movedB[b.n + k] = 1;
    if (k < ngA) rect(la, a.n + k, la.groupState[k] === 2);
    if (k < ngB) rect(lb, b.n + k, lb.groupState[k] === 2);
  }
  // Groups laid out again: their routes may have changed even where their children did not move.
  for (const k of lb.relaid) {
    if (k < ngA) rect(la, a.n + k);
    rect(lb, b.n + k);
  }
  edgesOf(a, movedA, m, out);
  edgesOf(b, movedB, m, out);
  return out.length > MAX_REGIONS ? null : out;
}

function sameNum(x: number, y: number): boolean {
  return x === y || (Number.isNaN(x) && Number.isNaN(y));
}

/** The boxes of the edges of `s` with an end on a moved item. */
function edgesOf(s: Scene, moved: Uint8Array, m: number, out: Region[]): void {
  const l = s.lay;
  const [ex, ey, ew, eh] = s.edgeBox;
  for (let e = 0; e < l.edgeSrcItem.length; e++) {
    if (!moved[l.edgeSrcItem[e]] && !moved[l.edgeDstItem[e]]) continue;
    if (!Number.isFinite(ex[e])) continue;
    out.push([ex[e] - m, ey[e] - m, ex[e] + ew[e] + m, ey[e] + eh[e] + m]);
  }
}
