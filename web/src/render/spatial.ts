// A uniform grid over item rectangles, for culling (which items does the view show) and picking.
// Building is O(items), a query O(cells touched + items in them); items larger than many cells
// (expanded groups) are kept in a separate short list instead of being stamped into every cell.
export class SpatialGrid {
  private cells = new Map<number, number[]>();
  private big: number[] = [];
  private stamp: Uint32Array;
  private epoch = 0;

  constructor(
    private readonly x: Float32Array,
    private readonly y: Float32Array,
    private readonly w: Float32Array,
    private readonly h: Float32Array,
    items: Iterable<number>,
    private readonly cell = 400,
  ) {
    this.stamp = new Uint32Array(x.length);
    for (const i of items) this.insert(i);
  }

  private key(cx: number, cy: number): number {
    return (cx + 32768) * 65536 + (cy + 32768);
  }

  private insert(i: number): void {
    if (Number.isNaN(this.x[i])) return;
    const c = this.cell;
    const x0 = Math.floor(this.x[i] / c);
    const y0 = Math.floor(this.y[i] / c);
    const x1 = Math.floor((this.x[i] + this.w[i]) / c);
    const y1 = Math.floor((this.y[i] + this.h[i]) / c);
    if ((x1 - x0 + 1) * (y1 - y0 + 1) > 16) {
      this.big.push(i);
      return;
    }
    for (let cx = x0; cx <= x1; cx++) {
      for (let cy = y0; cy <= y1; cy++) {
        const k = this.key(cx, cy);
        const list = this.cells.get(k);
        if (list) list.push(i);
        else this.cells.set(k, [i]);
      }
    }
  }

  private hits(i: number, x0: number, y0: number, x1: number, y1: number): boolean {
    return this.x[i] <= x1 && this.x[i] + this.w[i] >= x0 && this.y[i] <= y1 && this.y[i] + this.h[i] >= y0;
  }

  /** Items whose rectangles intersect [x0, x1] x [y0, y1]. */
  query(x0: number, y0: number, x1: number, y1: number, out: number[] = []): number[] {
    const e = ++this.epoch;
    const c = this.cell;
    const cx0 = Math.floor(x0 / c);
    const cx1 = Math.floor(x1 / c);
    const cy0 = Math.floor(y0 / c);
    const cy1 = Math.floor(y1 / c);
    if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1) > this.cells.size) {
      for (const list of this.cells.values()) this.collect(list, e, x0, y0, x1, y1, out);
    } else {
      for (let cx = cx0; cx <= cx1; cx++) {
        for (let cy = cy0; cy <= cy1; cy++) {
          const list = this.cells.get(this.key(cx, cy));
          if (list) this.collect(list, e, x0, y0, x1, y1, out);
        }
      }
    }
    this.collect(this.big, e, x0, y0, x1, y1, out);
    return out;
  }

  private collect(list: number[], e: number, x0: number, y0: number, x1: number, y1: number, out: number[]) {
    for (const i of list) {
      if (this.stamp[i] === e) continue;
      this.stamp[i] = e;
      if (this.hits(i, x0, y0, x1, y1)) out.push(i);
    }
  }
}
