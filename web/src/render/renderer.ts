// The WebGL2 renderer: four instanced layers (boxes, edges, detail boxes, glyphs) and a grid, drawn on
// demand (only when the camera or the scene changed), never through a UI framework's render cycle.
import { FloatBuilder, InstancedLayer, checkProgram, program } from './gl';
import { GLYPH_FS, GLYPH_VS, GRID_FS, GRID_VS, LINE_FS, LINE_VS, RECT_FS, RECT_VS } from './shaders';
import { THEME } from './colors';
import {
  GLYPH_STRIDE,
  LINE_STRIDE,
  RECT_STRIDE,
  Scene,
  lodFor,
  sharedAtlas,
  type Lod,
  type Region,
  type SceneState,
} from './scene';

export interface Camera {
  scale: number;
  tx: number;
  ty: number;
}

export interface FrameStats {
  frames: number;
  cacheRenders: number; // frames that re-rendered the scene (the others were a blit of the cache)
  partialRenders: number; // frames that re-rendered only the changed part of the cache
  marginRenders: number; // frames that rendered the cache's margins after a re-render of the view
  moves: number; // frames that only moved the canvas (a CSS transform: no WebGL work at all)
  presents: number; // frames that copied the cache (or the part in view) to the canvas
  recentres: number; // cache re-renders around a camera that came to rest near the cache's edge
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
  gl!: WebGL2RenderingContext;
  camera: Camera = { scale: 1, tx: 0, ty: 0 };
  scene: Scene | null = null;
  state: SceneState = { selected: new Set(), selectedEdge: -1 };
  showGrid = true;
  overlay: number[] = []; // extra segments (the link being dragged), world coordinates
  stats: FrameStats = {
    frames: 0,
    cacheRenders: 0,
    partialRenders: 0,
    marginRenders: 0,
    moves: 0,
    presents: 0,
    recentres: 0,
    frameMs: [],
    intervals: [],
    drawn: { items: 0, rects: 0, lines: 0, glyphs: 0 },
    lod: 'near',
  };
  onFrame: (() => void) | null = null;
  /** The view's size in device pixels: the stage the canvas is shown in. The canvas itself is larger
   *  (the cached view: the view plus a margin on every side), placed so that its middle is the view. */
  viewW = 1;
  viewH = 1;

  private progs!: Record<'rect' | 'line' | 'glyph' | 'grid', WebGLProgram>;
  private baseRects!: InstancedLayer;
  private edges!: InstancedLayer;
  private detailRects!: InstancedLayer;
  private glyphs!: InstancedLayer;
  private overlayLines!: InstancedLayer;
  private b = {
    rects: new FloatBuilder(RECT_STRIDE),
    lines: new FloatBuilder(LINE_STRIDE),
    detail: new FloatBuilder(RECT_STRIDE),
    glyphs: new FloatBuilder(GLYPH_STRIDE),
    overlay: new FloatBuilder(LINE_STRIDE, 16),
  };
  private baseLod: string | null = null;
  private baseRegion: Region | null = null;
  private cache: Cache | null = null;
  private atlasTex!: WebGLTexture;
  private pending = false;
  private lastFrame = 0;

  /** The WebGL2 context and what lives in it are made on first use (prepare): under software rendering
   *  that is the slowest step of opening the page (0.1-0.5 s of context, shaders and font atlas), made
   *  while the server answers the first requests instead of before sending them. */
  constructor(readonly canvas: HTMLCanvasElement) {}

  /** Makes the context, programs, layers and atlas if not made yet. */
  prepare(): void {
    if (this.ready) return;
    this.ready = true;
    const canvas = this.canvas;
    // Opaque (alpha: false): the compositor draws the canvas without blending and skips what lies under
    // it. With an alpha channel, every frame of a pan (a blit) was blended over the page by the headless
    // compositor under SwiftShader, and translucent pixels showed the page through them.
    const gl = canvas.getContext('webgl2', {
      alpha: false,
      antialias: false,
      premultipliedAlpha: false,
      preserveDrawingBuffer: false,
    });
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
  private ready = false;

  private uploadAtlas(): void {
    const gl = this.gl;
    const tex = gl.createTexture()!;
    this.atlasTex = tex;
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.texImage2D(
      gl.TEXTURE_2D,
      0,
      gl.RGBA,
      gl.RGBA,
      gl.UNSIGNED_BYTE,
      sharedAtlas().canvas as HTMLCanvasElement,
    );
    gl.generateMipmap(gl.TEXTURE_2D);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
  }

  /** A new scene. `changed`: the world rectangles where it differs from the current one (an edit that
   *  moved little): only those are rasterised again, as invalidateRegions does; else all of it. */
  setScene(scene: Scene | null, changed?: Region[]): void {
    this.scene = scene;
    if (changed && scene) this.invalidateRegions(changed);
    else this.invalidate();
  }

  /** The scene's contents or selection changed: rebuild the layers on the next frame. */
  invalidate(): void {
    this.baseLod = null;
    this.dirty = [];
    this.margins = [];
    if (this.cache) this.cache.valid = false;
    this.request();
  }

  /** Only what lies in these world rectangles changed (nodes patched in place, same geometry): the next
   *  frame rebuilds the layers but rasterises just that part of the cached view (a scissor), which under
   *  software WebGL is most of a frame's cost. */
  invalidateRegions(rects: Region[]): void {
    this.baseLod = null;
    if (this.cache?.valid) this.dirty.push(...rects);
    this.request();
  }
  private dirty: Region[] = [];
  /** Parts of the cached view around the view not rendered yet (world rectangles). */
  private margins: Region[] = [];

  request(): void {
    if (this.pending) return;
    this.pending = true;
    this.frameId = requestAnimationFrame((t) => {
      this.pending = false;
      this.frame(t);
    });
  }
  private frameId = 0;

  /** Whether a frame is asked for and not drawn yet. */
  get framePending(): boolean {
    return this.pending;
  }

  /** Draws the frame asked for now instead of at the next animation frame: an edit shows as soon as
   *  its scene is ready. Under load a headless browser's next animation frame was 15-95 ms away for a
   *  frame that takes 1-8 ms; the compositor presents what is drawn with its next frame either way. */
  flush(): void {
    if (!this.pending) return;
    cancelAnimationFrame(this.frameId);
    this.pending = false;
    this.frame(performance.now());
  }

  /** Waits for the GPU to finish the frame (reads one pixel back): honest first-render timing. */
  finish(): void {
    this.prepare();
    const px = new Uint8Array(4);
    this.gl.readPixels(0, 0, 1, 1, this.gl.RGBA, this.gl.UNSIGNED_BYTE, px);
  }

  /** FNV-1a hash of the cached view's pixels (tests: a partial re-render must equal a full one). */
  cacheDigest(): number {
    this.prepare();
    if (this.margins.length) this.draw(); // the whole cached view, margins included
    const c = this.cache;
    if (!c) return 0;
    const gl = this.gl;
    const px = new Uint8Array(c.w * c.h * 4);
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, c.fb);
    gl.readPixels(0, 0, c.w, c.h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, null);
    let h = 0x811c9dc5;
    for (let i = 0; i < px.length; i++) h = Math.imul(h ^ px[i], 0x01000193);
    return h >>> 0;
  }

  /** The visible world rectangle. */
  view(): [number, number, number, number] {
    const c = this.camera;
    return [-c.tx / c.scale, -c.ty / c.scale, (this.viewW - c.tx) / c.scale, (this.viewH - c.ty) / c.scale];
  }

  toWorld(px: number, py: number): [number, number] {
    return [(px - this.camera.tx) / this.camera.scale, (py - this.camera.ty) / this.camera.scale];
  }

  /** Measures the stage and sizes the canvas to the cached view around it (see cacheLayout). */
  resize(): void {
    const dpr = window.devicePixelRatio || 1;
    const host = this.canvas.parentElement ?? this.canvas;
    const w = Math.max(1, Math.round(host.clientWidth * dpr));
    const h = Math.max(1, Math.round(host.clientHeight * dpr));
    const box = cacheLayout(w, h);
    this.viewW = w;
    this.viewH = h;
    if (this.canvas.width !== box.w || this.canvas.height !== box.h) {
      this.canvas.width = box.w;
      this.canvas.height = box.h;
      this.shown = ''; // a resized canvas is cleared: the next frame presents again
    }
    Object.assign(this.canvas.style, {
      left: `${-box.mx / dpr}px`,
      top: `${-box.my / dpr}px`,
      width: `${box.w / dpr}px`,
      height: `${box.h / dpr}px`,
    });
    // Before the first scene there is nothing to draw: a frame then would only wait for the shaders'
    // compilation (hundreds of ms under SwiftShader) while the graph's requests wait behind it.
    if (this.scene) this.request();
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

  /** Draws now. The canvas is the cached view (the view plus half a view on every side); while the
   *  camera only pans within it and nothing changed, a frame just moves the canvas with a CSS transform
   *  (the compositor's work, no WebGL call). Otherwise the changed part of the cache is rendered again and
   *  presented. Under SwiftShader a blit and present per pan frame cost the GPU process a frame's fill. */
  draw(): void {
    const W = this.viewW;
    const H = this.viewH;
    const { scale, tx, ty } = this.camera;
    const { mx, my, w: cw, h: ch } = cacheLayout(W, H);
    const c = this.cache;
    const [dx, dy] = c ? cacheOffset(this.camera, c) : [0, 0];
    const valid =
      c &&
      c.valid &&
      c.w === cw &&
      c.h === ch &&
      c.scale === scale &&
      Math.abs(dx) <= mx &&
      Math.abs(dy) <= my;
    const moved = dx !== this.shownAt[0] || dy !== this.shownAt[1];
    if (valid && !this.dirty.length && !this.overlay.length && this.shown !== 'overlay') {
      if (this.shown === 'cache' && !this.margins.length) {
        this.stats.moves++;
        this.moveCanvas(dx, dy);
        this.scheduleRecentre();
        return;
      }
      if (this.shown === 'view' && !moved) {
        // The canvas shows the view already: the margins go into the cache, nothing is presented
        // (a present copies and clears the canvas's buffer, four times the view's pixels).
        if (this.margins.length) this.renderMargins();
        return;
      }
    }
    this.prepare();
    if (!valid) {
      // The view first, the margins around it (3 times its pixels) with the next frame, or before a pan
      // needs them: under software rendering the fill is most of a frame's cost, so a new graph, a zoom
      // step or a changed scene shows in a quarter of the time.
      this.dirty = [];
      const cam = { scale, tx: tx + mx, ty: ty + my };
      const w = (x: number, y: number): [number, number] => [(x - cam.tx) / scale, (y - cam.ty) / scale];
      const [x0, y0] = w(0, 0);
      const [x1, y1] = w(cw, ch);
      const [vx0, vy0] = w(mx, my);
      const [vx1, vy1] = w(mx + W, my + H);
      this.renderCache(cw, ch, cam, mx || my ? [[vx0, vy0, vx1, vy1]] : undefined);
      this.margins = mx || my ? marginStrips([x0, y0, x1, y1], [vx0, vy0, vx1, vy1]) : [];
      if (this.margins.length) this.request();
      this.cache!.tx = tx;
      this.cache!.ty = ty;
      this.stats.cacheRenders++;
    } else if (this.dirty.length) {
      this.renderCache(c.w, c.h, { scale, tx: c.tx + mx, ty: c.ty + my }, [...this.dirty, ...this.margins]);
      this.dirty = [];
      this.margins = [];
      this.stats.partialRenders++;
    } else if (this.margins.length) this.renderMargins();
    // A pan (the camera moved since the last present) needs the whole cache on the canvas, margins
    // rendered; otherwise only what the view shows is copied, and the first frame that moves the canvas
    // copies the rest.
    const [ox, oy] = cacheOffset(this.camera, this.cache!);
    const whole = valid && moved && !this.margins.length;
    this.present(mx, my, whole ? null : [mx - ox, my - oy, W, H]);
  }

  private renderMargins(): void {
    const c = this.cache!;
    const { mx, my } = cacheLayout(this.viewW, this.viewH);
    this.prepare();
    this.renderCache(c.w, c.h, { scale: c.scale, tx: c.tx + mx, ty: c.ty + my }, this.margins);
    this.margins = [];
    this.stats.marginRenders++;
  }

  /** Copies the cache to the canvas (its drawing buffer is not preserved between presents), or only
   *  `part` of it (x, y from the top, w, h), draws the overlay over it and places the canvas. */
  private present(mx: number, my: number, part: [number, number, number, number] | null): void {
    const gl = this.gl;
    const cc = this.cache!;
    const [x, yTop, w, h] = part ?? [0, 0, cc.w, cc.h];
    const y = cc.h - yTop - h; // GL's rows go up
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, cc.fb);
    gl.bindFramebuffer(gl.DRAW_FRAMEBUFFER, null);
    gl.blitFramebuffer(x, y, x + w, y + h, x, y, x + w, y + h, gl.COLOR_BUFFER_BIT, gl.NEAREST);
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, null);
    // The overlay is drawn in the canvas's pixels, which the transform moves with the cache.
    if (this.overlay.length)
      this.drawOverlay(cc.w, cc.h, { scale: cc.scale, tx: cc.tx + mx, ty: cc.ty + my });
    this.shown = this.overlay.length ? 'overlay' : part ? 'view' : 'cache';
    this.shownAt = cacheOffset(this.camera, cc);
    this.stats.presents++;
    this.moveCanvas(...this.shownAt);
  }

  /** Shows the cache moved by (dx, dy) device pixels from where it was rendered. */
  private moveCanvas(dx: number, dy: number): void {
    const dpr = window.devicePixelRatio || 1;
    const t = dx || dy ? `translate(${dx / dpr}px, ${dy / dpr}px)` : '';
    if (t !== this.transform) this.canvas.style.transform = this.transform = t;
  }

  /** Once the camera rests far from where the cache was rendered, renders it again around the view, so
   *  that the next pan has a full margin on every side (the picture on screen stays the same). */
  private scheduleRecentre(): void {
    clearTimeout(this.recentreTimer);
    if (!this.offCentre()) return;
    this.recentreTimer = window.setTimeout(() => {
      if (!this.offCentre()) return; // rendered again meanwhile (a zoom, an edit)
      this.cache!.valid = false;
      this.stats.recentres++;
      this.request();
    }, RECENTRE_REST_MS);
  }

  /** Whether the view is more than RECENTRE_AFTER of the margin away from the valid cache's centre. */
  private offCentre(): boolean {
    const c = this.cache;
    if (!c?.valid) return false;
    const { mx, my } = cacheLayout(this.viewW, this.viewH);
    const dx = Math.abs(this.camera.tx - c.tx);
    const dy = Math.abs(this.camera.ty - c.ty);
    return c.scale === this.camera.scale && (dx > mx * RECENTRE_AFTER || dy > my * RECENTRE_AFTER);
  }
  private recentreTimer = 0;
  /** What the canvas shows: '' (nothing presented yet, or cleared by a resize), the whole cache, only
   *  the part in view (at offset shownAt), or the cache with an overlay (the next frame presents again
   *  to take it off). */
  private shown: '' | 'view' | 'cache' | 'overlay' = '';
  private shownAt: [number, number] = [NaN, NaN];
  private transform = '';

  private drawOverlay(W: number, H: number, cam: Camera): void {
    const gl = this.gl;
    const o = this.b.overlay;
    o.reset();
    for (let k = 0; k + 3 < this.overlay.length; k += 4)
      o.push(
        this.overlay[k],
        this.overlay[k + 1],
        this.overlay[k + 2],
        this.overlay[k + 3],
        ...THEME.link,
        2.5,
      );
    this.overlayLines.upload(o.data, o.count);
    gl.viewport(0, 0, W, H);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    this.setView(this.progs.line, cam, W, H);
    this.overlayLines.draw();
  }

  private setView(p: WebGLProgram, cam: Camera, W: number, H: number): void {
    const gl = this.gl;
    checkProgram(gl, p);
    gl.useProgram(p);
    gl.uniform3f(gl.getUniformLocation(p, 'u_view'), cam.scale, cam.tx, cam.ty);
    gl.uniform2f(gl.getUniformLocation(p, 'u_size'), W, H);
  }

  /** Renders the scene into the cache framebuffer (the view plus a margin on every side). */
  private renderCache(W: number, H: number, cam: Camera, only?: Region[]): void {
    const gl = this.gl;
    const c = this.ensureCache(W, H);
    const boxes = only ? scissorBoxes(only, cam, W, H) : [null];
    if (!boxes.length) return; // nothing changed inside the cached view
    const lod = lodFor(cam.scale);
    this.stats.lod = lod;
    const region: Region = [
      -cam.tx / cam.scale,
      -cam.ty / cam.scale,
      (W - cam.tx) / cam.scale,
      (H - cam.ty) / cam.scale,
    ];
    // The detail layers (terminals, text) only for what this pass draws: the view alone on a graph's
    // first frame (a quarter of the cache's items), an edit's rectangles; the base covers the cache.
    this.rebuild(lod, region, only ? detailRegion(only, region, cam.scale) : region);
    gl.bindFramebuffer(gl.FRAMEBUFFER, c.fb);
    gl.viewport(0, 0, W, H);
    // One pass per changed box: each clears and redraws just its pixels (the instance data is shared).
    for (const box of boxes) {
      if (box) {
        gl.enable(gl.SCISSOR_TEST);
        gl.scissor(...box);
      }
      this.drawLayers(cam, W, H);
    }
    gl.disable(gl.SCISSOR_TEST);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    c.scale = cam.scale;
    c.valid = true;
  }

  private drawLayers(cam: Camera, W: number, H: number): void {
    const gl = this.gl;
    const bg = THEME.background;
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    if (this.showGrid) {
      this.setView(this.progs.grid, cam, W, H);
      gl.uniform1f(gl.getUniformLocation(this.progs.grid, 'u_step'), gridStep(cam.scale));
      gl.uniform4f(gl.getUniformLocation(this.progs.grid, 'u_color'), ...THEME.grid);
      gl.drawArrays(gl.TRIANGLES, 0, 3);
    }
    this.setView(this.progs.line, cam, W, H);
    this.edges.draw();
    this.setView(this.progs.rect, cam, W, H);
    this.baseRects.draw();
    this.detailRects.draw();
    this.setView(this.progs.glyph, cam, W, H);
    // Bound here, not once: creating the cache's texture rebinds unit 0.
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.atlasTex);
    this.glyphs.draw();
  }

  private ensureCache(W: number, H: number): Cache {
    const gl = this.gl;
    if (this.cache && this.cache.w === W && this.cache.h === H) return this.cache;
    if (this.cache) {
      gl.deleteFramebuffer(this.cache.fb);
      gl.deleteTexture(this.cache.tex);
    }
    const tex = gl.createTexture()!;
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA8, W, H);
    const fb = gl.createFramebuffer()!;
    gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    this.cache = { fb, tex, w: W, h: H, scale: 0, tx: 0, ty: 0, valid: false };
    return this.cache;
  }

  /** Instance data for `region`: the base layers cover a wider area (rebuilt when the region leaves it,
   *  or all of the graph when it is small enough or zoomed out), the detail layers just the region. */
  private rebuild(lod: Lod, region: Region, detail: Region): void {
    const s = this.scene;
    if (!s) {
      for (const layer of [this.baseRects, this.edges, this.detailRects, this.glyphs]) layer.count = 0;
      this.stats.drawn = { items: 0, rects: 0, lines: 0, glyphs: 0 };
      return;
    }
    // Far out the base depends on the scale too (boxes merged per pixel cell): rebuilt per zoom step.
    const scale = this.camera.scale;
    const baseLod = lod === 'far' ? `far:${scale < 0.05 ? Math.round(Math.log2(scale) * 4) : ''}` : 'near';
    const covered = this.baseRegion === null || contains(this.baseRegion, region);
    if (this.baseLod !== baseLod || !covered) {
      const wide = s.n <= WHOLE_SCENE_ITEMS || lod === 'far';
      const [x0, y0, x1, y1] = region;
      const w = x1 - x0;
      const h = y1 - y0;
      this.baseRegion = wide ? null : [x0 - w, y0 - h, x1 + w, y1 + h];
      s.buildBase(
        this.state,
        lod === 'far' ? 'far' : 'near',
        scale,
        this.b.rects,
        this.b.lines,
        this.baseRegion ?? undefined,
      );
      this.baseRects.upload(this.b.rects.data, this.b.rects.count);
      this.edges.upload(this.b.lines.data, this.b.lines.count);
      this.baseLod = baseLod;
    }
    const items = s.buildDetail(detail, lod, this.b.detail, this.b.glyphs);
    this.detailRects.upload(this.b.detail.data, this.b.detail.count);
    this.glyphs.upload(this.b.glyphs.data, this.b.glyphs.count);
    this.stats.drawn = {
      items: lod === 'far' ? s.n : items,
      rects: this.baseRects.count + this.detailRects.count,
      lines: this.edges.count,
      glyphs: this.glyphs.count,
    };
  }
}

interface Cache {
  fb: WebGLFramebuffer;
  tex: WebGLTexture;
  w: number;
  h: number;
  scale: number;
  tx: number;
  ty: number;
  valid: boolean;
}

/** The cache covers the view plus this fraction of it on each side: panning within it moves the canvas. */
const CACHE_MARGIN = 0.5;
/** A camera resting this long, moved more than this fraction of the margin, re-renders the cache. */
const RECENTRE_REST_MS = 300;
const RECENTRE_AFTER = 0.5;
const MAX_CACHE_SIDE = 8192;

/** Where the cache, rendered for the camera `at`, is shown for `camera` (same scale): moved by this many
 *  device pixels, whole ones (so edges and text stay on the pixel grid they were rendered on). A world
 *  point x is at x * scale + at.tx + mx in the cache, and the canvas sits at -mx + dx in the view. */
export function cacheOffset(camera: Camera, at: { tx: number; ty: number }): [number, number] {
  return [Math.round(camera.tx - at.tx), Math.round(camera.ty - at.ty)];
}

/** The cached view for a view of w x h device pixels: its size and the margins on each side. */
export function cacheLayout(w: number, h: number): { w: number; h: number; mx: number; my: number } {
  // Narrower margins on a very large view (a 4K screen at 2x): the canvas and the cache texture stay
  // within MAX_CACHE_SIDE pixels a side (textures that size are supported everywhere WebGL2 runs here).
  const mx = Math.max(0, Math.min(Math.round(w * CACHE_MARGIN), Math.floor((MAX_CACHE_SIDE - w) / 2)));
  const my = Math.max(0, Math.min(Math.round(h * CACHE_MARGIN), Math.floor((MAX_CACHE_SIDE - h) / 2)));
  return { w: w + 2 * mx, h: h + 2 * my, mx, my };
}
/** Scenes up to this many items keep all their boxes and edges in the base layers. */
const WHOLE_SCENE_ITEMS = 4000;

/** The parts of `outer` around `inner` (inside it): above, below, left and right of it. */
export function marginStrips(outer: Region, inner: Region): Region[] {
  const [x0, y0, x1, y1] = outer;
  const [a0, b0, a1, b1] = inner;
  const strips: Region[] = [
    [x0, y0, x1, b0],
    [x0, b1, x1, y1],
    [x0, b0, a0, b1],
    [a1, b0, x1, b1],
  ];
  return strips.filter(([p0, q0, p1, q1]) => p1 > p0 && q1 > q0);
}

/** Decorations (terminals, badges, outlines) reach this far out of an item's rectangle, in world units
 *  (or pixels, whichever is more): items that close to a drawn region are drawn with it. */
const DECORATION_SLACK = 12;

/** The world rectangle whose items a pass drawing `only` (inside `region`) needs: their union, widened
 *  by the decorations' reach, within `region`. */
export function detailRegion(only: Region[], region: Region, scale: number): Region {
  const pad = Math.max(DECORATION_SLACK, DECORATION_SLACK / scale);
  const u: Region = [Infinity, Infinity, -Infinity, -Infinity];
  for (const r of only) {
    if (!r.every(Number.isFinite)) continue; // an item that has no place (hidden, removed): nothing to draw
    [u[0], u[1], u[2], u[3]] = [Math.min(u[0], r[0]), Math.min(u[1], r[1]), Math.max(u[2], r[2]), Math.max(u[3], r[3])]; // prettier-ignore
  }
  if (u[0] > u[2]) return [region[0], region[1], region[0], region[1]];
  return [
    Math.max(region[0], u[0] - pad),
    Math.max(region[1], u[1] - pad),
    Math.min(region[2], u[2] + pad),
    Math.min(region[3], u[3] + pad),
  ];
}

function contains(outer: Region, inner: Region): boolean {
  return outer[0] <= inner[0] && outer[1] <= inner[1] && outer[2] >= inner[2] && outer[3] >= inner[3];
}

/** Most scissor passes per frame: past this the changed boxes are drawn as their union. */
const MAX_PASSES = 6;

/** GL scissor rectangles (x, y from the bottom, w, h) of the cache covering the world rectangles
 *  `rects` seen through `cam`, with a pixel of slack: the pixel boxes clipped to the cache, overlapping
 *  ones merged, at most MAX_PASSES (else their union). Empty when none of it is inside the cache. */
export function scissorBoxes(
  rects: Region[],
  cam: Camera,
  W: number,
  H: number,
): Array<[number, number, number, number]> {
  let boxes: Region[] = []; // pixel x0, y0 (from the top), x1, y1
  for (const [a, b, c, d] of rects) {
    const left = Math.max(0, Math.floor(a * cam.scale + cam.tx) - 1);
    const right = Math.min(W, Math.ceil(c * cam.scale + cam.tx) + 1);
    const top = Math.max(0, Math.floor(b * cam.scale + cam.ty) - 1);
    const bottom = Math.min(H, Math.ceil(d * cam.scale + cam.ty) + 1);
    if (left < right && top < bottom) boxes.push([left, top, right, bottom]);
  }
  boxes = mergeOverlapping(boxes);
  if (boxes.length > MAX_PASSES) {
    const u: Region = [Infinity, Infinity, -Infinity, -Infinity];
    for (const r of boxes) [u[0], u[1], u[2], u[3]] = [Math.min(u[0], r[0]), Math.min(u[1], r[1]), Math.max(u[2], r[2]), Math.max(u[3], r[3])]; // prettier-ignore
    boxes = [u];
  }
  return boxes.map(([l, t, r, b]) => [l, H - b, r - l, b - t]);
}

/** Replaces overlapping boxes by their union until none overlap (few boxes: quadratic is fine). */
function mergeOverlapping(boxes: Region[]): Region[] {
  if (boxes.length > 64) {
    const u: Region = [Infinity, Infinity, -Infinity, -Infinity];
    for (const r of boxes) [u[0], u[1], u[2], u[3]] = [Math.min(u[0], r[0]), Math.min(u[1], r[1]), Math.max(u[2], r[2]), Math.max(u[3], r[3])]; // prettier-ignore
    return [u];
  }
  const out = boxes.map((b) => [...b] as Region);
  for (let merged = true; merged;) {
    merged = false;
    for (let i = 0; i < out.length && !merged; i++) {
      for (let j = i + 1; j < out.length; j++) {
        const a = out[i];
        const b = out[j];
        if (a[0] > b[2] || b[0] > a[2] || a[1] > b[3] || b[1] > a[3]) continue;
        out[i] = [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
        out.splice(j, 1);
        merged = true;
        break;
      }
    }
  }
  return out;
}

function push(a: number[], v: number): void {
  a.push(v);
  if (a.length > 240) a.shift();
}

/** Grid spacing in world units: 20 at 1:1, coarser when zoomed out so lines stay >= 10 px apart. */
function gridStep(scale: number): number {
  let step = 20;
  while (step * scale < 10) step *= 5;
  return step;
}
