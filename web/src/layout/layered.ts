// A layered (Sugiyama-style) layout whose cost is about linear in nodes + edges:
//  - ranks by longest path over a Kahn order (ONNX nodes come topologically sorted, so this is one pass);
//    cycles, which appear only between lifted groups, are broken by reversing the edges that close them;
//  - sources (graph inputs, constants) are pulled down next to their first consumer;
//  - dummy nodes for edges spanning a few ranks (capped, so long skip connections do not blow up the
//    node count), ordered by barycentre sweeps;
//  - x by isotonic regression per rank (pool-adjacent-violators: the closest placement to the
//    neighbours' barycentres that keeps the minimum spacing), a few sweeps up and down.
// dagre's network simplex and crossing minimisation are quadratic or worse in practice (STUDIO.md).

export interface LayeredInput {
  widths: ArrayLike<number>;
  heights: ArrayLike<number>;
  src: ArrayLike<number>;
  dst: ArrayLike<number>;
}

export interface LayeredOptions {
  nodeSep: number;
  rankSep: number;
  maxDummySpan: number; // edges spanning more ranks are drawn straight
  dummyBudget: number; // at most this many dummies per real node
  sweeps: number;
}

export interface LayeredResult {
  x: Float64Array; // top-left
  y: Float64Array;
  rank: Int32Array;
  routes: Array<number[] | null>; // per edge: bend points [x0, y0, x1, y1, ...] between the endpoints
  width: number;
  height: number;
}

export const DEFAULT_OPTIONS: LayeredOptions = {
  nodeSep: 24,
  rankSep: 44,
  maxDummySpan: 12,
  dummyBudget: 3,
  sweeps: 3,
};

interface Csr {
  start: Int32Array;
  list: Int32Array;
}

function csr(n: number, from: ArrayLike<number>, to: ArrayLike<number>, m: number): Csr {
  const start = new Int32Array(n + 1);
  for (let e = 0; e < m; e++) start[from[e] + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const fill = start.slice(0, n);
  const list = new Int32Array(m);
  for (let e = 0; e < m; e++) list[fill[from[e]]++] = to[e];
  return { start, list };
}

/** Kahn order; when it stalls on a cycle, the lowest-index unplaced node is forced in. */
function topoOrder(n: number, src: ArrayLike<number>, dst: ArrayLike<number>): Int32Array {
  const m = src.length;
  const out = csr(n, src, dst, m);
  const indeg = new Int32Array(n);
  for (let e = 0; e < m; e++) indeg[dst[e]]++;
  const order = new Int32Array(n);
  const placed = new Uint8Array(n);
  let head = 0;
  let tail = 0;
  let scan = 0;
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order[tail++] = i;
  for (let i = 0; i < tail; i++) placed[order[i]] = 1;
  while (head < n) {
    if (head === tail) {
      while (placed[scan]) scan++;
      placed[scan] = 1;
      order[tail++] = scan;
    }
    const u = order[head++];
    for (let k = out.start[u]; k < out.start[u + 1]; k++) {
      const v = out.list[k];
      if (--indeg[v] === 0 && !placed[v]) {
        placed[v] = 1;
        order[tail++] = v;
      }
    }
  }
  return order;
}

/** Scratch buffers for placeRow, grown as needed: rows are laid out thousands of times per layout and
 *  allocating typed arrays for each made the garbage collector the largest cost. */
class RowScratch {
  offset = new Float64Array(64);
  sum = new Float64Array(64);
  cnt = new Int32Array(64);
  end = new Int32Array(64);
  target = new Float64Array(64);
  out = new Float64Array(64);
  ensure(n: number): void {
    if (n <= this.offset.length) return;
    const size = Math.max(n, this.offset.length * 2);
    this.offset = new Float64Array(size);
    this.sum = new Float64Array(size);
    this.cnt = new Int32Array(size);
    this.end = new Int32Array(size);
    this.target = new Float64Array(size);
    this.out = new Float64Array(size);
  }
}

/** Isotonic regression with minimum gaps: x[i+1] - x[i] >= gap[i], closest to target in least squares.
 *  Reads target[0..n), gap[g0..g0+n-1), writes out[0..n). */
export function placeRow(
  target: Float64Array,
  gap: Float64Array,
  out: Float64Array,
  n = target.length,
  g0 = 0,
  sc: RowScratch = new RowScratch(),
): void {
  if (n === 0) return;
  sc.ensure(n);
  const { offset, sum, cnt, end } = sc;
  offset[0] = 0;
  for (let i = 1; i < n; i++) offset[i] = offset[i - 1] + gap[g0 + i - 1];
  // Pool adjacent violators on t[i] = target[i] - offset[i], which must become non-decreasing.
  let blocks = 0;
  for (let i = 0; i < n; i++) {
    sum[blocks] = target[i] - offset[i];
    cnt[blocks] = 1;
    end[blocks] = i;
    blocks++;
    while (blocks > 1 && sum[blocks - 2] / cnt[blocks - 2] > sum[blocks - 1] / cnt[blocks - 1]) {
      sum[blocks - 2] += sum[blocks - 1];
      cnt[blocks - 2] += cnt[blocks - 1];
      end[blocks - 2] = end[blocks - 1];
      blocks--;
    }
  }
  let i = 0;
  for (let b = 0; b < blocks; b++) {
    const mean = sum[b] / cnt[b];
    for (; i <= end[b]; i++) out[i] = mean + offset[i];
  }
}

export function layered(input: LayeredInput, options: Partial<LayeredOptions> = {}): LayeredResult {
  const opt = { ...DEFAULT_OPTIONS, ...options };
  const n = input.widths.length;
  const m0 = input.src.length;
  const order = topoOrder(n, input.src, input.dst);
  const pos = new Int32Array(n);
  for (let i = 0; i < n; i++) pos[order[i]] = i;

  // Orient every edge forward in the Kahn order (back edges close cycles; they are drawn reversed).
  const from = new Int32Array(m0);
  const to = new Int32Array(m0);
  for (let e = 0; e < m0; e++) {
    const a = input.src[e];
    const b = input.dst[e];
    const fwd = pos[a] < pos[b];
    from[e] = fwd ? a : b;
    to[e] = fwd ? b : a;
  }
  const rank = longestPathRanks(n, order, from, to);

  // Dummies: chains through the ranks an edge crosses, while the budget lasts.
  let total = n;
  const budget = n * opt.dummyBudget;
  const chainStart = new Int32Array(m0).fill(-1);
  for (let e = 0; e < m0; e++) {
    const span = rank[to[e]] - rank[from[e]];
    if (span < 2 || span > opt.maxDummySpan || total - n + span - 1 > budget) continue;
    chainStart[e] = total;
    total += span - 1;
  }
  const nodeRank = new Int32Array(total);
  nodeRank.set(rank);
  const w = new Float64Array(total);
  for (let i = 0; i < n; i++) w[i] = input.widths[i];
  const segFrom: number[] = [];
  const segTo: number[] = [];
  for (let e = 0; e < m0; e++) {
    const a = from[e];
    const b = to[e];
    if (a === b) continue;
    if (chainStart[e] < 0) {
      if (rank[b] - rank[a] === 1 || rank[b] - rank[a] > 1) {
        segFrom.push(a);
        segTo.push(b);
      }
      continue;
    }
    let prev = a;
    const span = rank[b] - rank[a];
    for (let k = 0; k < span - 1; k++) {
      const d = chainStart[e] + k;
      nodeRank[d] = rank[a] + k + 1;
      segFrom.push(prev);
      segTo.push(d);
      prev = d;
    }
    segFrom.push(prev);
    segTo.push(b);
  }
  const up = csr(total, segTo, segFrom, segFrom.length); // predecessors
  const down = csr(total, segFrom, segTo, segFrom.length); // successors

  // Rows, initially in Kahn order (dummies after the real nodes of their rank).
  let maxRank = 0;
  for (let i = 0; i < total; i++) maxRank = Math.max(maxRank, nodeRank[i]);
  const rows: number[][] = Array.from({ length: maxRank + 1 }, () => []);
  for (let i = 0; i < n; i++) rows[rank[order[i]]].push(order[i]);
  for (let d = n; d < total; d++) rows[nodeRank[d]].push(d);

  const slot = new Float64Array(total);
  const setSlots = (row: number[]) => row.forEach((v, i) => (slot[v] = i));
  rows.forEach(setSlots);
  const bary = new Float64Array(total);
  const sortRow = (row: number[], adj: Csr) => {
    if (row.length < 2) return;
    for (const v of row) {
      let s = 0;
      const c = adj.start[v + 1] - adj.start[v];
      for (let k = adj.start[v]; k < adj.start[v + 1]; k++) s += slot[adj.list[k]];
      bary[v] = c > 0 ? s / c : slot[v];
    }
    row.sort((a, b) => bary[a] - bary[b] || slot[a] - slot[b]);
    setSlots(row);
  };
  for (let s = 0; s < opt.sweeps; s++) {
    for (let r = 1; r <= maxRank; r++) sortRow(rows[r], up);
    for (let r = maxRank - 1; r >= 0; r--) sortRow(rows[r], down);
  }

  const cx = assignX(rows, w, up, down, opt);
  // y: rows stacked, each as tall as its tallest node.
  const rowY = new Float64Array(maxRank + 2);
  const rowH = new Float64Array(maxRank + 1);
  for (let i = 0; i < n; i++) rowH[rank[i]] = Math.max(rowH[rank[i]], input.heights[i]);
  for (let r = 0; r <= maxRank; r++) rowY[r + 1] = rowY[r] + rowH[r] + opt.rankSep;

  let minX = Infinity;
  let maxX = -Infinity;
  for (let i = 0; i < total; i++) {
    minX = Math.min(minX, cx[i] - w[i] / 2);
    maxX = Math.max(maxX, cx[i] + w[i] / 2);
  }
  if (total === 0) minX = maxX = 0;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = cx[i] - w[i] / 2 - minX;
    y[i] = rowY[rank[i]];
  }
  const routes: Array<number[] | null> = new Array(m0).fill(null);
  for (let e = 0; e < m0; e++) {
    if (chainStart[e] < 0) continue;
    const span = rank[to[e]] - rank[from[e]];
    const pts: number[] = [];
    for (let k = 0; k < span - 1; k++) {
      const d = chainStart[e] + k;
      const r = nodeRank[d];
      pts.push(cx[d] - minX, rowY[r] + rowH[r] / 2);
    }
    if (from[e] !== input.src[e]) reversePairs(pts);
    routes[e] = pts;
  }
  return { x, y, rank, routes, width: maxX - minX, height: Math.max(0, rowY[maxRank + 1] - opt.rankSep) };
}

function reversePairs(p: number[]): void {
  for (let i = 0, j = p.length - 2; i < j; i += 2, j -= 2) {
    [p[i], p[j]] = [p[j], p[i]];
    [p[i + 1], p[j + 1]] = [p[j + 1], p[i + 1]];
  }
}

function longestPathRanks(n: number, order: Int32Array, from: Int32Array, to: Int32Array): Int32Array {
  const m = from.length;
  const rank = new Int32Array(n);
  const inc = csr(n, to, from, m);
  const out = csr(n, from, to, m);
  for (let k = 0; k < n; k++) {
    const v = order[k];
    let r = 0;
    for (let j = inc.start[v]; j < inc.start[v + 1]; j++) r = Math.max(r, rank[inc.list[j]] + 1);
    rank[v] = r;
  }
  // Sources hug their nearest consumer (a graph input or weight feeding a deep node sits just above it).
  for (let k = n - 1; k >= 0; k--) {
    const v = order[k];
    if (inc.start[v + 1] !== inc.start[v] || out.start[v + 1] === out.start[v]) continue;
    let r = Infinity;
    for (let j = out.start[v]; j < out.start[v + 1]; j++) r = Math.min(r, rank[out.list[j]] - 1);
    rank[v] = Math.max(rank[v], r);
  }
  return rank;
}

function assignX(rows: number[][], w: Float64Array, up: Csr, down: Csr, opt: LayeredOptions): Float64Array {
  const cx = new Float64Array(w.length);
  const gapOf = (a: number, b: number) =>
    (w[a] + w[b]) / 2 + (w[a] > 0 && w[b] > 0 ? opt.nodeSep : opt.nodeSep / 3);
  // Gaps of all rows in one array: row r's gaps start at gapStart[r].
  const gapStart = new Int32Array(rows.length + 1);
  for (let r = 0; r < rows.length; r++) gapStart[r + 1] = gapStart[r] + Math.max(0, rows[r].length - 1);
  const gaps = new Float64Array(gapStart[rows.length]);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    let acc = 0;
    for (let i = 0; i < row.length; i++) {
      cx[row[i]] = acc;
      if (i + 1 < row.length) acc += gaps[gapStart[r] + i] = gapOf(row[i], row[i + 1]);
    }
    for (const v of row) cx[v] -= acc / 2;
  }
  const sc = new RowScratch();
  const relax = (r: number, a: Csr, b: Csr | null) => {
    const row = rows[r];
    const n = row.length;
    sc.ensure(n);
    const target = sc.target;
    for (let i = 0; i < n; i++) {
      const v = row[i];
      let s = 0;
      let c = 0;
      for (let k = a.start[v]; k < a.start[v + 1]; k++, c++) s += cx[a.list[k]];
      if (b) for (let k = b.start[v]; k < b.start[v + 1]; k++, c++) s += cx[b.list[k]];
      target[i] = c > 0 ? s / c : cx[v];
    }
    if (n === 1) {
      cx[row[0]] = target[0];
      return;
    }
    const out = sc.out;
    placeRow(target, gaps, out, n, gapStart[r], sc);
    for (let i = 0; i < n; i++) cx[row[i]] = out[i];
  };
  for (let s = 0; s < opt.sweeps; s++) {
    for (let r = 1; r < rows.length; r++) relax(r, up, null);
    for (let r = rows.length - 2; r >= 0; r--) relax(r, down, null);
  }
  for (let r = 0; r < rows.length; r++) relax(r, up, down);
  return cx;
}
