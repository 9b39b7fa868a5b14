// The canvas against the static fixture (no server): rendering, level of detail, camera, groups, export.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { artifact, ready } from './util';

async function open(page: Page, query: string): Promise<void> {
  await page.goto(`/?${query}`);
  await ready(page);
}

const hook = <T>(page: Page, f: string) => page.evaluate(`window.__tessera.${f}`) as Promise<T>;

test('draws a scoped 2,000-node model collapsed, expands a group in place', async ({ page }) => {
  await open(page, 'fixture=synthetic&nodes=2000&scoped=1');
  expect(await hook(page, 'nodeCount')).toBe(2002);
  // Opened with groups expanded breadth-first up to a budget of visible items, never all 2,002.
  expect(await hook<number>(page, 'visibleItems')).toBeLessThan(500);
  await page.getByTestId('menu-view').click();
  await page.getByTestId('action-collapse-all').click();
  await expect.poll(() => hook<number>(page, 'visibleItems')).toBeLessThan(20);
  const collapsedItems = await hook<number>(page, 'visibleItems');
  await page.keyboard.press('f');
  await page.screenshot({ path: artifact('render-collapsed.png') });
  const at = await hook<[number, number]>(page, `groupCenter('/block.0')`);
  await page.mouse.dblclick(at[0], at[1]);
  await expect.poll(() => hook<number>(page, 'visibleItems')).toBeGreaterThan(collapsedItems);
  await page.screenshot({ path: artifact('render-expanded.png') });
});

test('camera: Ctrl+wheel zoom, middle-drag pan, fit, zoom to a dragged box; text only when near', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=300');
  const box = (await page.getByTestId('canvas').boundingBox())!;
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  // A tall graph opens at its top at a readable zoom; F shows all of it.
  expect(await hook<number>(page, 'camera.scale')).toBe(0.8);
  await page.keyboard.press('f');
  await expect.poll(() => hook<number>(page, 'camera.scale')).toBeLessThan(0.3);
  const cam0 = await hook<{ scale: number; tx: number }>(page, 'camera');
  // The scene's statistics change with the next frame drawn, not with the camera: wait for it.
  await expect.poll(() => hook<string>(page, 'stats.lod')).toBe('far');
  await expect.poll(() => hook<number>(page, 'stats.drawn.glyphs')).toBe(0);

  await page.mouse.move(cx, cy);
  await page.keyboard.down('Control');
  for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  await expect.poll(() => hook<number>(page, 'camera.scale')).toBeGreaterThan(cam0.scale * 4);
  await expect.poll(() => hook<number>(page, 'stats.drawn.glyphs')).toBeGreaterThan(0);
  await page.screenshot({ path: artifact('render-near.png') });

  const tx = await hook<number>(page, 'camera.tx');
  await page.mouse.move(cx, cy);
  await page.mouse.down({ button: 'middle' });
  await page.mouse.move(cx + 120, cy, { steps: 4 });
  await page.mouse.up({ button: 'middle' });
  expect(await hook<number>(page, 'camera.tx')).toBeCloseTo(tx + 120, 0);

  await page.keyboard.press('f');
  await expect.poll(() => hook<number>(page, 'camera.scale')).toBeCloseTo(cam0.scale, 5);

  await page.keyboard.down('Alt');
  await page.mouse.move(cx - 40, cy - 40);
  await page.mouse.down();
  await page.mouse.move(cx + 40, cy + 40, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Alt');
  await expect.poll(() => hook<number>(page, 'camera.scale')).toBeGreaterThan(cam0.scale * 3);
});

test('selects with a click and a marquee', async ({ page }) => {
  await open(page, 'fixture=synthetic&nodes=40');
  await page.evaluate('window.__tessera.setCamera(1, 40, 10)');
  const names = (await hook<Array<{ name: string; visible: boolean }>>(page, 'leaves()')).map((l) => l.name);
  const c = await hook<[number, number]>(page, `nodeCenter(${JSON.stringify(names[1])})`);
  await page.mouse.click(c[0], c[1]);
  expect(await hook<string[]>(page, 'selected')).toEqual([names[1]]);
  const box = (await page.getByTestId('canvas').boundingBox())!;
  await page.mouse.move(box.x + 2, box.y + 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 2, box.y + box.height - 2, { steps: 5 });
  await page.mouse.up();
  expect((await hook<string[]>(page, 'selected')).length).toBeGreaterThan(2);
});

test('exports the whole graph as SVG, PNG and JPEG', async ({ page }) => {
  await open(page, 'fixture=synthetic&nodes=200&scoped=1');
  for (const [id, ext] of [
    ['export-svg', 'svg'],
    ['export-png', 'png'],
    ['export-jpeg', 'jpg'],
  ]) {
    await page.getByTestId('menu-file').click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId(`action-${id}`).click(),
    ]);
    const path = artifact(`export.${ext}`);
    await download.saveAs(path);
    const bytes = readFileSync(path);
    if (ext === 'svg') {
      const text = bytes.toString('utf8');
      expect(text.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(text).toContain('layer.0'); // group labels, whole graph (not just the view)
      expect(text).toContain('</svg>');
    } else if (ext === 'jpg') {
      expect(bytes.subarray(0, 3).toString('hex')).toBe('ffd8ff');
    } else {
      expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(bytes.readUInt32BE(16)).toBeGreaterThan(100); // width from the IHDR chunk
    }
  }
});

test('an edit that keeps the links re-renders only the changed node, pixel for pixel as a full render', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=2000');
  const target = (await hook<Array<{ name: string; id: number; op: string }>>(page, 'leaves()')).find(
    (l) => l.op === 'Relu',
  )!;
  await hook(page, `focus(${target.id})`); // centred at 80% or more, where names are drawn
  await hook(page, 'pan(-150, 220)'); // off centre: a scissor upside down would miss it
  await expect.poll(() => hook<string>(page, 'stats.lod')).toBe('near');
  const margins = await hook<number>(page, 'stats.marginRenders');
  const before = await hook<number>(page, 'cacheDigest(true)');
  // A full re-render draws the view, then the cached margins around it (in another pass); a margin pass
  // the pan above left pending may land in between, so at least one more.
  expect(await hook<number>(page, 'stats.marginRenders')).toBeGreaterThan(margins);
  const partial = await hook<number>(page, 'stats.partialRenders');
  const renders = await hook<number>(page, 'stats.cacheRenders');
  const renamed = `${target.name.slice(0, -1)}Z`;
  expect(
    await hook(
      page,
      `patchNode(${JSON.stringify(target.name)}, ${JSON.stringify({ name: renamed, severity: 'error' })})`,
    ),
  ).toBe(true);
  const after = await hook<number>(page, 'cacheDigest()');
  expect(await hook<number>(page, 'stats.partialRenders')).toBe(partial + 1);
  expect(await hook<number>(page, 'stats.cacheRenders')).toBe(renders); // no full re-render
  expect(after).not.toBe(before);
  expect(await hook<number>(page, 'cacheDigest(true)')).toBe(after);
  await page.screenshot({ path: artifact('render-patched.png') });
  // Linking differently is not a patch: the canvas rebuilds (setGraph) instead.
  expect(await hook(page, `patchNode(${JSON.stringify(renamed)}, {"inputs": []})`)).toBe(false);
});

test('an added node floats where it is placed and a removed one goes, each re-rendering only what changed', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=2000');
  type L = { name: string; id: number; op: string };
  const target = (await hook<L[]>(page, 'leaves()')).find((l) => l.op === 'Relu')!;
  const node = await hook<{ outputs: string[]; scope: string }>(page, `node(${JSON.stringify(target.name)})`);
  await hook(page, `focus(${target.id})`);
  await expect.poll(() => hook<string>(page, 'stats.lod')).toBe('near');
  const before = await hook<number>(page, 'cacheDigest(true)');
  const pos = await hook<[number, number]>(page, `leafPos(${JSON.stringify(target.name)})`);
  const renders = await hook<number>(page, 'stats.cacheRenders');
  const partial = await hook<number>(page, 'stats.partialRenders');
  const extra = {
    id: 900001,
    name: 'extra',
    op_type: 'Relu',
    domain: '',
    scope: node.scope,
    inputs: [node.outputs[0]],
    outputs: ['extra_out'],
    attributes: [],
  };
  expect(await hook(page, `appendNode(${JSON.stringify(extra)})`)).toBe(true);
  const added = await hook<number>(page, 'cacheDigest()');
  expect(await hook<number>(page, 'stats.cacheRenders')).toBe(renders); // no full re-render
  expect(await hook<number>(page, 'stats.partialRenders')).toBe(partial + 1);
  expect(await hook<number>(page, 'marks.regions')).toBeGreaterThan(0);
  expect(added).not.toBe(before);
  expect(await hook<[number, number] | null>(page, 'leafPos("extra")')).not.toBeNull();
  expect(await hook(page, `leafPos(${JSON.stringify(target.name)})`)).toEqual(pos); // nothing else moved
  expect(await hook<number>(page, 'cacheDigest(true)')).toBe(added);
  await page.screenshot({ path: artifact('render-added.png') });
  // Removing it again gives back the picture before, pixel for pixel, re-rendering only its part.
  const renders2 = await hook<number>(page, 'stats.cacheRenders');
  expect(await hook(page, 'removeNode("extra")')).toBe(true);
  const removed = await hook<number>(page, 'cacheDigest()');
  expect(await hook<number>(page, 'stats.cacheRenders')).toBe(renders2);
  expect(removed).toBe(before);
  expect(await hook<number>(page, 'nodeCount')).toBe(2000 + 2); // graph input and output leaves
  // Removing a node of the layout (its consumers keep reading the value, as the server leaves them).
  expect(await hook(page, `removeNode(${JSON.stringify(target.name)})`)).toBe(true);
  const gone = await hook<number>(page, 'cacheDigest()');
  expect(gone).not.toBe(before);
  expect(await hook<number>(page, 'cacheDigest(true)')).toBe(gone);
});

test('a node disconnected and connected again re-renders only what changed, pixel for pixel as a full render', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=2000');
  type L = { name: string; id: number; op: string };
  const target = (await hook<L[]>(page, 'leaves()')).find((l) => l.op === 'Relu')!;
  const node = await hook<{ outputs: string[]; scope: string }>(page, `node(${JSON.stringify(target.name)})`);
  await hook(page, `focus(${target.id})`);
  await expect.poll(() => hook<string>(page, 'stats.lod')).toBe('near');
  const extra = {
    id: 900002,
    name: 'extra',
    op_type: 'Relu',
    domain: '',
    scope: node.scope,
    inputs: [node.outputs[0]],
    outputs: ['extra_out'],
    attributes: [],
  };
  expect(await hook(page, `appendNode(${JSON.stringify(extra)})`)).toBe(true);
  const linked = await hook<number>(page, 'cacheDigest()');
  const pos = await hook<[number, number]>(page, `leafPos(${JSON.stringify(target.name)})`);
  const renders = await hook<number>(page, 'stats.cacheRenders');
  const partial = await hook<number>(page, 'stats.partialRenders');
  // Disconnected: its input terminal free, the link gone; nothing laid out again, nothing else moves.
  expect(await hook(page, 'relinkNode("extra", [""])')).toBe(true);
  const cut = await hook<number>(page, 'cacheDigest()');
  expect(await hook<number>(page, 'stats.cacheRenders')).toBe(renders);
  expect(await hook<number>(page, 'stats.partialRenders')).toBe(partial + 1);
  expect(cut).not.toBe(linked);
  expect(await hook(page, `leafPos(${JSON.stringify(target.name)})`)).toEqual(pos);
  expect(await hook<number>(page, 'cacheDigest(true)')).toBe(cut);
  await page.screenshot({ path: artifact('render-disconnected.png') });
  // Connected again: the picture before, pixel for pixel.
  const renders2 = await hook<number>(page, 'stats.cacheRenders');
  expect(await hook(page, `relinkNode("extra", ${JSON.stringify([node.outputs[0]])})`)).toBe(true);
  expect(await hook<number>(page, 'cacheDigest()')).toBe(linked);
  expect(await hook<number>(page, 'stats.cacheRenders')).toBe(renders2);
});

test('export options: background, grid and colour scheme, through the dialog and for each format', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=200&scoped=1');
  type Out = { type: string; svg: string; pixels: number[] };
  const ex = (kind: string, o: object) => hook<Out>(page, `exportImage('${kind}', ${JSON.stringify(o)})`);
  const dark = await ex('svg', { background: 'scheme', grid: false, scheme: 'dark' });
  expect(dark.svg).toContain('class="background" x=');
  expect(dark.svg).toContain('fill="rgba(28,29,33,1)"'); // the canvas's background
  expect(dark.svg).not.toContain('id="grid"');
  const none = await ex('svg', { background: 'transparent', grid: true, scheme: 'dark' });
  expect(none.svg).not.toContain('class="background"');
  expect(none.svg).toContain('<pattern id="grid"');
  const light = await ex('svg', { background: 'scheme', grid: false, scheme: 'light' });
  expect(light.svg).toContain('fill="rgba(255,255,255,1)"');
  expect(light.svg).toContain('fill="rgba(28,29,33,1)">'); // text is dark on light
  expect(light.svg).not.toContain('fill="rgba(230,232,236,1)"'); // the dark scheme's text colour
  expect((await ex('png', { background: 'transparent' })).pixels[3]).toBe(0);
  expect((await ex('jpeg', { background: 'transparent' })).pixels.slice(0, 3)).toEqual([255, 255, 255]);
  expect((await ex('png', { background: '#336699' })).pixels).toEqual([0x33, 0x66, 0x99, 255]);
  const refused = await page.evaluate(
    `window.__tessera.exportImage('svg', { background: '#12' }).catch((e) => e.message)`,
  );
  expect(refused).toBe("background colour '#12' is not #rrggbb");

  // The dialog: a custom colour, the grid and the light scheme for a PNG.
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-export').click();
  await page.getByTestId('export-format').selectOption('png');
  await page.getByTestId('export-background').selectOption('custom');
  await page.getByTestId('export-colour').fill('#204060');
  await page.getByTestId('export-grid').check();
  await page.getByTestId('export-scheme').selectOption('light');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-go').click(),
  ]);
  const path = artifact('export-options.png');
  await download.saveAs(path);
  expect(readFileSync(path).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  // The choices stay for File > Export (grid off here to read the background itself).
  expect(await hook(page, 'exportOptions')).toEqual({
    background: '#204060',
    grid: true,
    scheme: 'light',
    margin: 40,
  });
  expect(await hook(page, 'exportImage("png", { grid: false })')).toMatchObject({
    pixels: [0x20, 0x40, 0x60, 255],
  });
});

test('Escape cancels a layout in progress; the next one runs', async ({ page }) => {
  // 50,000 nodes expanded whole: the worker lays them out for a second or more on this machine.
  await page.goto('/?fixture=synthetic&nodes=50000&expand=all');
  const status = page.locator('#status');
  await expect(status).toHaveText(/laying out/, { timeout: 60_000 });
  await page.keyboard.press('Escape');
  await expect(status).toHaveText('layout cancelled');
  expect(await page.evaluate('window.__tessera.visibleItems')).toBe(0); // nothing was drawn
  await page.evaluate('window.__tessera.expandAll(true)');
  await ready(page, 60_000);
  expect(await hook<number>(page, 'visibleItems')).toBeGreaterThan(50_000);
});

/** The stage (the view) as the compositor shows it, once the frames asked for are drawn. */
async function stageShot(page: Page): Promise<Buffer> {
  await page.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))),
  );
  return page.getByTestId('canvas').screenshot();
}

/** Pixels of two PNGs of the same size that differ by more than `tol` in a channel (decoded in the page). */
async function pixelsDiffering(page: Page, a: Buffer, b: Buffer, tol = 8): Promise<number> {
  return page.evaluate(
    async ([x, y, t]) => {
      const rgba = async (b64: string) => {
        const img = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
        const c = new OffscreenCanvas(img.width, img.height);
        const ctx = c.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        return ctx.getImageData(0, 0, img.width, img.height).data;
      };
      const [p, q] = [await rgba(x as string), await rgba(y as string)];
      if (p.length !== q.length) return -1;
      let n = 0;
      for (let i = 0; i < p.length; i += 4)
        if (
          Math.max(Math.abs(p[i] - q[i]), Math.abs(p[i + 1] - q[i + 1]), Math.abs(p[i + 2] - q[i + 2])) >
          (t as number)
        )
          n++;
      return n;
    },
    [a.toString('base64'), b.toString('base64'), tol],
  );
}

/** Pans with the middle button by (dx, dy) CSS pixels in whole-pixel steps. */
async function middleDrag(page: Page, dx: number, dy: number, steps: number): Promise<void> {
  const box = (await page.getByTestId('canvas').boundingBox())!;
  const x = Math.round(box.x + box.width / 2);
  const y = Math.round(box.y + box.height / 2);
  await page.mouse.move(x, y);
  await page.mouse.down({ button: 'middle' });
  for (let k = 1; k <= steps; k++)
    await page.mouse.move(x + Math.round((dx * k) / steps), y + Math.round((dy * k) / steps));
  await page.mouse.up({ button: 'middle' });
}

test('panning moves the cached view without rendering it, and leaves the picture a full render gives', async ({
  page,
}) => {
  await open(page, 'fixture=synthetic&nodes=2000');
  await hook(page, 'setCamera(0.8, 300, -200)'); // names drawn; integer offsets: pixels comparable
  await hook(page, 'cacheDigest()'); // the margins rendered too
  const s0 = await hook<{ cacheRenders: number; moves: number; recentres: number }>(page, 'stats');
  // Within the cached view (half a view each side) and under the recentring distance: no WebGL frame.
  await middleDrag(page, 120, -70, 6);
  const panned = await stageShot(page);
  const s1 = await hook<{ cacheRenders: number; moves: number; marginRenders: number }>(page, 'stats');
  expect(s1.cacheRenders).toBe(s0.cacheRenders);
  expect(s1.moves).toBeGreaterThan(s0.moves);
  expect(await hook<number>(page, 'camera.tx')).toBe(420);
  await page.screenshot({ path: artifact('render-panned.png') });
  await hook(page, 'cacheDigest(true)'); // rendered again from scratch at the same camera
  const full = await stageShot(page);
  expect(await pixelsDiffering(page, panned, full)).toBe(0);

  // Past the cached view's edge: rendered again (the view first), no blank border once at rest.
  const box = (await page.getByTestId('canvas').boundingBox())!;
  const r0 = await hook<number>(page, 'stats.cacheRenders');
  await middleDrag(page, -Math.round(box.width * 0.8), Math.round(box.height * 0.7), 8);
  const far = await stageShot(page);
  expect(await hook<number>(page, 'stats.cacheRenders')).toBeGreaterThan(r0);
  await page.screenshot({ path: artifact('render-panned-far.png') });
  await hook(page, 'cacheDigest(true)');
  expect(await pixelsDiffering(page, far, await stageShot(page))).toBe(0);

  // A pan that ends far off centre (more than half the margin) re-renders the cache around the view
  // once the camera rests: the picture does not change.
  const rec = await hook<number>(page, 'stats.recentres');
  await middleDrag(page, Math.round(box.width * 0.35), 0, 5);
  const before = await stageShot(page);
  await expect.poll(() => hook<number>(page, 'stats.recentres')).toBe(rec + 1);
  const after = await stageShot(page);
  expect(await pixelsDiffering(page, before, after)).toBe(0);
  expect(await hook<string>(page, 'transform')).toBe('');

  // An edit presents only the part in view; the pan after it shows the rest of the cache, edit included.
  const names = (await hook<Array<{ name: string; kind: string }>>(page, 'leaves()')).filter(
    (l) => l.kind === 'node',
  );
  type Hook = { __tessera: { nodeCenter(n: string): [number, number] | null } };
  const shown = await page.evaluate(
    (ns) =>
      ns.find((n) => {
        const [x, y] = (window as unknown as Hook).__tessera.nodeCenter(n) ?? [0, 0];
        return x > 400 && x < 900 && y > 120 && y < 600; // in view, the cache's margins beside it
      })!,
    names.map((l) => l.name),
  );
  const presents = await hook<number>(page, 'stats.presents');
  expect(await hook(page, `patchNode(${JSON.stringify(shown)}, {"severity": "error"})`)).toBe(true);
  await stageShot(page);
  expect(await hook<number>(page, 'stats.presents')).toBe(presents + 1);
  await middleDrag(page, -90, 60, 4);
  const edited = await stageShot(page);
  await page.screenshot({ path: artifact('render-panned-after-edit.png') });
  await hook(page, 'cacheDigest(true)');
  expect(await pixelsDiffering(page, edited, await stageShot(page))).toBe(0);
});

test('the page starts the layout worker before the app script, and the app lays out with it', async ({
  page,
}) => {
  // The built index.html makes the worker in a classic script ahead of the app's module script.
  const html = await (await page.request.get('/')).text();
  const start = html.indexOf('window.__tesseraLayoutWorker=new Worker(');
  expect(start).toBeGreaterThan(0);
  expect(start).toBeLessThan(html.indexOf('<script type="module"'));
  const file = /new Worker\("\.\/(assets\/worker-[\w-]+\.js)"\)/.exec(html)![1];
  expect((await page.request.get(`/${file}`)).ok()).toBe(true);
  await open(page, 'fixture=synthetic&nodes=3000&expand=all');
  // Taken by the app (the global emptied), and it is the worker that laid the graph out.
  const state = await page.evaluate(() => ({
    defined: '__tesseraLayoutWorker' in window,
    left: (window as unknown as Record<string, unknown>).__tesseraLayoutWorker,
    marks: (window as unknown as { __tessera: { marks: Record<string, number> } }).__tessera.marks,
  }));
  expect(state.defined).toBe(true);
  expect(state.left).toBeUndefined();
  expect(state.marks.workerLoaded).toBeGreaterThan(0);
  expect(state.marks.workerLoaded).toBeLessThanOrEqual(state.marks.workerStart);
  expect(await hook<number>(page, 'nodeCount')).toBe(3002);
});
