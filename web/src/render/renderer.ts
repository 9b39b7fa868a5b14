// The WebGL2 renderer: four instanced layers (boxes, edges, detail boxes, glyphs) and a grid, drawn on
// demand (only when the camera or the scene changed), never through a UI framework's render cycle.
import { FloatBuilder, InstancedLayer, program } from './gl';
import { GLYPH_FS, GLYPH_VS, GRID_FS, GRID_VS, LINE_FS, LINE_VS, RECT_FS, RECT_VS } from './shaders';
import { THEME } from './colors';
import { GLYPH_STRIDE, LINE_STRIDE, RECT_STRIDE, Scene, lodFor, sharedAtlas, type Lod, type SceneState } from './scene';

export interface Camera {
  scale: number;
  tx: number;
  ty: number;
}

export interface FrameStats {
  frames: number;
  frameMs: number[]; // CPU time of the last frames
  intervals: number[]; // time between the last frames (rAF), for fps
  drawn: { items: number; rects: number; lines: number; glyphs: number };
  lod: Lod;
}

const RECT_ATTRS = [
  { name: 'a_rect', size: 4 },
  { name: 'a_fill', size: 4 },
  { name: 'a_stroke', size: 4 },
  { name: 'a_style', size: 2 },
];
const LINE_ATTRS = [
  { name: 'a_seg', size: 4 },
  { name: 'a_color', size: 4 },
  { name: 'a_width', size: 1 },
];
const GLYPH_ATTRS = [
  { name: 'a_rect', size: 4 },
  { name: 'a_uv', size: 4 },
  { name: 'a_color', size: 4 },
];

export class Renderer {
  readonly gl: WebGL2RenderingContext;
  camera: Camera = { scale: 1, tx: 0, ty: 0 };
  scene: Scene | null = null;
  state: SceneState = { selected: new Set(), selectedEdge: -1 };
  showGrid = true;
  overlay: number[] = []; // extra segments (the link being dragged), world coordinates
  stats: FrameStats = { frames: 0, frameMs: [], intervals: [], drawn: { items: 0, rects: 0, lines: 0, glyphs: 0 }, lod: 'near' };
  onFrame: (() => void) | null = null;

  private progs: Record<'rect' | 'line' | 'glyph' | 'grid', WebGLProgram>;
  private baseRects: InstancedLayer;
  private edges: InstancedLayer;
  private detailRects: InstancedLayer;
  private glyphs: InstancedLayer;
  private overlayLines: InstancedLayer;
  private b = {
    rects: new FloatBuilder(RECT_STRIDE),
    lines: new FloatBuilder(LINE_STRIDE),
    detail: new FloatBuilder(RECT_STRIDE),
    glyphs: new FloatBuilder(GLYPH_STRIDE),
    overlay: new FloatBuilder(LINE_STRIDE, 16),
  };
  private baseLod: Lod | null = null;
  private detailKey = '';
  private pending = false;
  private lastFrame = 0;

  constructor(readonly canvas: HTMLCanvasElement) {
    const gl = canvas.getContext('webgl2', { antialias: false, premultipliedAlpha: false, preserveDrawingBuffer: true });
    if (!gl) throw new Error('this browser has no WebGL2: the studio canvas needs it');
    this.gl = gl;
    this.progs = {
      rect: program(gl, RECT_VS, RECT_FS),
      line: program(gl, LINE_VS, LINE_FS),
      glyph: program(gl, GLYPH_VS, GLYPH_FS),
      grid: program(gl, GRID_VS, GRID_FS),
    };
    this.baseRects = new InstancedLayer(gl, this.progs.rect, RECT_ATTRS);
    this.detailRects = new InstancedLayer(gl, this.progs.rect, RECT_ATTRS);
    this.edges = new InstancedLayer(gl, this.progs.line, LINE_ATTRS);
    this.overlayLines = new InstancedLayer(gl, this.progs.line, LINE_ATTRS);
    this.glyphs = new InstancedLayer(gl, this.progs.glyph, GLYPH_ATTRS);
    this.uploadAtlas();
  }

  private uploadAtlas(): void {
    const gl = this.gl;
    const tex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, sharedAtlas().canvas as HTMLCanvasElement);
    gl.generateMipmap(gl.TEXTURE_2D);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
  }

  setScene(scene: Scene | null): void {
    this.scene = scene;
    this.invalidate();
  }

  /** The scene's contents or selection changed: rebuild the layers on the next frame. */
  invalidate(): void {
    this.baseLod = null;
    this.detailKey = '';
    this.request();
  }

  request(): void {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame((t) => {
      this.pending = false;
      this.frame(t);
    });
  }

  /** The visible world rectangle. */
  view(): [number, number, number, number] {
    const c = this.camera;
    return [-c.tx / c.scale, -c.ty / c.scale, (this.canvas.width - c.tx) / c.scale, (this.canvas.height - c.ty) / c.scale];
  }

  toWorld(px: number, py: number): [number, number] {
    return [(px - this.camera.tx) / this.camera.scale, (py - this.camera.ty) / this.camera.scale];
  }

  resize(): void {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
      this.detailKey = '';
    }
    this.request();
  }

  private frame(t: number): void {
    const t0 = performance.now();
    if (this.lastFrame) push(this.stats.intervals, t - this.lastFrame);
    this.lastFrame = t;
    this.draw();
    this.stats.frames++;
    push(this.stats.frameMs, performance.now() - t0);
    this.onFrame?.();
  }

  /** Draws now (also used by export, which renders into an offscreen view). */
  draw(): void {
    const gl = this.gl;
    const { scale, tx, ty } = this.camera;
    const lod = lodFor(scale);
    this.stats.lod = lod;
    this.rebuild(lod);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    const bg = THEME.background;
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    const setView = (p: WebGLProgram) => {
      gl.useProgram(p);
      gl.uniform3f(gl.getUniformLocation(p, 'u_view'), scale, tx, ty);
      gl.uniform2f(gl.getUniformLocation(p, 'u_size'), this.canvas.width, this.canvas.height);
    };
    if (this.showGrid) {
      setView(this.progs.grid);
      const step = gridStep(scale);
      gl.uniform1f(gl.getUniformLocation(this.progs.grid, 'u_step'), step);
      gl.uniform4f(gl.getUniformLocation(this.progs.grid, 'u_color'), ...THEME.grid);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
    setView(this.progs.line);
    this.edges.draw();
    setView(this.progs.rect);
    this.baseRects.draw();
    this.detailRects.draw();
    setView(this.progs.glyph);
    this.glyphs.draw();
    if (this.overlay.length) {
      const o = this.b.overlay;
      o.reset();
      for (let k = 0; k + 3 < this.overlay.length; k += 4)
        o.push(this.overlay[k], this.overlay[k + 1], this.overlay[k + 2], this.overlay[k + 3], ...THEME.link, 2.5);
      this.overlayLines.upload(o.data, o.count);
      setView(this.progs.line);
      this.overlayLines.draw();
    }
  }

  private rebuild(lod: Lod): void {
    const s = this.scene;
    if (!s) {
      this.baseRects.upload(this.b.rects.data, 0);
      this.edges.upload(this.b.lines.data, 0);
      this.detailRects.upload(this.b.detail.data, 0);
      this.glyphs.upload(this.b.glyphs.data, 0);
      this.stats.drawn = { items: 0, rects: 0, lines: 0, glyphs: 0 };
      return;
    }
    const baseLod = lod === 'far' ? 'far' : 'near';
    if (this.baseLod !== baseLod) {
      s.buildBase(this.state, baseLod, this.b.rects, this.b.lines);
      this.baseRects.upload(this.b.rects.data, this.b.rects.count);
      this.edges.upload(this.b.lines.data, this.b.lines.count);
      this.baseLod = baseLod;
    }
    // Detail for the view plus a margin of half a view each side, rebuilt when the view leaves it.
    const [x0, y0, x1, y1] = this.view();
    const key = `${lod}:${snap(x0, x1 - x0)}:${snap(y0, y1 - y0)}:${Math.round(Math.log2(this.camera.scale) * 4)}`;
    let items = this.stats.drawn.items;
    if (key !== this.detailKey) {
      const mx = (x1 - x0) / 2;
      const my = (y1 - y0) / 2;
      items = s.buildDetail([x0 - mx, y0 - my, x1 + mx, y1 + my], lod, this.b.detail, this.b.glyphs);
      this.detailRects.upload(this.b.detail.data, this.b.detail.count);
      this.glyphs.upload(this.b.glyphs.data, this.b.glyphs.count);
      this.detailKey = key;
    }
    this.stats.drawn = {
      items: lod === 'far' ? s.n : items,
      rects: this.baseRects.count + this.detailRects.count,
      lines: this.edges.count,
      glyphs: this.glyphs.count,
    };
  }
}

function push(a: number[], v: number): void {
  a.push(v);
  if (a.length > 240) a.shift();
}

function snap(v: number, size: number): number {
  return Math.floor(v / Math.max(size / 2, 1e-6));
}

/** Grid spacing in world units: 20 at 1:1, coarser when zoomed out so lines stay >= 10 px apart. */
function gridStep(scale: number): number {
  let step = 20;
  while (step * scale < 10) step *= 5;
  return step;
}
