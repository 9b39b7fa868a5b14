import { chromium } from '@playwright/test';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--use-angle=swiftshader','--enable-unsafe-swiftshader','--no-sandbox'] });
const p = await b.newPage({ viewport: { width: 1280, height: 800 } });
p.on('pageerror', e => console.log('pageerror:', e.message));
await p.goto('http://127.0.0.1:4179/?fixture=synthetic&nodes=50000&expand=all');
await p.waitForFunction(() => window.__tessera?.ready && __tessera.firstRenderMs > 0, null, {timeout: 60000});
for (let k = 0; k < 6; k++) {
  const t0 = Date.now();
  const r = await p.evaluate(() => new Promise(res => requestAnimationFrame(() => res(__tessera.stats.frames + ' ' + __tessera.stats.cacheRenders + ' ' + JSON.stringify(__tessera.stats.frameMs.slice(-3))))));
  console.log(Date.now() - t0, r, await p.evaluate(() => JSON.stringify(__tessera.camera)));
  await p.evaluate(() => __tessera.pan(7, 3));
}
await b.close();
