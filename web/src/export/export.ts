// Export of the whole graph (not just the view) as SVG, PNG or JPEG. Both paths draw the same
// primitives the WebGL layers draw, at full detail: rounded boxes, edge segments and text runs.
import { THEME, hex, type Rgba } from '../render/colors';
import { FloatBuilder } from '../render/gl';
import {
  LINE_STRIDE,
  RECT_STRIDE,
  GLYPH_STRIDE,
  type Scene,
  type SceneState,
  type TextRun,
} from '../render/scene';

/** background: the scheme's own, none (transparent; JPEG has no alpha and gets white), white, or a
 *  colour '#rrggbb'. scheme: the canvas's dark colours, or light ones for print (operator colours,
 *  terminal and severity colours stay). */
export type ExportBackground = 'scheme' | 'transparent' | 'white' | `#${string}`;
export type ColorScheme = 'dark' | 'light';

export interface ExportOptions {
  background: ExportBackground;
  grid: boolean;
  scheme: ColorScheme;
  margin: number;
}

export const DEFAULT_EXPORT: ExportOptions = {
  background: 'scheme',
  grid: false,
  scheme: 'dark',
  margin: 40,
};

/** The light scheme: each dark theme colour the canvas uses for chrome, and its light counterpart. */
const LIGHT: Array<[Rgba, Rgba]> = [
  [THEME.background, hex('#ffffff')],
  [THEME.grid, hex('#000000', 0.08)],
  [THEME.body, hex('#f7f8fa')],
  [THEME.bodyStroke, hex('#9aa1ad')],
  [THEME.text, hex('#1c1d21')],
  [THEME.textDim, hex('#4d5460')],
  [THEME.edge, hex('#4d5666', 0.9)],
  [THEME.edgeFar, hex('#4d5666', 0.6)],
  [THEME.groupFill, hex('#5b8def', 0.08)],
  [THEME.groupCollapsed, hex('#dbe4f7')],
  [THEME.termFree, hex('#ffffff')],
  [THEME.termFreeStroke, hex('#4d5460')],
];

/** Maps a primitive's colour to the scheme's. */
function schemeColors(scheme: ColorScheme): (c: ArrayLike<number>) => ArrayLike<number> {
  if (scheme === 'dark') return (c) => c;
  const map = new Map(LIGHT.map(([dark, light]) => [css(dark), light]));
  return (c) => map.get(css(c)) ?? c;
}

/** The background fill, or null for none. */
export function backgroundFill(o: ExportOptions, jpeg: boolean): Rgba | null {
  const b = o.background;
  if (b === 'transparent') return jpeg ? hex('#ffffff') : null;
  if (b === 'white') return hex('#ffffff');
  if (b === 'scheme') return o.scheme === 'light' ? hex('#ffffff') : THEME.background;
  if (!/^#[0-9a-fA-F]{6}$/.test(b)) throw new Error(`background colour '${b}' is not #rrggbb`);
  return hex(b);
}

interface Prims {
  rects: Float32Array;
  rectCount: number;
  lines: Float32Array;
  lineCount: number;
  text: TextRun[];
  box: [number, number, number, number];
}

function collect(scene: Scene, state: SceneState, margin: number): Prims {
  const rects = new FloatBuilder(RECT_STRIDE);
  const lines = new FloatBuilder(LINE_STRIDE);
  const detail = new FloatBuilder(RECT_STRIDE);
  const glyphs = new FloatBuilder(GLYPH_STRIDE);
  scene.buildBase(state, 'near', 1, rects, lines);
  const text: TextRun[] = [];
  scene.textSink = text;
  try {
    const [x0, y0, x1, y1] = scene.bounds;
    scene.buildDetail([x0 - 1e6, y0 - 1e6, x1 + 1e6, y1 + 1e6], 'near', detail, glyphs);
  } finally {
    scene.textSink = null;
  }
  const all = new Float32Array(rects.length + detail.length);
  all.set(rects.data.subarray(0, rects.length));
  all.set(detail.data.subarray(0, detail.length), rects.length);
  const [bx0, by0, bx1, by1] = scene.bounds;
  return {
    rects: all,
    rectCount: rects.count + detail.count,
    lines: lines.data,
    lineCount: lines.count,
    text,
    box: [bx0 - margin, by0 - margin - 10, bx1 + margin, by1 + margin + 10],
  };
}

const css = (c: ArrayLike<number>) =>
  `rgba(${Math.round(c[0] * 255)},${Math.round(c[1] * 255)},${Math.round(c[2] * 255)},${+c[3].toFixed(3)})`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function exportSvg(scene: Scene, state: SceneState, o: ExportOptions): string {
  const p = collect(scene, state, o.margin);
  const [x0, y0, x1, y1] = p.box;
  const w = x1 - x0;
  const hgt = y1 - y0;
  const col = schemeColors(o.scheme);
  const bg = backgroundFill(o, false);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w.toFixed(0)}" height="${hgt.toFixed(0)}" viewBox="${x0} ${y0} ${w} ${hgt}">`,
  ];
  if (bg)
    out.push(`<rect class="background" x="${x0}" y="${y0}" width="${w}" height="${hgt}" fill="${css(bg)}"/>`);
  if (o.grid) {
    out.push(
      `<defs><pattern id="grid" width="20" height="20" patternUnits="userSpaceOnUse"><path d="M 20 0 L 0 0 0 20" fill="none" stroke="${css(col(THEME.grid))}"/></pattern></defs>`,
    );
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${hgt}" fill="url(#grid)"/>`);
  }
  out.push('<g class="edges" fill="none">');
  for (let i = 0; i < p.lineCount; i++) {
    const v = p.lines.subarray(i * LINE_STRIDE, (i + 1) * LINE_STRIDE);
    out.push(
      `<line x1="${v[0]}" y1="${v[1]}" x2="${v[2]}" y2="${v[3]}" stroke="${css(col(v.subarray(4, 8)))}" stroke-width="${v[8]}"/>`,
    );
  }
  out.push('</g><g class="nodes">');
  for (let i = 0; i < p.rectCount; i++) {
    const v = p.rects.subarray(i * RECT_STRIDE, (i + 1) * RECT_STRIDE);
    const r = Math.min(v[12], v[2] / 2, v[3] / 2);
    const stroke = v[13] > 0 ? ` stroke="${css(col(v.subarray(8, 12)))}" stroke-width="${v[13]}"` : '';
    out.push(
      `<rect x="${v[0]}" y="${v[1]}" width="${v[2]}" height="${v[3]}" rx="${r}" fill="${css(col(v.subarray(4, 8)))}"${stroke}/>`,
    );
  }
  out.push('</g><g class="text" font-family="DejaVu Sans Mono, monospace">');
  for (const t of p.text)
    out.push(
      `<text x="${t.x}" y="${t.cy}" font-size="${t.size}" dominant-baseline="central" fill="${css(col(t.col))}">${esc(t.s)}</text>`,
    );
  out.push('</g></svg>');
  return out.join('\n');
}

/** Paints the whole graph on a 2D canvas, scaled so its larger side is at most maxSide pixels. */
export function exportRaster(
  scene: Scene,
  state: SceneState,
  o: ExportOptions,
  type: 'image/png' | 'image/jpeg',
  maxSide = 8192,
): Promise<Blob> {
  const p = collect(scene, state, o.margin);
  const [x0, y0, x1, y1] = p.box;
  const k = Math.min(2, maxSide / Math.max(x1 - x0, y1 - y0));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.ceil((x1 - x0) * k));
  canvas.height = Math.max(1, Math.ceil((y1 - y0) * k));
  const ctx = canvas.getContext('2d')!;
  const col = schemeColors(o.scheme);
  const bg = backgroundFill(o, type === 'image/jpeg');
  if (bg) {
    ctx.fillStyle = css(bg);
    ctx.fillRect(0, 0, canvas.width, canvas.height);
  }
  ctx.setTransform(k, 0, 0, k, -x0 * k, -y0 * k);
  if (o.grid) {
    ctx.strokeStyle = css(col(THEME.grid));
    ctx.lineWidth = 1 / k;
    ctx.beginPath();
    for (let x = Math.ceil(x0 / 20) * 20; x < x1; x += 20) {
      ctx.moveTo(x, y0);
      ctx.lineTo(x, y1);
    }
    for (let y = Math.ceil(y0 / 20) * 20; y < y1; y += 20) {
      ctx.moveTo(x0, y);
      ctx.lineTo(x1, y);
    }
    ctx.stroke();
  }
  for (let i = 0; i < p.lineCount; i++) {
    const v = p.lines.subarray(i * LINE_STRIDE, (i + 1) * LINE_STRIDE);
    ctx.strokeStyle = css(col(v.subarray(4, 8)));
    ctx.lineWidth = v[8];
    ctx.beginPath();
    ctx.moveTo(v[0], v[1]);
    ctx.lineTo(v[2], v[3]);
    ctx.stroke();
  }
  for (let i = 0; i < p.rectCount; i++) {
    const v = p.rects.subarray(i * RECT_STRIDE, (i + 1) * RECT_STRIDE);
    ctx.beginPath();
    ctx.roundRect(v[0], v[1], v[2], v[3], Math.min(v[12], v[2] / 2, v[3] / 2));
    ctx.fillStyle = css(col(v.subarray(4, 8)));
    ctx.fill();
    if (v[13] > 0) {
      ctx.strokeStyle = css(col(v.subarray(8, 12)));
      ctx.lineWidth = v[13];
      ctx.stroke();
    }
  }
  ctx.textBaseline = 'middle';
  for (const t of p.text) {
    ctx.font = `${t.size}px "DejaVu Sans Mono", monospace`;
    ctx.fillStyle = css(col(t.col));
    ctx.fillText(t.s, t.x, t.cy);
  }
  return new Promise((resolve, reject) =>
    canvas.toBlob(
      (b) => (b ? resolve(b) : reject(new Error('the browser could not encode the image'))),
      type,
      0.92,
    ),
  );
}
