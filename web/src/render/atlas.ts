// Glyph atlas: printable ASCII plus a few symbols, drawn once with canvas 2D in a monospace font at a
// large size and mipmapped, so text stays legible from 40% to 400% zoom. (A signed-distance-field atlas
// would be sharper when magnified; level of detail hides text when zoomed out, so plain coverage does.)
export const ATLAS_CHARS =
  ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~…×·';

export interface Atlas {
  canvas: HTMLCanvasElement | OffscreenCanvas;
  uv: Map<string, [number, number, number, number]>;
  fallback: [number, number, number, number];
}

const PX = 40; // font size in the atlas
const CELL_W = Math.ceil(PX * 0.6) + 4;
const CELL_H = Math.ceil(PX * 1.25);
const COLS = 16;

export function buildAtlas(): Atlas {
  const rows = Math.ceil(ATLAS_CHARS.length / COLS);
  const w = 512;
  const h = 512;
  if (rows * CELL_H > h || COLS * CELL_W > w) throw new Error('glyph atlas does not fit its texture');
  const canvas = document.createElement('canvas');
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d')!;
  ctx.font = `${PX}px "DejaVu Sans Mono", "Liberation Mono", monospace`;
  ctx.textBaseline = 'middle';
  ctx.fillStyle = '#fff';
  const uv = new Map<string, [number, number, number, number]>();
  [...ATLAS_CHARS].forEach((ch, i) => {
    const x = (i % COLS) * CELL_W;
    const y = Math.floor(i / COLS) * CELL_H;
    ctx.fillText(ch, x + 2, y + CELL_H / 2);
    uv.set(ch, [x / w, y / h, CELL_W / w, CELL_H / h]);
  });
  return { canvas, uv, fallback: uv.get('?')! };
}

/** Size in world units of one glyph quad for a font size: the cell's aspect, advance 0.6 em. */
export function glyphBox(size: number): [number, number, number] {
  const advance = size * 0.6;
  return [(advance * CELL_W) / (PX * 0.6), (size * CELL_H) / PX, advance];
}

/** Horizontal offset of the glyph inside its cell (the 2px left padding), in world units. */
export function glyphInset(size: number): number {
  return (2 * size) / PX;
}
