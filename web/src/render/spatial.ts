// A uniform grid over item rectangles, for culling (which items does the view show) and picking.
// Building is O(items), a query O(cells touched + items in them); items larger than many cells
// (expanded groups) are kept in a separate short list instead of being stamped into every cell.
// An edit moves a few items: the grid is patched (remove them where they were, rebind to the new
// rectangles, insert them where they are) instead of rebuilt, which on 50,000 items was most of an edit.
export class SpatialGrid {
  private cells = new Map<number, number[]>();
  private big: number[] = [];
  private stamp: Uint32Array;
  private epoch = 0;

  constructor(
    private x: Float32Array,
    private y: Float32Array,
    private w: Float32Array,
    private h: Float32Array,
    items: Iterable<number>,
    private readonly cell = 400,
  ) {
    this.stamp = new Uint32Array(x.length);
    for (const i of items) this.insert(i);
  }

  private key(cx: number, cy: number): number {
    return (cx + 32768) * 65536 + (cy + 32768);
  }

  /** Calls f with each cell key item i's rectangle covers, or returns false when it is a big item. */
  private cellsOf(i: number, f: (key: number) => void): boolean {
    const c = this.cell;
    const x0 = Math.floor(this.x[i] / c);
    const y0 = Math.floor(this.y[i] / c);
    const x1 = Math.floor((this.x[i] + this.w[i]) / c);
    const y1 = Math.floor((this.y[i] + this.h[i]) / c);
    if ((x1 - x0 + 1) * (y1 - y0 + 1) > 16) return false;
    for (let cx = x0; cx <= x1; cx++) for (let cy = y0; cy <= y1; cy++) f(this.key(cx, cy));
    return true;
  }

  /** Adds item i at its rectangle in the arrays bound now (nothing when its x is NaN: not shown). */
  insert(i: number): void {
    if (Number.isNaN(this.x[i])) return;
    const added = this.cellsOf(i, (k) => {
      const list = this.cells.get(k);
      if (list) list.push(i);
      else this.cells.set(k, [i]);
    });
    if (!added) this.big.push(i);
  }

  /** Takes item i out, found at its rectangle in the arrays bound now (the one it was inserted at). */
  remove(i: number): void {
    let found = false;
    const drop = (list: number[] | undefined) => {
      const at = list ? list.indexOf(i) : -1;
      if (at < 0) return;
      list![at] = list![list!.length - 1];
      list!.pop();
      found = true;
    };
    if (!Number.isNaN(this.x[i]) && !this.cellsOf(i, (k) => drop(this.cells.get(k)))) drop(this.big);
    if (found || Number.isNaN(this.x[i])) return;
    // Moved since it was inserted (a node dragged moves its rectangle in place): look everywhere.
    for (const list of this.cells.values()) while (list.includes(i)) drop(list);
    while (this.big.includes(i)) drop(this.big);
  }

  /** The item rectangles from now on (items keep their indices; move those whose rectangle changed
   *  with remove before and insert after). */
  rebind(x: Float32Array, y: Float32Array, w: Float32Array, h: Float32Array): void {
    [this.x, this.y, this.w, this.h] = [x, y, w, h];
    if (this.stamp.length < x.length) this.stamp = new Uint32Array(Math.max(x.length, 2 * this.stamp.length));
  }

  /** Renumbers every item held: item i becomes to[i] (dropped when -1). */
  renumber(to: Int32Array): void {
    const map = (list: number[]) => {
      let k = 0;
      for (const i of list) if (to[i] >= 0) list[k++] = to[i];
      list.length = k;
    };
    for (const [key, list] of this.cells) {
      map(list);
      if (!list.length) this.cells.delete(key);
    }
    map(this.big);
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
