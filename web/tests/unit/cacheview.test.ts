// The cached view behind panning (render/renderer.ts): the canvas is the view plus a margin on every
// side, and a pan moves it by whole pixels. A world point must land where the camera puts it.
import { describe, expect, it } from 'vitest';
import { cacheLayout, cacheOffset, detailRegion } from '../../src/render/renderer';

describe('cached view', () => {
  it('is the view plus half of it on every side, for odd sizes too', () => {
    expect(cacheLayout(1000, 600)).toEqual({ w: 2000, h: 1200, mx: 500, my: 300 });
    const odd = cacheLayout(751, 585);
    expect(odd.w).toBe(751 + 2 * odd.mx);
    expect(odd.h).toBe(585 + 2 * odd.my);
    expect(Math.abs(odd.mx - 751 / 2)).toBeLessThanOrEqual(0.5);
    expect(cacheLayout(1, 1)).toEqual({ w: 3, h: 3, mx: 1, my: 1 });
  });

  it('keeps narrower margins on a very large view, never past 8192 pixels a side', () => {
    expect(cacheLayout(7000, 4000)).toEqual({ w: 8192, h: 8000, mx: 596, my: 2000 });
    expect(cacheLayout(9000, 100).mx).toBe(0); // no margin left: panning then re-renders
    expect(cacheLayout(9000, 100).w).toBe(9000);
  });

  it('shows a world point where the camera puts it after a pan, within half a pixel', () => {
    const { mx, my } = cacheLayout(800, 600);
    const at = { scale: 0.8, tx: 123.25, ty: -47.5 }; // the camera the cache was rendered for
    for (const [px, py] of [
      [0, 0],
      [37, -12],
      [-399.6, 299.4],
      [0.5, -0.5],
    ]) {
      const camera = { scale: at.scale, tx: at.tx + px, ty: at.ty + py };
      const [dx, dy] = cacheOffset(camera, at);
      for (const [x, y] of [
        [0, 0],
        [512.3, -77.7],
      ]) {
        // In the cache, then moved with the canvas (placed at -mx, -my and translated by dx, dy).
        const shownX = x * at.scale + at.tx + mx - mx + dx;
        const shownY = y * at.scale + at.ty + my - my + dy;
        expect(Math.abs(shownX - (x * camera.scale + camera.tx))).toBeLessThanOrEqual(0.5);
        expect(Math.abs(shownY - (y * camera.scale + camera.ty))).toBeLessThanOrEqual(0.5);
        expect(Number.isInteger(dx) && Number.isInteger(dy)).toBe(true);
      }
    }
  });

  it('builds the detail of a pass for its rectangles and what decorates them, within the cache', () => {
    const cache: [number, number, number, number] = [0, 0, 1000, 800];
    // Two edited rectangles: their union, widened by 12 world units (more when zoomed out: 12 pixels).
    expect(
      detailRegion(
        [
          [100, 100, 150, 120],
          [300, 50, 320, 90],
        ],
        cache,
        1,
      ),
    ).toEqual([88, 38, 332, 132]);
    expect(detailRegion([[100, 100, 150, 120]], cache, 0.5)).toEqual([76, 76, 174, 144]);
    // Never past the cache: the view of a first frame at its edge.
    expect(detailRegion([[-5, 700, 1010, 820]], cache, 2)).toEqual([0, 688, 1000, 800]);
    // A changed region without a place (a removed node's NaN rectangle) does not spoil the others.
    expect(
      detailRegion(
        [
          [NaN, NaN, NaN, NaN],
          [100, 100, 150, 120],
        ],
        cache,
        1,
      ),
    ).toEqual([88, 88, 162, 132]);
  });
});
