// window.__tessera: scene state for tests and the benchmark, so they assert on what is drawn (nodes,
// frame times, graph version) without reading pixels, and find nodes and terminals on screen.
import type { App } from './app/app';
import type { ApiNode } from './api/types';
import type { ExportOptions } from './export/export';

export function installHook(app: App): void {
  const c = app.canvas;
  const r = c.renderer;
  /** Page (CSS) coordinates of a world point. */
  const toPage = (x: number, y: number): [number, number] => {
    const rect = c.viewRect();
    const k = rect.width / r.viewW;
    return [
      rect.left + (x * r.camera.scale + r.camera.tx) * k,
      rect.top + (y * r.camera.scale + r.camera.ty) * k,
    ];
  };
  const leafByName = (name: string) => c.vm?.leaves.findIndex((l) => l.name === name && !l.removed) ?? -1;
  const hook = {
    get ready() {
      return !!c.scene && app.busy === 0 && r.stats.frames > 0;
    },
    get busy() {
      return app.busy;
    },
    get graphVersion() {
      return app.graph?.version ?? -1;
    },
    get document() {
      return app.doc;
    },
    get diagnostics() {
      return app.diagnostics;
    },
    /** Whether the finished diagnostics of a partial edit answer are still on their way. */
    get diagnosticsPending() {
      return app.diagnosticsPending;
    },
    get graphPath() {
      return app.graphPath;
    },
    openSubgraph: (id: number) => app.openSubgraph(id),
    get graph() {
      return app.graph;
    },
    undo: () => app.undo(),
    /** Runs an edit command ({type: 'undo'} and {type: 'redo'}: those) and resolves when a frame showing
     *  its result has been drawn: ms taken. */
    async editTimed(cmd: { type: string } & Record<string, unknown>): Promise<number> {
      const t0 = performance.now();
      await (cmd.type === 'undo' ? app.undo() : cmd.type === 'redo' ? app.redo() : app.run(cmd));
      // The edit drew its frame as it ended (Renderer.flush); a frame still asked for (a layout that
      // finished later) runs at the next animation frame. finish() waits for the GPU to complete it.
      // The next animation frame after that is the compositor's.
      if (r.framePending) await new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
      r.finish();
      app.editMarks.rendered = performance.now();
      await new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
      r.finish();
      app.editMarks.drawn = performance.now();
      return performance.now() - t0;
    },
    /** The cached view's pixel hash after the next frame; `full` re-renders all of it first. */
    async cacheDigest(full = false): Promise<number> {
      if (full) r.invalidate();
      await new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
      return r.cacheDigest();
    },
    /** Patches a node of the graph shown as an edit answer would (the offline fixture has no server). */
    async patchNode(name: string, fields: Record<string, unknown>): Promise<boolean> {
      const g = app.graph;
      const i = g?.nodes.findIndex((n) => n.name === name) ?? -1;
      if (!g || i < 0) return false;
      g.nodes[i] = { ...g.nodes[i], ...fields };
      app.forgetNodeIndex();
      return c.patchNodes(g, [g.nodes[i]]);
    },
    /** Sets a node's inputs as a connect or disconnect answer would (offline fixture). */
    async relinkNode(name: string, inputs: string[]): Promise<boolean> {
      const g = app.graph;
      const i = g?.nodes.findIndex((n) => n.name === name) ?? -1;
      if (!g || i < 0) return false;
      g.nodes[i] = { ...g.nodes[i], inputs };
      app.forgetNodeIndex();
      return c.relinkNodes(g, [g.nodes[i]]);
    },
    /** Appends a node to the graph shown as an add_node answer would (offline fixture). */
    async appendNode(node: ApiNode): Promise<boolean> {
      const g = app.graph;
      if (!g) return false;
      g.nodes.push(node);
      app.forgetNodeIndex();
      return c.appendNodes(g, [node]);
    },
    /** Removes a node from the graph shown as a remove_node answer would (offline fixture). */
    async removeNode(name: string): Promise<boolean> {
      const g = app.graph;
      const n = g?.nodes.find((x) => x.name === name);
      if (!g || !n) return false;
      g.nodes = g.nodes.filter((x) => x !== n);
      app.forgetNodeIndex();
      return c.removeNodes(g, [n.id], []);
    },
    /** An initializer's values as the server has them (up to `limit`). */
    initializer: (name: string, limit = 1 << 16) =>
      app.client!.initializer(app.doc!.id, name, limit, app.graphPath),
    /** One element of a node's tensor attribute (flat index), fetched alone. */
    attributeAt: async (node: string, attr: string, i: number) => {
      const n = app.graph?.nodes.find((x) => x.name === node);
      if (!n) return undefined;
      const w = { offset: i, limit: 1, rows: 1, stride: 1 };
      return (await app.client!.attributeWindow(app.doc!.id, n.id, attr, w, app.graphPath)).values?.[0];
    },
    /** One element of an initializer (flat index), fetched alone. */
    initializerAt: async (name: string, i: number) =>
      (
        await app.client!.initializerWindow(
          app.doc!.id,
          name,
          { offset: i, limit: 1, rows: 1, stride: 1 },
          app.graphPath,
        )
      ).values?.[0],
    /** How the server made the last edit's diagnostics: {incremental, checked_nodes, ms}. */
    checkInfo: async () =>
      ((await app.client!.diagnostics(app.doc!.id)) as unknown as { check: Record<string, unknown> }).check,
    get lastError() {
      return app.lastError;
    },
    get layoutMs() {
      return c.layoutMs;
    },
    get firstRenderMs() {
      return app.firstRenderMs;
    },
    get editMarks() {
      return app.editMarks;
    },
    get marks() {
      return c.marks;
    },
    get stats() {
      return r.stats;
    },
    /** The CSS transform moving the cached view (panning): '' when it is shown where it was rendered. */
    get transform() {
      return r.canvas.style.transform;
    },
    get camera() {
      return { ...r.camera };
    },
    get nodeCount() {
      return c.vm?.leaves.filter((l) => !l.removed).length ?? 0;
    },
    get selected() {
      return [...c.selected].map((i) => c.vm!.leaves[i].name);
    },
    leaves() {
      return (c.vm?.leaves ?? [])
        .map((l, i) => ({
          name: l.name,
          id: l.id,
          op: l.op,
          kind: l.kind,
          removed: !!l.removed,
          visible: !Number.isNaN(c.scene?.lay.itemX[i] ?? NaN),
        }))
        .filter((l) => !l.removed);
    },
    nodeCenter(name: string): [number, number] | null {
      const i = leafByName(name);
      if (i < 0 || !c.scene || Number.isNaN(c.scene.lay.itemX[i])) return null;
      const [x, y, w, h] = c.scene.leafRect(i);
      return toPage(x + w / 2, y + h / 2);
    },
    /** World position (top left) of a leaf: where the layout or the user's pin put it. */
    leafPos(name: string): [number, number] | null {
      const i = leafByName(name);
      if (i < 0 || !c.scene || Number.isNaN(c.scene.lay.itemX[i])) return null;
      return [c.scene.lay.itemX[i], c.scene.lay.itemY[i]];
    },
    terminal(name: string, side: 'in' | 'out', port: number): [number, number] | null {
      const i = leafByName(name);
      if (i < 0 || !c.scene) return null;
      return toPage(...c.scene.termPos(i, side, port));
    },
    toPage,
    node(name: string) {
      return app.graph?.nodes.find((n) => n.name === name) ?? null;
    },
    groupCenter(path: string): [number, number] | null {
      const k = c.groups?.path.indexOf(path) ?? -1;
      if (k < 0 || !c.scene) return null;
      const [x, y, w, h] = c.scene.leafRect(c.scene.n + k);
      if (Number.isNaN(x)) return null;
      return toPage(x + w / 2, y + Math.min(h / 2, 12));
    },
    /** Group paths (name scopes; calls of local functions: '.../\u0192 FUNCTION CALL') and expansion. */
    groups() {
      return (c.groups?.path ?? []).map((path, k) => ({ path, expanded: !!c.expanded[k] }));
    },
    /** The k-th local function of the document, as the server has it. */
    localFunction: (k: number) => app.client!.localFunction(app.doc!.id, k),
    get visibleItems() {
      return c.scene?.lay.stats.visibleItems ?? 0;
    },
    select(names: string[]) {
      c.select(names.map(leafByName).filter((i) => i >= 0));
    },
    focus: (id: number) => c.focusNode(id),
    expandAll: (on: boolean) => c.expandAll(on),
    fit: () => c.fit(),
    pan: (dx: number, dy: number) => c.pan(dx, dy),
    zoomAt: (f: number, x: number, y: number) => c.zoomAt(f, x, y),
    setCamera(scale: number, tx: number, ty: number) {
      Object.assign(r.camera, { scale, tx, ty });
      r.request();
    },
    get exportOptions() {
      return app.exportOptions;
    },
    exportImage: async (kind: 'svg' | 'png' | 'jpeg', options?: Partial<ExportOptions>) => {
      const b = await app.exportImage(kind, { ...app.exportOptions, ...options });
      if (!b) return null;
      const text = kind === 'svg' ? await b.text() : '';
      return {
        type: b.type,
        size: b.size,
        head: text.slice(0, 200),
        svg: text,
        pixels: await cornerPixel(b),
      };
    },
  };
  (window as unknown as { __tessera: typeof hook }).__tessera = hook;
}

/** RGBA of a raster export's top-left pixel (the background, in the margin), [] for SVG. */
async function cornerPixel(b: Blob): Promise<number[]> {
  if (b.type === 'image/svg+xml') return [];
  const img = await createImageBitmap(b);
  const c = new OffscreenCanvas(1, 1);
  const ctx = c.getContext('2d')!;
  ctx.drawImage(img, 0, 0);
  return [...ctx.getImageData(0, 0, 1, 1).data];
}
