// Model-menu transformations as background jobs, in the browser against the real server: automatic mixed
// precision on the sample shows its progress and is cancelled (the model unchanged), then runs to its
// end with a loose tolerance (one undo step, its log shown); a job whose dialog was closed stays
// reachable from the status bar's indicator and the Jobs list, also after a reload, and is cancelled
// there; an extraction cuts between tensors chosen in the dialog. Skipped (with the reason) where the
// binary has no studio yet.
import { expect, test, type Page } from '@playwright/test';
import { type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStudio, sample, studioMissing } from './studio-server';
import { artifact, ready } from './util';

const missing = studioMissing();
test.skip(missing !== null, missing ?? '');
test.describe.configure({ mode: 'serial' });

let server: ChildProcess;
let url = '';
let root = '';

test.beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tessera-jobs-e2e-'));
  copyFileSync(sample, join(root, 'jobs.onnx'));
  const args = [join(root, 'jobs.onnx'), '--port', '0', '--no-browser', '--root', root];
  ({ server, url } = await startStudio(args));
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

test('a job whose dialog was closed is reopened from the indicator, after a reload too, and cancelled', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  // The float32 model again (the first test converted it; amp on the result ends in seconds).
  if (/mixed precision/.test(await t<string>(page, 'document.undo'))) {
    await page.getByTestId('menu-edit').click();
    await page.getByTestId('action-undo').click();
    await expect.poll(() => t<string>(page, 'document.undo')).not.toMatch(/mixed precision/);
  }
  const version = await t<number>(page, 'document.version');
  await ampDialog(page, '1e-7', '0');
  const indicator = page.getByTestId('jobs-indicator');
  await expect(indicator).toHaveText(/^1 job: amp \d+ %$/, { timeout: 30_000 });
  await page.locator('.dialog-close').click();
  await expect(page.getByTestId('transform-status')).toHaveCount(0);
  await expect(indicator).toBeVisible();
  // A reloaded page lists the job from the server.
  await page.reload();
  await ready(page);
  await expect(indicator).toHaveText(/^1 job: amp \d+ %$/, { timeout: 15_000 });
  await indicator.click();
  const row = page.getByTestId('job-row').first();
  await expect(row).toHaveAttribute('data-state', 'running');
  await expect(row.getByTestId('job-status')).toContainText(/model runs… \d+ %/, { timeout: 30_000 });
  await page.screenshot({ path: artifact('studio-jobs-list-running.png') });
  await row.getByTestId('job-cancel').click();
  await expect(row).toHaveAttribute('data-state', 'cancelled', { timeout: 15_000 });
  await expect(indicator).toBeHidden();
  await row.getByTestId('job-log-toggle').click();
  await expect(row.getByTestId('job-log')).toHaveText('cancelled: the model is unchanged');
  // The earlier jobs are listed under it (newest first).
  expect(await page.getByTestId('job-row').count()).toBeGreaterThan(1);
  await page.screenshot({ path: artifact('studio-jobs-list-cancelled.png') });
  expect(await t<number>(page, 'document.version')).toBe(version);
  await page.getByTestId('jobs-dialog').locator('.dialog-close').click();
  await expect(page.getByTestId('jobs-dialog')).toHaveCount(0);
});

test("Extract cuts between tensors picked in the dialog's lists", async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const cut = await page.evaluate(() => {
    const g = (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph;
    const first = g.nodes.find((n) => n.inputs.includes(g.inputs[0].name))!;
    return { input: g.inputs[0].name, output: first.outputs[0] };
  });
  const tabs = await page.getByTestId('tab').filter({ hasText: 'jobs.cut.onnx' }).count();
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-extract').click();
  await page.getByTestId('transform-inputs-filter').fill(cut.input);
  await page.getByTestId('transform-inputs-values').locator(`[data-value="${cut.input}"]`).click();
  await expect(page.getByTestId('transform-inputs')).toHaveValue(cut.input);
  await page.getByTestId('transform-outputs-filter').fill(cut.output);
  const option = page.getByTestId('transform-outputs-values').locator(`[data-value="${cut.output}"]`);
  await option.click();
  await expect(page.getByTestId('transform-outputs')).toHaveValue(cut.output);
  await expect(option).toHaveText(new RegExp(`^✓ ${cut.output}`));
  await page.screenshot({ path: artifact('studio-extract-tensor-picker.png') });
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('tab').filter({ hasText: 'jobs.cut.onnx' })).toHaveCount(tabs + 1);
  // The log shows once the new tab is switched to (the tab itself may come first, from the jobs list).
  await expect(page.getByTestId('transform-log')).not.toHaveText('');
  await ready(page);
  expect(await t<number>(page, 'graph.nodes.length')).toBe(1);
});

/** Clicks link `port` into node `dst` (Shift held when `add`): on the short vertical stub every link ends
 *  with above its terminal, at a zoom where the terminal's own pick circle stays clear of it. */
async function clickLink(page: Page, dst: string, port: number, add: boolean): Promise<void> {
  await page.evaluate(
    ([dst, port]) => {
      const T = (window as unknown as { __tessera: TesseraLike }).__tessera;
      const o = T.toPage(0, 0);
      const u = T.toPage(1, 1);
      const [px, py] = T.terminal(dst, 'in', port)!;
      const [wx, wy] = [(px - o[0]) / (u[0] - o[0]), (py - o[1]) / (u[1] - o[1])];
      T.setCamera(2, 300 - 2 * wx, 300 - 2 * wy); // the terminal at (300, 300) of the canvas
    },
    [dst, port] as const,
  );
  const [x, y, unit] = await page.evaluate(
    ([dst, port]) => {
      const T = (window as unknown as { __tessera: TesseraLike }).__tessera;
      const [px, py] = T.terminal(dst, 'in', port)!;
      return [px, py, T.toPage(0, 1)[1] - T.toPage(0, 0)[1]];
    },
    [dst, port] as const,
  );
  if (add) await page.keyboard.down('Shift');
  await page.mouse.click(x, y - 9.5 * unit);
  if (add) await page.keyboard.up('Shift');
}

test("Shift+click selects several links, and Extract's lists offer them all first", async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const links = await page.evaluate(() => {
    const g = (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph;
    const a = g.nodes.find((n) => n.inputs.includes(g.inputs[0].name))!;
    const b = g.nodes.find((n) => n.inputs.includes(a.outputs[0]))!;
    return [
      { dst: a.name, port: a.inputs.indexOf(g.inputs[0].name), value: g.inputs[0].name },
      { dst: b.name, port: b.inputs.indexOf(a.outputs[0]), value: a.outputs[0] },
    ];
  });
  await clickLink(page, links[0].dst, links[0].port, false);
  await clickLink(page, links[1].dst, links[1].port, true);
  await page.evaluate(() => (window as unknown as { __tessera: TesseraLike }).__tessera.fit());
  await page.screenshot({ path: artifact('studio-two-links-selected.png') });
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-extract').click();
  const options = page.getByTestId('transform-inputs-values').getByTestId('value-option');
  // The link clicked last first, then the other, each marked.
  await expect(options.nth(0)).toHaveText(`${links[1].value} (selected link)`);
  await expect(options.nth(1)).toHaveText(`${links[0].value} (selected link)`);
  await expect(options.filter({ hasText: '(selected link)' })).toHaveCount(2);
  await page.screenshot({ path: artifact('studio-extract-two-links.png') });
  await page.locator('.dialog-close').click();
  // A plain click on one of them leaves that one alone selected.
  await clickLink(page, links[0].dst, links[0].port, false);
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-extract').click();
  await expect(options.filter({ hasText: '(selected link)' })).toHaveCount(1);
  await expect(options.nth(0)).toHaveText(`${links[0].value} (selected link)`);
  await page.locator('.dialog-close').click();
  // Both selected and deleted: both inputs disconnected, one undo step brings both back.
  await clickLink(page, links[1].dst, links[1].port, true);
  const input = (l: { dst: string; port: number }) =>
    page.evaluate(
      ([dst, port]) =>
        (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph.nodes.find(
          (n) => n.name === dst,
        )!.inputs[port] ?? '',
      [l.dst, l.port] as const,
    );
  await page.keyboard.press('Delete');
  await expect.poll(() => input(links[0])).toBe('');
  await expect.poll(() => input(links[1])).toBe('');
  expect(await t<string>(page, 'document.undo')).toMatch(/Disconnect 2 links/);
  await page.getByTestId('menu-edit').click();
  await page.getByTestId('action-undo').click();
  await expect.poll(() => input(links[0])).toBe(links[0].value);
  await expect.poll(() => input(links[1])).toBe(links[1].value);
});

test("a job ending after its dialog was closed keeps the user's view and selection", async ({ page }) => {
  await page.goto(url);
  await ready(page);
  if (/mixed precision/.test(await t<string>(page, 'document.undo'))) {
    await page.getByTestId('menu-edit').click();
    await page.getByTestId('action-undo').click();
    await expect.poll(() => t<string>(page, 'document.undo')).not.toMatch(/mixed precision/);
  }
  const node = await page.evaluate(
    () => (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph.nodes[0].name,
  );
  await page.evaluate(`window.__tessera.select(${JSON.stringify([node])})`);
  await page.evaluate('window.__tessera.setCamera(1.5, 40, -30)');
  const tabs = await page.getByTestId('tab').count();
  await ampDialog(page, '100', '1');
  await page.locator('.dialog-close').click();
  await expect.poll(() => t<string>(page, 'document.undo'), { timeout: 60_000 }).toMatch(/mixed precision/);
  expect(await t<unknown>(page, 'graphPath')).toBeNull();
  expect(await t<string[]>(page, 'selected')).toEqual([node]);
  expect(await t<{ scale: number; tx: number; ty: number }>(page, 'camera')).toMatchObject({
    scale: 1.5,
    tx: 40,
    ty: -30,
  });
  expect(await page.getByTestId('tab').count()).toBe(tabs);
  const tab = page.getByTestId('tab').filter({ hasText: 'jobs.onnx' });
  await expect(tab.getByTestId('modified')).toHaveCount(1);
  await page.screenshot({ path: artifact('studio-job-applied-in-place.png') });
});

test("a transformation run from a Loop body's tab stays in that tab", async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const token = new URL(url).searchParams.get('token')!;
  const doc = await t<{ id: string }>(page, 'document');
  const input = await page.evaluate(
    () => (window as unknown as { __tessera: { graph: ApiGraphLike } }).__tessera.graph.inputs[0].name,
  );
  const value = (name: string, type: string) => ({ name, type, shape: [] });
  const body = {
    name: 'body',
    inputs: [value('i', 'tensor(int64)'), value('cond_in', 'tensor(bool)'), value('v_in', 'tensor(float)')],
    outputs: [value('cond_out', 'tensor(bool)'), value('v_out', 'tensor(float)')],
    initializers: [],
    nodes: [
      { name: 'keep', op_type: 'Identity', inputs: ['cond_in'], outputs: ['cond_out'] },
      { name: 'step', op_type: 'Relu', inputs: ['v_in'], outputs: ['v_out'] },
    ],
  };
  const node = {
    name: 'loop_1',
    op_type: 'Loop',
    inputs: ['', '', input],
    outputs: ['loop_out'],
    attributes: [{ name: 'body', type: 'graph', value: body }],
  };
  const res = await page.request.post(new URL(`/api/documents/${doc.id}/commands`, url).href, {
    headers: { 'X-Tessera-Token': token },
    data: { command: { type: 'add_node', node } },
  });
  expect(res.status(), await res.text()).toBe(200);
  await page.reload();
  await ready(page);
  const id = await page.evaluate(
    () =>
      (
        window as unknown as { __tessera: { graph: { nodes: Array<{ name: string; id: number }> } } }
      ).__tessera.graph.nodes.find((n) => n.name === 'loop_1')!.id,
  );
  await page.evaluate(`window.__tessera.focus(${id})`);
  await ready(page);
  const at = (await t<[number, number]>(page, `nodeCenter('loop_1')`))!;
  await page.mouse.dblclick(at[0], at[1]);
  const path = { steps: [{ node: id, attribute: 'body', index: 0 }] };
  await expect.poll(() => t<unknown>(page, 'graphPath')).toEqual(path);
  await ready(page);
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-fp16').click();
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('transform-status')).toContainText('done in', { timeout: 60_000 });
  await page.locator('.dialog-close').click();
  await ready(page);
  expect(await t<unknown>(page, 'graphPath')).toEqual(path);
  await expect(page.locator('.tab.subtab.active')).toHaveCount(1);
  await page.screenshot({ path: artifact('studio-transform-from-body-tab.png') });
});

type TesseraLike = {
  toPage(x: number, y: number): [number, number];
  terminal(name: string, side: 'in' | 'out', port: number): [number, number] | null;
  setCamera(scale: number, tx: number, ty: number): void;
  fit(): void;
};

type ApiGraphLike = {
  nodes: Array<{ name: string; inputs: string[]; outputs: string[] }>;
  inputs: Array<{ name: string }>;
};
