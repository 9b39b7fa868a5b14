#!/usr/bin/env node
// Two (or more) builds of the web app compared on the same machine and load: page loads alternate
// between the builds in one headless Chromium (SwiftShader), so that the load of a shared machine,
// which moves a run's figures by a factor of two, falls on both alike. Per load: first render of the
// synthetic fixture (every group expanded), panning frames per second with the whole graph in view and
// at 1:1, and the rate of an idle requestAnimationFrame loop (what the compositor gives a page that
// draws nothing: the ceiling of the panning rate).
//   node bench/studio_ab.mjs --dists web/dist,/tmp/before/dist [--nodes 10000] [--rounds 5] [--secs 3]
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const web = resolve(here, '../web');
const { chromium } = createRequire(join(web, 'package.json'))('@playwright/test');
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1] : d);
const dists = opt('dists', join(web, 'dist')).split(',').map((d) => resolve(d));
const nodes = Number(opt('nodes', '10000'));
const rounds = Number(opt('rounds', '5'));
const secs = Number(opt('secs', '3'));
for (const d of dists) {
  if (!existsSync(join(d, 'index.html'))) {
    console.error(`no ${d}/index.html: build the web app first`);
    process.exit(2);
  }
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const servers = [];
for (const dist of dists) {
  const s = createServer((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    const f = resolve(dist, '.' + (p === '/' ? '/index.html' : p));
    if (!f.startsWith(dist) || !existsSync(f)) return res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': types[extname(f)] ?? 'application/octet-stream' });
    res.end(readFileSync(f));
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});

/** Frames per second while the camera moves every animation frame (`move`) or while nothing is drawn. */
const rate = (page, move) =>
  page.evaluate(
    async ([s, m]) => {
      const t = window.__tessera;
      let frames = 0;
      let dir = 1;
      const f0 = t.stats.frames;
      const t0 = performance.now();
      await new Promise((done) => {
        const step = () => {
          const now = performance.now();
          if (now - t0 > s * 1000) return done();
          if (Math.floor((now - t0) / 1000) % 2 !== (dir > 0 ? 0 : 1)) dir = -dir;
          if (m) t.pan(7 * dir, 3 * dir);
          frames++;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      });
      return ((m ? t.stats.frames - f0 : frames) * 1000) / (performance.now() - t0);
    },
    [secs, move],
  );

const res = dists.map(() => ({ first: [], fit: [], near: [], idle: [] }));
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < dists.length; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${servers[i].address().port}/?fixture=synthetic&nodes=${nodes}&expand=all`);
    await page.waitForFunction(() => window.__tessera?.ready && window.__tessera.firstRenderMs > 0, null, { timeout: 120000 });
    res[i].first.push(await page.evaluate(() => window.__tessera.firstRenderMs));
    await page.evaluate(() => window.__tessera.fit());
    await page.waitForTimeout(200);
    res[i].fit.push(await rate(page, true));
    await page.evaluate(() => window.__tessera.setCamera(1, 200, 100));
    await page.waitForTimeout(200);
    res[i].near.push(await rate(page, true));
    res[i].idle.push(await rate(page, false));
    await page.close();
  }
}
await browser.close();
servers.forEach((s) => s.close());
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const list = (a, d) => `${a.map((v) => v.toFixed(d)).join(', ')} (median ${med(a).toFixed(d)})`;
console.log(`${nodes.toLocaleString('en-US')} nodes, ${rounds} alternating loads per build, load average ${os.loadavg().map((v) => v.toFixed(1)).join(' ')}`);
dists.forEach((d, i) => {
  console.log(`${d}:`);
  console.log(`  first render ms: ${list(res[i].first, 0)}`);
  console.log(`  panning fps, whole graph: ${list(res[i].fit, 1)}; at 1:1: ${list(res[i].near, 1)}; idle rAF: ${list(res[i].idle, 1)}`);
});
