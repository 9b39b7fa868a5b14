// Export of the whole graph (not just the view) as SVG, PNG or JPEG. Both paths draw the same
// primitives the WebGL layers draw, at full detail: rounded boxes, edge segments and text runs.
import { THEME, type Rgba } from '../render/colors';
import { FloatBuilder } from '../render/gl';
import {
  LINE_STRIDE,
  RECT_STRIDE,
  GLYPH_STRIDE,
  type Scene,
  type SceneState,
  type TextRun,
} from '../render/scene';

export interface ExportOptions {
  background: boolean;
  grid: boolean;
  margin: number;
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
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w.toFixed(0)}" height="${hgt.toFixed(0)}" viewBox="${x0} ${y0} ${w} ${hgt}">`,
  ];
  if (o.background)
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${hgt}" fill="${css(THEME.background)}"/>`);
  if (o.grid) {
    out.push(
      `<defs><pattern id="grid" width="20" height="20" patternUnits="userSpaceOnUse"><path d="M 20 0 L 0 0 0 20" fill="none" stroke="${css(THEME.grid)}"/></pattern></defs>`,
    );
    out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${hgt}" fill="url(#grid)"/>`);
  }
  out.push('<g class="edges" fill="none">');
  for (let i = 0; i < p.lineCount; i++) {
    const v = p.lines.subarray(i * LINE_STRIDE, (i + 1) * LINE_STRIDE);
    out.push(
      `<line x1="${v[0]}" y1="${v[1]}" x2="${v[2]}" y2="${v[3]}" stroke="${css(v.subarray(4, 8))}" stroke-width="${v[8]}"/>`,
    );
  }
  out.push('</g><g class="nodes">');
  for (let i = 0; i < p.rectCount; i++) {
    const v = p.rects.subarray(i * RECT_STRIDE, (i + 1) * RECT_STRIDE);
    const r = Math.min(v[12], v[2] / 2, v[3] / 2);
    const stroke = v[13] > 0 ? ` stroke="${css(v.subarray(8, 12))}" stroke-width="${v[13]}"` : '';
    out.push(
      `<rect x="${v[0]}" y="${v[1]}" width="${v[2]}" height="${v[3]}" rx="${r}" fill="${css(v.subarray(4, 8))}"${stroke}/>`,
    );
  }
  out.push('</g><g class="text" font-family="DejaVu Sans Mono, monospace">');
  for (const t of p.text)
    out.push(
      `<text x="${t.x}" y="${t.cy}" font-size="${t.size}" dominant-baseline="central" fill="${css(t.col)}">${esc(t.s)}</text>`,
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
  if (o.background || type === 'image/jpeg') {
    ctx.fillStyle = css(o.background ? THEME.background : [1, 1, 1, 1]);
    ctx.fillRect(0, 0, canvas.width, canvas.height);
  }
  ctx.setTransform(k, 0, 0, k, -x0 * k, -y0 * k);
  if (o.grid) {
    ctx.strokeStyle = css(THEME.grid);
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
    ctx.strokeStyle = css(v.subarray(4, 8));
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
    ctx.fillStyle = css(v.subarray(4, 8));
    ctx.fill();
    if (v[13] > 0) {
      ctx.strokeStyle = css(v.subarray(8, 12));
      ctx.lineWidth = v[13];
      ctx.stroke();
    }
  }
  ctx.textBaseline = 'middle';
  for (const t of p.text) {
    ctx.font = `${t.size}px "DejaVu Sans Mono", monospace`;
    ctx.fillStyle = css(t.col as Rgba);
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
