#!/usr/bin/env node
// Large-graph benchmark of the studio canvas in headless Chromium (Debian's, software WebGL through
// SwiftShader): for synthetic graphs of 1,000, 10,000 and 50,000 nodes, every group expanded, the time
// from navigation to the first frame drawn (page load, graph, view model, layout in the worker, scene,
// first frame) and frames per second while panning continuously, with the whole graph in view ("fit")
// and at reading zoom (1:1, text and terminals drawn). Serves web/dist itself on a loopback port.
//   node bench/studio_large_graph.mjs [--sizes 1000,10000,50000] [--runs 3] [--write docs/studio-benchmarks.md]
//   [--dist DIR] [--no-scoped]
import { createServer } from 'node:http';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import os from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const web = resolve(here, '../web');
const { chromium } = createRequire(join(web, 'package.json'))('@playwright/test');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
// --dist DIR: another build of the app (a before/after comparison on the same machine and load).
const dist = resolve(opt('dist', join(web, 'dist')));
const sizes = opt('sizes', '1000,10000,50000').split(',').map(Number);
const runs = Number(opt('runs', '3'));
const writeTo = opt('write', '');
const panSeconds = Number(opt('pan-seconds', '3'));

if (!existsSync(join(dist, 'index.html'))) {
  console.error(`no ${dist}/index.html: build the web app first (cmake --build build --target studio_web)`);
  process.exit(2);
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  const file = resolve(dist, '.' + (path === '/' ? '/index.html' : path));
  if (!file.startsWith(dist) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'Content-Type': types[extname(file)] ?? 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const version = browser.version();

/** Pans by `dx` pixels every animation frame for `seconds`; returns frames drawn per second. */
async function pan(page, seconds) {
  return page.evaluate(async (secs) => {
    const t = window.__tessera;
    const f0 = t.stats.frames;
    const m0 = t.stats.moves ?? 0;
    const t0 = performance.now();
    let dir = 1;
    await new Promise((done) => {
      const step = () => {
        const now = performance.now();
        if (now - t0 > secs * 1000) return done();
        if (Math.floor((now - t0) / 1000) % 2 !== (dir > 0 ? 0 : 1)) dir = -dir;
        t.pan(7 * dir, 3 * dir);
        requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
    const frames = t.stats.frames - f0;
    const ms = t.stats.frameMs.slice(-Math.min(frames, 200));
    ms.sort((a, b) => a - b);
    // Frames that only moved the canvas (CSS transform), not rendered or presented with WebGL.
    const moved = ((t.stats.moves ?? 0) - m0) / Math.max(1, frames);
    return { fps: (frames * 1000) / (performance.now() - t0), cpuMedianMs: ms[Math.floor(ms.length / 2)] ?? 0, moved };
  }, seconds);
}

// A first page load warms the browser up (shader compilation, worker start-up) before measuring.
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?fixture=synthetic&nodes=1000&expand=all`);
  await page.waitForFunction(() => window.__tessera?.ready && window.__tessera.firstRenderMs > 0, null, { timeout: 120000 });
  await page.close();
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const rows = [];
// Flat graphs with every node visible (the worst case), then a scoped 50,000-node graph opened as the
// studio opens models: groups collapsed past a budget of visible items.
const cases = [...sizes.map((n) => ({ n, query: `nodes=${n}&expand=all`, label: `${n.toLocaleString('en-US')}` }))];
if (!args.includes('--no-scoped'))
  cases.push({ n: 50000, query: 'nodes=50000&scoped=1', label: '50,000 in scopes, opened collapsed' });
for (const { n, query, label } of cases) {
  const res = { steps: [], first: [], layout: [], fitFps: [], nearFps: [], drawnFit: 0, drawnNear: 0, cpuFit: [], cpuNear: [], moved: [] };
  for (let r = 0; r < runs; r++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}?fixture=synthetic&${query}`);
    await page.waitForFunction(() => window.__tessera?.ready && window.__tessera.firstRenderMs > 0, null, { timeout: 120000 });
    const m = await page.evaluate(() => ({ first: window.__tessera.firstRenderMs, layout: window.__tessera.layoutMs, marks: window.__tessera.marks }));
    res.first.push(m.first);
    // The critical path's steps (ms): page and script, graph and view model, the job's wait for the
    // worker, the layout, what follows it (WebGL context, scene, first frame).
    const k = m.marks;
    res.steps.push([k.bootMs, k.viewModel - k.bootMs, k.workerStart - k.sent, k.workerEnd - k.workerStart, m.first - k.workerEnd].map(Math.round).join('/'));
    res.layout.push(m.layout);
    await page.evaluate(() => window.__tessera.fit());
    await page.waitForTimeout(200);
    const fit = await pan(page, panSeconds);
    res.fitFps.push(fit.fps);
    res.cpuFit.push(fit.cpuMedianMs);
    res.drawnFit = await page.evaluate(() => window.__tessera.visibleItems);
    await page.evaluate(() => {
      const t = window.__tessera;
      t.setCamera(1, 200, 100);
    });
    await page.waitForTimeout(200);
    const near = await pan(page, panSeconds);
    res.nearFps.push(near.fps);
    res.cpuNear.push(near.cpuMedianMs);
    res.moved.push(fit.moved, near.moved);
    res.drawnNear = await page.evaluate(() => window.__tessera.stats.drawn.items);
    await page.close();
  }
  const row = {
    nodes: n,
    label,
    firstRenderMs: median(res.first),
    layoutMs: median(res.layout),
    fitFps: median(res.fitFps),
    fitCpuMs: median(res.cpuFit),
    nearFps: median(res.nearFps),
    nearCpuMs: median(res.cpuNear),
    drawnFit: res.drawnFit,
    drawnNear: res.drawnNear,
    firstRuns: res.first.map(Math.round),
    // boot / to the view model / waiting for the worker / layout / after the layout, per run (ms)
    firstSteps: res.steps,
    fitRuns: res.fitFps.map((v) => +v.toFixed(1)),
    nearRuns: res.nearFps.map((v) => +v.toFixed(1)),
    movedShare: +median(res.moved).toFixed(2),
    load: os.loadavg()[0].toFixed(1),
  };
  rows.push(row);
  console.log(JSON.stringify(row));
}
await browser.close();
server.close();

const fmt = (v, d = 0) => v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const table = [
  '| nodes | first render (ms) | of which layout in the worker (ms) | items laid out | panning, whole graph in view (fps) | panning at 1:1 (fps) |',
  '| ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => `| ${r.label} | ${fmt(r.firstRenderMs)} | ${fmt(r.layoutMs)} | ${fmt(r.drawnFit)} | ${fmt(r.fitFps, 1)} | ${fmt(r.nearFps, 1)} |`),
].join('\n');
console.log(table);
if (writeTo) {
  const date = new Date().toISOString().slice(0, 10);
  const load = os.loadavg()[0].toFixed(1);
  const text = `# Studio: large-graph benchmark

Measured ${date} by \`node bench/studio_large_graph.mjs --runs ${runs} --write ${writeTo}\` on this machine
(${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${load} at the end of the run), in
headless Chromium ${version} with software WebGL (SwiftShader), a 1280x800 viewport, medians of ${runs} runs.

Synthetic graphs (\`web/src/fixtures/synthetic.ts\`: blocks of three parallel branches, a Concat, a
normalisation and a residual Add, about 1.2 edges per node), every group expanded, served as a static
fixture (no server): first render is from navigation start to the first frame drawn, and includes page
load, building the graph and the view model, the layout in the worker and building the scene. Panning
moves the camera every animation frame for ${panSeconds} s, once with the whole graph in view (the farthest
level of detail: boxes and edges only) and once at 1:1 (terminals and text for the items in view).

${table}

Goals (issue 10): 10,000 nodes first render under 1 s and 50,000 under 3 s; panning at 30 fps or more
with 10,000 nodes and 20 or more with 50,000. Netron, for comparison, lays out with dagre in a worker
and draws SVG: its tracker reports models past about 5,000 nodes taking very long to open (#68, #1212),
and dagre alone took 7.4 s for 10,000 nodes on this machine (../shared/STUDIO.md).
`;
  // Sections after the synthetic table (the server figures, the reading) are kept as they are.
  const out = resolve(here, '..', writeTo);
  const old = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const keep = old.indexOf('\nReading:') >= 0 ? old.slice(old.indexOf('\nReading:')) : '';
  writeFileSync(out, keep ? text.replace(/\n$/, '') + '\n' + keep : text);
  console.log(`wrote ${writeTo}`);
}
