// Model-menu transformations as background jobs, in the browser against the real server: automatic mixed
// precision on the sample shows its progress and is cancelled (the model unchanged), then runs to its
// end with a loose tolerance (one undo step, its log shown). Skipped (with the reason) where the binary
// has no studio yet.
import { expect, test, type Page } from '@playwright/test';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { artifact, ready } from './util';

const bin = resolve(process.env.TESSERA_BIN ?? '../build/src/tessera');
const sample = join(resolve(process.env.TESSERA_SAMPLES ?? '../build/samples'), 'denoiser.onnx');

function studioMissing(): string | null {
  if (!existsSync(bin)) return `no tessera binary at ${bin} (set TESSERA_BIN)`;
  if (!existsSync(sample)) return `no sample model at ${sample} (set TESSERA_SAMPLES)`;
  const r = spawnSync(bin, ['studio', '--help'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout.includes('--no-browser')) return `${bin} has no 'studio' subcommand yet`;
  return null;
}

const missing = studioMissing();
test.skip(missing !== null, missing ?? '');
test.describe.configure({ mode: 'serial' });

let server: ChildProcess;
let url = '';
let root = '';

test.beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tessera-jobs-e2e-'));
  copyFileSync(sample, join(root, 'jobs.onnx'));
  const args = ['studio', join(root, 'jobs.onnx'), '--port', '0', '--no-browser', '--root', root];
  server = spawn(bin, [...args, '--web-root', resolve('dist')], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL from tessera studio in 20 s: ${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Tessera studio: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolveUrl(m[1]);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.on('exit', (code) => reject(new Error(`tessera studio exited with ${code}: ${out}`)));
  });
});

test.afterAll(() => {
  server?.kill('SIGINT');
  if (root) rmSync(root, { recursive: true, force: true });
});

const t = <T>(page: Page, expr: string) => page.evaluate(`window.__tessera.${expr}`) as Promise<T>;

async function ampDialog(page: Page, atol: string, rtol: string): Promise<void> {
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-amp').click();
  await page.getByTestId('transform-atol').fill(atol);
  await page.getByTestId('transform-rtol').fill(rtol);
  await page.getByTestId('transform-apply').click();
}

test('amp shows its progress and is cancelled; then it runs to its end, one undo step', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const version = await t<number>(page, 'document.version');
  // A tolerance float16 cannot meet: the search runs trial after trial (about 25 s here) until cancelled.
  await ampDialog(page, '1e-7', '0');
  await expect(page.getByTestId('transform-status')).toContainText(/model runs… \d+ %/, { timeout: 30_000 });
  await page.screenshot({ path: artifact('studio-transform-job-progress.png') });
  await page.getByTestId('transform-cancel').click();
  await expect(page.getByTestId('transform-status')).toContainText('cancelled after', { timeout: 15_000 });
  await expect(page.getByTestId('transform-error')).toHaveText('cancelled: the model is unchanged');
  expect(await t<number>(page, 'document.version')).toBe(version);
  expect(await t<boolean>(page, 'document.dirty')).toBe(false);

  // A loose tolerance: the whole model in float16 passes at the first run.
  await page.getByTestId('transform-atol').fill('100');
  await page.getByTestId('transform-rtol').fill('1');
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('transform-status')).toContainText('done in', { timeout: 60_000 });
  await expect(page.getByTestId('transform-log')).toContainText('nodes kept float32 for accuracy: 0');
  await expect(page.getByTestId('transform-progress')).toHaveJSProperty('value', 1);
  await expect.poll(() => t<string>(page, 'document.undo')).toMatch(/mixed precision/);
  expect(await t<boolean>(page, 'document.dirty')).toBe(true);
  await page.screenshot({ path: artifact('studio-transform-job-done.png') });
  await page.locator('.dialog-close').click();
});

test('Extract makes a model of the selected node, opened in a new tab', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const first = await page.evaluate(() => {
    const g = (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph;
    return g.nodes.find((n) => n.inputs.includes(g.inputs[0].name))!.name;
  });
  await page.evaluate(`window.__tessera.select(${JSON.stringify([first])})`);
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-extract').click();
  await expect(page.getByTestId('transform-inputs')).not.toHaveValue('');
  await expect(page.getByTestId('transform-outputs')).not.toHaveValue('');
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('tab').filter({ hasText: 'jobs.cut.onnx' })).toHaveCount(1);
  await expect(page.getByTestId('transform-log')).not.toHaveText('');
  await ready(page);
  expect(await t<string>(page, 'document.name')).toBe('jobs.cut.onnx');
  expect(await t<number>(page, 'graph.nodes.length')).toBe(1);
});

type ApiGraphLike = { nodes: Array<{ name: string; inputs: string[] }>; inputs: Array<{ name: string }> };
