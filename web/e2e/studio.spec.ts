// The scenario against the real server (`tessera studio`, TESSERA_BIN): open the sample, add a
// Conv from the palette and another node with Ctrl+Space, connect, watch "not connected" come and go,
// set kernel_shape with the list syntax, edit two nodes' common parameter, undo/redo, save, reload and
// find the edits, export SVG and PNG. Skipped (with the reason) where the binary has no studio yet.
import { expect, test, type Page } from '@playwright/test';
import { spawnSync, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, sample, startStudio, studioMissing } from './studio-server';
import { artifact, ready } from './util';

const missing = studioMissing();
if (missing) console.log(`studio e2e skipped: ${missing}`);
test.skip(missing !== null, missing ?? '');
test.describe.configure({ mode: 'serial' });

let server: ChildProcess;
let url = '';
let root = '';
let model = '';
let config = '';

test.beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tessera-studio-e2e-'));
  model = join(root, 'denoiser.onnx');
  copyFileSync(sample, model);
  // The Tools menu's tools file: $XDG_CONFIG_HOME/tessera/tools.json, outside the studio's root. A
  // script tool that copies the model to the output asked for (and opens it), and one that sleeps.
  config = mkdtempSync(join(tmpdir(), 'tessera-studio-e2e-config-'));
  mkdirSync(join(config, 'tessera'));
  writeFileSync(
    join(config, 'tessera', 'tools.json'),
    JSON.stringify({
      tools: [
        {
          name: 'copy',
          application: '/bin/sh',
          arguments: ['-c', 'echo "copying $1"; cp "$1" "$2" && echo copied', 'sh', '$Model', '$Output'],
          prompt_for_output: true,
          open_output: true,
        },
        { name: 'sleeper', application: '/bin/sh', arguments: ['-c', 'echo started; sleep 60; echo late'] },
      ],
    }),
  );
  ({ server, url } = await startStudio([model, '--port', '0', '--no-browser', '--root', root], {
    ...process.env,
    XDG_CONFIG_HOME: config,
  }));
});

test.afterAll(() => {
  server?.kill('SIGINT');
  if (root) rmSync(root, { recursive: true, force: true });
  if (config) rmSync(config, { recursive: true, force: true });
});

type Leaf = { name: string; id: number; op: string; kind: string; visible: boolean };
const t = <T>(page: Page, expr: string) => page.evaluate(`window.__tessera.${expr}`) as Promise<T>;
const leaves = (page: Page) => t<Leaf[]>(page, 'leaves()');
const notConnected = async (page: Page, node: string) =>
  (await t<Array<{ node: string; message: string }>>(page, 'diagnostics')).filter(
    (d) => d.node === node && /not connected/.test(d.message),
  ).length;

async function settle(page: Page, version?: number): Promise<void> {
  if (version !== undefined)
    await expect.poll(() => t<number>(page, 'graphVersion')).toBeGreaterThan(version);
  await ready(page);
}

async function newNode(page: Page, before: Leaf[]): Promise<Leaf> {
  await expect.poll(async () => (await leaves(page)).length).toBeGreaterThan(before.length);
  const known = new Set(before.map((l) => l.name));
  return (await leaves(page)).find((l) => !known.has(l.name))!;
}

/** The texts of the tensor editor's cells, and those wider than their box (cut). */
const cellTexts = (page: Page) =>
  page.locator('[data-cell]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
const cutCells = (page: Page) =>
  page
    .locator('[data-cell]')
    .evaluateAll((els) =>
      els
        .filter((e) => (e as HTMLInputElement).scrollWidth > (e as HTMLInputElement).clientWidth)
        .map((e) => (e as HTMLInputElement).value),
    );

async function dragBetween(page: Page, from: [number, number], to: [number, number]): Promise<void> {
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  await page.mouse.move((from[0] + to[0]) / 2, (from[1] + to[1]) / 2, { steps: 4 });
  await page.mouse.move(to[0], to[1], { steps: 4 });
  await page.mouse.up();
}

test('edits the sample through the server and keeps the edits across save and reload', async ({ page }) => {
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await page.goto(url);
  await ready(page);
  await expect(page.getByTestId('tab').first()).toContainText('denoiser.onnx');
  const initial = await leaves(page);
  expect(initial.length).toBeGreaterThan(2);
  await page.screenshot({ path: artifact('studio-opened.png') });

  // A Conv from the palette, dragged onto the canvas.
  await page.getByTestId('palette-search').fill('Conv');
  const canvas = page.getByTestId('canvas');
  const box = (await canvas.boundingBox())!;
  let v = await t<number>(page, 'graphVersion');
  await page
    .locator('.palette-item[data-op="Conv"]')
    .first()
    .dragTo(canvas, { targetPosition: { x: 120, y: 120 } });
  await settle(page, v);
  const conv = await newNode(page, initial);
  expect(conv.op).toBe('Conv');
  await expect.poll(() => notConnected(page, conv.name)).toBeGreaterThan(0);

  // A Relu with Ctrl+Space under the cursor.
  const beforeRelu = await leaves(page);
  await page.mouse.move(box.x + box.width - 150, box.y + 120);
  v = await t<number>(page, 'graphVersion');
  await page.keyboard.press('Control+Space');
  await page.getByTestId('quickadd-input').fill('Relu');
  await page.keyboard.press('Enter');
  await settle(page, v);
  const relu = await newNode(page, beforeRelu);
  expect(relu.op).toBe('Relu');
  await page.screenshot({ path: artifact('studio-added.png') });

  // Connect the graph input to the Conv's X and an existing node's output to its W: "not connected" goes.
  const input = initial.find((l) => l.kind === 'input')!;
  await page.evaluate(`window.__tessera.focus(${conv.id})`);
  await page.evaluate('window.__tessera.setCamera(0.7, 0, 0)');
  const convCenter = (await t<[number, number]>(page, `nodeCenter(${JSON.stringify(conv.name)})`))!;
  const inputCenter = (await t<[number, number]>(page, `nodeCenter(${JSON.stringify(input.name)})`))!;
  // Bring both into view: the camera centres between them.
  await page.evaluate(
    `(() => { const c = window.__tessera.camera; window.__tessera.setCamera(c.scale, c.tx + ${box.x + box.width / 2} - ${(convCenter[0] + inputCenter[0]) / 2}, c.ty + ${box.y + box.height / 2} - ${(convCenter[1] + inputCenter[1]) / 2}); })()`,
  );
  await page.waitForTimeout(200);
  v = await t<number>(page, 'graphVersion');
  const a = (await t<[number, number]>(page, `terminal(${JSON.stringify(input.name)}, 'out', 0)`))!;
  const b = (await t<[number, number]>(page, `terminal(${JSON.stringify(conv.name)}, 'in', 0)`))!;
  await dragBetween(page, a, b);
  await settle(page, v);
  expect((await t<{ inputs: string[] }>(page, `node(${JSON.stringify(conv.name)})`)).inputs[0]).toBe(
    input.name,
  );
  expect(await notConnected(page, conv.name)).toBeGreaterThan(0); // W is still free

  // W from a new initializer of generated values (standard normal), attached to the Conv's free input.
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('W_new');
  await page.getByTestId('init-shape').fill('[8, 3, 3, 3]');
  await page.getByTestId('init-fill').selectOption('normal');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  await expect(page.locator('[data-init="W_new"]')).toBeVisible();
  await page.evaluate(`window.__tessera.select([${JSON.stringify(conv.name)}])`);
  v = await t<number>(page, 'graphVersion');
  await page.locator('[data-attach="W_new"]').click();
  await settle(page, v);
  const convNode = await t<{ inputs: string[] }>(page, `node(${JSON.stringify(conv.name)})`);
  expect(convNode.inputs.slice(0, 2)).toEqual([input.name, 'W_new']);
  await expect.poll(() => notConnected(page, conv.name)).toBe(0);

  // The tensor editor: slice [2, 0] of W_new, a refused cell, then one value changed; one undo step.
  const w = () => t<{ values: number[] }>(page, 'initializer("W_new")');
  const before = (await w()).values;
  await page.locator('[data-edit="W_new"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [8, 3, 3, 3]');
  await page.getByTestId('tensor-lead-0').fill('2');
  await page.getByTestId('tensor-lead-0').dispatchEvent('change');
  // Standard normal float32 values take up to 9 significant digits: none is cut.
  expect(Math.max(...(await cellTexts(page)).map((x) => x.length))).toBeGreaterThanOrEqual(9);
  expect(await cutCells(page)).toEqual([]);
  const cell = page.locator('[data-cell="1,2"]');
  await cell.fill('x');
  await cell.dispatchEvent('change');
  await expect(page.getByTestId('tensor-error')).toContainText("'x' is not a number");
  await page.getByTestId('tensor-apply').click();
  await expect(page.getByTestId('tensor-error')).toContainText('fix the 1 cell(s) marked first');
  await cell.fill('0.25');
  await cell.dispatchEvent('change');
  await page.screenshot({ path: artifact('studio-tensor-editor.png') });
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toHaveCount(0);
  const edited = (await w()).values;
  const at = ((2 * 3 + 0) * 3 + 1) * 3 + 2;
  expect(edited[at]).toBe(0.25);
  expect(edited.filter((x, k) => x !== before[k])).toEqual([0.25]);
  expect(await t<string>(page, 'document.undo')).toContain('W_new');

  // Another initializer from a .npy file (its header gives dtype and shape), switched in for W, then
  // detached; both undone, W_new feeds the Conv again.
  const npyPath = join(root, 'W_npy.npy');
  writeFileSync(npyPath, npyFile('<f4', [8, 3, 3, 3]));
  await page.getByTestId('init-name').fill('');
  await page.getByTestId('init-npy').setInputFiles(npyPath);
  await expect(page.getByTestId('init-shape')).toHaveValue('[8, 3, 3, 3]');
  await expect(page.getByTestId('init-name')).toHaveValue('W_npy');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  await expect(page.locator('[data-init="W_npy"]')).toContainText('float[8,3,3,3]');
  // The selected node's initializer inputs: the list to switch to filtered by name, a preview.
  const nodeBox = page.getByTestId('init-node');
  await nodeBox.locator('[data-switch-filter="1"]').fill('npy');
  const listed = await nodeBox
    .locator('[data-switch="1"] option')
    .evaluateAll((os) =>
      os.filter((o) => !(o as HTMLOptionElement).hidden).map((o) => (o as HTMLOptionElement).value),
    );
  expect(listed).toContain('W_npy');
  expect(listed.length).toBeLessThanOrEqual(2); // W_npy and the one fed now
  await nodeBox.locator('[data-node-view="1"]').click();
  await expect(page.locator('.init-preview')).toContainText(' = [');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-node').locator('[data-switch="1"]').selectOption('W_npy');
  await settle(page, v);
  const inputsOf = async () =>
    (await t<{ inputs: string[] }>(page, `node(${JSON.stringify(conv.name)})`)).inputs;
  expect((await inputsOf())[1]).toBe('W_npy');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-node').locator('[data-detach="1"]').click();
  await settle(page, v);
  expect((await inputsOf())[1] ?? '').toBe('');
  await expect.poll(() => notConnected(page, conv.name)).toBeGreaterThan(0);
  for (let k = 0; k < 2; k++) {
    v = await t<number>(page, 'graphVersion');
    await page.evaluate('document.activeElement.blur()');
    await page.keyboard.press('Control+z');
    await settle(page, v);
  }
  expect((await inputsOf())[1]).toBe('W_new');
  await page.getByTestId('left-layers').click();
  await page.screenshot({ path: artifact('studio-connected.png') });

  // kernel_shape with the list syntax, in the parameter editor.
  await page.evaluate(`window.__tessera.select([${JSON.stringify(conv.name)}])`);
  const params = page.getByTestId('params');
  await params.getByTestId('defaults').locator('summary').click();
  v = await t<number>(page, 'graphVersion');
  const ks = params.locator('[data-attr="kernel_shape"]');
  await ks.fill('[3, 3]');
  await ks.press('Enter');
  await settle(page, v);
  const attrs = async (name: string) =>
    (await t<{ attributes: Array<{ name: string; value: unknown }> }>(page, `node(${JSON.stringify(name)})`))
      .attributes;
  expect((await attrs(conv.name)).find((a) => a.name === 'kernel_shape')?.value).toEqual([3, 3]);

  // A bad value is refused in the editor with a message, nothing sent.
  v = await t<number>(page, 'graphVersion');
  const ks2 = params.locator('[data-attr="kernel_shape"]');
  await ks2.fill('[3, 3');
  await ks2.press('Enter');
  await expect(params.locator('.error-text').filter({ hasText: "unclosed '['" })).toBeVisible();
  expect(await t<number>(page, 'graphVersion')).toBe(v);

  // A name that is taken is refused by the server: its message shows, the document is unchanged.
  v = await t<number>(page, 'graphVersion');
  const nameField = params.getByTestId('param-name');
  await nameField.fill(relu.name);
  await nameField.press('Enter');
  await expect(page.getByTestId('toast')).toContainText(relu.name);
  expect(await t<number>(page, 'graphVersion')).toBe(v);
  await page.screenshot({ path: artifact('studio-refused.png') });

  // A common parameter of two Conv nodes at once, then undo and redo it as one step.
  const other = initial.find((l) => l.op === 'Conv')!;
  await page.evaluate(
    `window.__tessera.select([${JSON.stringify(conv.name)}, ${JSON.stringify(other.name)}])`,
  );
  await expect(params).toContainText('2 nodes: common parameters');
  const det = params.getByTestId('defaults');
  if (await det.count()) await det.locator('summary').click();
  v = await t<number>(page, 'graphVersion');
  const dil = params.locator('[data-attr="dilations"]');
  await dil.fill('[1, 1]');
  await dil.press('Enter');
  await settle(page, v);
  const dilations = async () =>
    [conv.name, other.name].map(async (n) => (await attrs(n)).find((a) => a.name === 'dilations')?.value);
  expect(await Promise.all(await dilations())).toEqual([
    [1, 1],
    [1, 1],
  ]);
  expect(await t<{ dirty: boolean }>(page, 'document')).toMatchObject({ dirty: true });
  await expect(page.getByTestId('modified')).toBeVisible();

  await page.mouse.click(box.x + 5, box.y + box.height - 5); // focus the canvas, not an input
  v = await t<number>(page, 'graphVersion');
  await page.keyboard.press('Control+z');
  await settle(page, v);
  expect(await Promise.all(await dilations())).toEqual([undefined, undefined]);
  v = await t<number>(page, 'graphVersion');
  await page.keyboard.press('Control+y');
  await settle(page, v);
  expect(await Promise.all(await dilations())).toEqual([
    [1, 1],
    [1, 1],
  ]);

  // The graph input dragged elsewhere: its position (it is not a node) is kept like the nodes'.
  await page.evaluate(`window.__tessera.focus(${conv.id})`);
  const inAt = (await t<[number, number]>(page, `nodeCenter(${JSON.stringify(input.name)})`))!;
  const inPos = (await t<[number, number]>(page, `leafPos(${JSON.stringify(input.name)})`))!;
  await page.mouse.move(inAt[0], inAt[1]);
  await page.mouse.down();
  await page.mouse.move(inAt[0] - 60, inAt[1] - 40, { steps: 4 });
  await page.mouse.up();
  await expect
    .poll(() => t<[number, number]>(page, `leafPos(${JSON.stringify(input.name)})`))
    .not.toEqual(inPos);
  await expect.poll(() => t<number>(page, 'busy')).toBe(0);
  const movedTo = (await t<[number, number]>(page, `leafPos(${JSON.stringify(input.name)})`))!;

  // Save, then reload the page: the server's document and the file on disk have every edit.
  const mtime = statSync(model).mtimeMs;
  await page.keyboard.press('Control+s');
  await expect.poll(() => t<boolean>(page, 'document.dirty')).toBe(false);
  expect(statSync(model).mtimeMs).toBeGreaterThan(mtime);
  await page.reload();
  await ready(page);
  const after = await leaves(page);
  expect(after.map((l) => l.name)).toEqual(expect.arrayContaining([conv.name, relu.name]));
  expect((await attrs(conv.name)).find((a) => a.name === 'kernel_shape')?.value).toEqual([3, 3]);
  const info = spawnSync(bin, ['info', model, '--json'], { encoding: 'utf8' });
  expect(info.status).toBe(0);
  expect(info.stdout).toContain('Relu');
  expect(existsSync(`${model}.tessera.json`)).toBe(true); // the canvas positions beside the model
  const companion = JSON.parse(readFileSync(`${model}.tessera.json`, 'utf8'));
  expect(companion.graphs.main.inputs[input.name]).toEqual(movedTo.map(Math.round));
  expect(await t<[number, number]>(page, `leafPos(${JSON.stringify(input.name)})`)).toEqual(
    movedTo.map(Math.round),
  );
  await page.screenshot({ path: artifact('studio-reloaded.png') });

  // Export the whole canvas.
  for (const [id, ext] of [
    ['export-svg', 'svg'],
    ['export-png', 'png'],
  ]) {
    await page.getByTestId('menu-file').click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId(`action-${id}`).click(),
    ]);
    const path = artifact(`studio-export.${ext}`);
    await download.saveAs(path);
    const bytes = readFileSync(path);
    if (ext === 'svg') expect(bytes.toString('utf8')).toContain(conv.name);
    else expect(bytes.subarray(0, 4).toString('hex')).toBe('89504e47');
  }
});

test('File > New opens a second document in its own tab, with its opset in the palette', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const tabs = page.getByTestId('tab');
  const before = await tabs.count();
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-new').click();
  await page.getByTestId('new-opset').fill('13');
  await page.getByTestId('new-create').click();
  await expect(tabs).toHaveCount(before + 1);
  await expect(tabs.last()).toHaveClass(/active/);
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(0);
  await expect(page.getByTestId('opsets')).toContainText('ai.onnx 13'); // model properties, nothing selected
  // LayerNormalization arrived in opset 17: a model importing opset 13 does not offer it.
  await page.getByTestId('palette-search').fill('LayerNormalization');
  await expect(page.locator('.palette-item[data-op="LayerNormalization"]')).toHaveCount(0);
  await page.getByTestId('palette-search').fill('Relu');
  await expect(page.locator('.palette-item[data-op="Relu"]')).toHaveCount(1);
  // External data names a file beside the model: refused while this one was never saved...
  const external = async () => {
    await page.getByTestId('left-initializers').click();
    if (!(await page.getByTestId('init-name').isVisible())) await page.locator('.init-form summary').click();
    await page.getByTestId('init-name').fill('w_ext');
    await page.getByTestId('init-shape').fill('[2]');
    await page.getByTestId('init-fill').selectOption('external');
    await page.getByTestId('init-ext-location').fill('w_ext.bin');
    await page.getByTestId('init-ext-offset').fill('4');
    await page.getByTestId('init-create').click();
  };
  await external();
  await expect(page.getByTestId('toast')).toContainText('external data needs a saved model');
  // ... and taken from the file beside the saved sample.
  writeFileSync(join(root, 'w_ext.bin'), Buffer.from(new Float32Array([9, 1.5, -2]).buffer));
  await tabs.first().click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBeGreaterThan(2);
  const v = await t<number>(page, 'graphVersion');
  await external();
  await settle(page, v);
  await expect(page.locator('[data-init="w_ext"]')).toContainText('float[2]');
  await page.getByTestId('left-layers').click();
  // Switching back shows the sample again.
  await tabs.first().click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBeGreaterThan(2);
  await page.screenshot({ path: artifact('studio-tabs.png') });
});

test('edits a tensor attribute in the tensor editor, one undo step', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-new').click();
  await page.getByTestId('new-opset').fill('17');
  await page.getByTestId('new-create').click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(0);
  const value = { dtype: 'float', shape: [2, 3], values: [1, 2, 3, 4, 5, 6] };
  const add = {
    type: 'add_node',
    node: {
      name: 'k',
      op_type: 'Constant',
      inputs: [],
      outputs: ['k_out'],
      attributes: [{ name: 'value', type: 'tensor', value }],
    },
  };
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(add)})`);
  // Constants are hidden by default: shown, the node can be selected and its parameters edited.
  await page.getByTestId('menu-view').click();
  await page.getByTestId('action-constants').click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(1);
  await page.evaluate("window.__tessera.select(['k'])");
  await page.locator('[data-tensor-edit="value"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [2, 3]');
  const cell = page.locator('[data-cell="1,0"]');
  await expect(cell).toHaveValue('4');
  await cell.fill('-7.5');
  await cell.dispatchEvent('change');
  const v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  type Attr = { name: string; value: { values: number[] } };
  const attrs = async () => (await t<{ attributes: Attr[] }>(page, 'node("k")')).attributes;
  expect((await attrs()).find((a) => a.name === 'value')!.value.values).toEqual([1, 2, 3, -7.5, 5, 6]);
  await page.evaluate('window.__tessera.undo()');
  await expect
    .poll(async () => (await attrs()).find((a) => a.name === 'value')!.value.values)
    .toEqual([1, 2, 3, 4, 5, 6]);
  // Its shape changed in the editor (reshape_attribute): grown to [4, 2], the two new values zero; the
  // editor reopens on it; one undo step gives [2, 3] back.
  type Shaped = { name: string; value: { shape: number[]; values: number[] } };
  const valueOf = async () =>
    (await t<{ attributes: Shaped[] }>(page, 'node("k")')).attributes.find((a) => a.name === 'value')!.value;
  await page.locator('[data-tensor-edit="value"]').click();
  await page.getByTestId('tensor-shape').fill('[4, 2]');
  const vr = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-reshape').click();
  await settle(page, vr);
  await expect(page.getByTestId('tensor-editor')).toContainText('float [4, 2]');
  await expect(page.locator('[data-cell="3,1"]')).toHaveValue('0');
  expect(await valueOf()).toMatchObject({ shape: [4, 2], values: [1, 2, 3, 4, 5, 6, 0, 0] });
  await page.locator('.dialog-close').click();
  await page.evaluate('window.__tessera.undo()');
  await expect.poll(async () => (await valueOf()).shape).toEqual([2, 3]);

  // A tensor the graph answer leaves out (over 64 values, and a NaN): fetched when the editor opens.
  const big = Array.from({ length: 100 }, (_, i) => (i === 3 ? 'nan' : i));
  const addBig = {
    ...add,
    node: {
      ...add.node,
      name: 'table',
      outputs: ['table_out'],
      attributes: [
        { name: 'value', type: 'tensor', value: { dtype: 'float', shape: [10, 10], values: big } },
      ],
    },
  };
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(addBig)})`);
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(2);
  await page.evaluate("window.__tessera.select(['table'])");
  await page.locator('[data-tensor-edit="value"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [10, 10]');
  await expect(page.locator('[data-cell="0,3"]')).toHaveValue('nan');
  await expect(page.locator('[data-cell="9,9"]')).toHaveValue('99');
  await page.locator('[data-cell="9,9"]').fill('-inf');
  await page.locator('[data-cell="9,9"]').dispatchEvent('change');
  const v2 = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v2);
  await page.locator('[data-tensor-edit="value"]').click();
  await expect(page.locator('[data-cell="9,9"]')).toHaveValue('-inf');
  await expect(page.locator('[data-cell="0,3"]')).toHaveValue('nan');
  await page.locator('.dialog-close').click();

  // A list parameter opens in the tensor editor too, as one row of cells of its element type.
  const perm = {
    type: 'add_node',
    node: {
      name: 'tr',
      op_type: 'Transpose',
      inputs: ['k_out'],
      outputs: ['tr_out'],
      attributes: [{ name: 'perm', type: 'ints', value: [0, 2, 1] }],
    },
  };
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(perm)})`);
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(3);
  await page.evaluate("window.__tessera.select(['tr'])");
  await page.locator('[data-tensor-edit="perm"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('int64 [3]');
  await page.locator('[data-cell="0,1"]').fill('1.5');
  await page.locator('[data-cell="0,1"]').dispatchEvent('change');
  await expect(page.getByTestId('tensor-error')).toContainText("'1.5' is not an integer (int64)");
  for (const [cell, text] of [
    ['0,1', '1'],
    ['0,2', '2'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  const v3 = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v3);
  type ListAttr = { name: string; type: string; value: number[] };
  const permOf = async () =>
    (await t<{ attributes: ListAttr[] }>(page, 'node("tr")')).attributes.find((a) => a.name === 'perm');
  expect(await permOf()).toMatchObject({ type: 'ints', value: [0, 1, 2] });
  // Its length changed with the shape row: in the browser (the cell edited before is kept, the new one
  // is 0), set on Apply.
  await page.locator('[data-tensor-edit="perm"]').click();
  await page.locator('[data-cell="0,2"]').fill('3');
  await page.locator('[data-cell="0,2"]').dispatchEvent('change');
  await page.getByTestId('tensor-shape').fill('[2, 2]');
  await page.getByTestId('tensor-reshape').click();
  await expect(page.getByTestId('tensor-error')).toHaveText('a list has one dimension, not 2');
  await page.getByTestId('tensor-shape').fill('[4]');
  await page.getByTestId('tensor-reshape').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('int64 [4]');
  await expect(page.locator('[data-cell="0,3"]')).toHaveValue('0');
  await page.locator('[data-cell="0,3"]').fill('2');
  await page.locator('[data-cell="0,3"]').dispatchEvent('change');
  const v4 = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v4);
  expect(await permOf()).toMatchObject({ type: 'ints', value: [0, 1, 3, 2] });
  // A list parameter not set yet has the button too: it opens empty and is given its length there.
  const bare = {
    type: 'add_node',
    node: { name: 'tr2', op_type: 'Transpose', inputs: ['k_out'], outputs: ['tr2_out'] },
  };
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(bare)})`);
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(4);
  await page.evaluate("window.__tessera.select(['tr2'])");
  await page.getByText('Default values').click(); // an unset parameter is listed among the defaults
  await page.locator('[data-tensor-edit="perm"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('int64 [0]');
  await page.getByTestId('tensor-shape').fill('[2]');
  await page.getByTestId('tensor-reshape').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('int64 [2]');
  await page.locator('[data-cell="0,0"]').fill('1');
  await page.locator('[data-cell="0,0"]').dispatchEvent('change');
  const v5 = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v5);
  const perm2 = (await t<{ attributes: ListAttr[] }>(page, 'node("tr2")')).attributes.find(
    (a) => a.name === 'perm',
  );
  expect(perm2).toMatchObject({ type: 'ints', value: [1, 0] });
});

test('an unset tensor parameter is given its element type in the editor, the values typed carried over', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-new').click();
  await page.getByTestId('new-opset').fill('17');
  await page.getByTestId('new-create').click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(0);
  const add = {
    type: 'add_node',
    node: { name: 'c0', op_type: 'Constant', inputs: [], outputs: ['c0_out'], attributes: [] },
  };
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(add)})`);
  await page.getByTestId('menu-view').click();
  await page.getByTestId('action-constants').click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(1);
  await page.evaluate("window.__tessera.select(['c0'])");
  await page.getByText('Default values').click();
  await page.locator('[data-tensor-edit="value"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [0]');
  await expect(page.getByTestId('tensor-dtype')).toHaveValue('float');
  await page.getByTestId('tensor-shape').fill('[3]');
  await page.getByTestId('tensor-reshape').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [3]');
  for (const [cell, text] of [
    ['0,0', '4'],
    ['0,1', '2.5'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  // int32: 4 stays, 2.5 (no integer) becomes 0.
  await page.getByTestId('tensor-dtype').selectOption('int32');
  await expect(page.getByTestId('tensor-editor')).toContainText('int32 [3]');
  await expect(page.locator('[data-cell="0,0"]')).toHaveValue('4');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('0');
  await page.locator('[data-cell="0,2"]').fill('2.5');
  await page.locator('[data-cell="0,2"]').dispatchEvent('change');
  await expect(page.getByTestId('tensor-error')).toContainText("'2.5' is not an integer (int32)");
  await page.locator('[data-cell="0,2"]').fill('-9');
  await page.locator('[data-cell="0,2"]').dispatchEvent('change');
  await page.screenshot({ path: artifact('studio-tensor-editor-unset-dtype.png') });
  const v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  type Attr = { name: string; value: { dtype: string; shape: number[]; values: number[] } };
  const value = (await t<{ attributes: Attr[] }>(page, 'node("c0")')).attributes.find(
    (a) => a.name === 'value',
  )!.value;
  expect(value).toMatchObject({ dtype: 'int32', shape: [3], values: [4, 0, -9] });
});

test("opens a Loop's body in its own tab, edits it and confirms back into the model", async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const token = new URL(url).searchParams.get('token')!;
  const doc = await t<{ id: string }>(page, 'document');
  const input = (await leaves(page)).find((l) => l.kind === 'input')!;
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
  const res = await page.request.post(new URL(`/api/documents/${doc.id}/commands`, url).href, {
    headers: { 'X-Tessera-Token': token },
    data: {
      command: {
        type: 'add_node',
        node: {
          name: 'loop_1',
          op_type: 'Loop',
          inputs: ['', '', input.name],
          outputs: ['loop_out'],
          attributes: [{ name: 'body', type: 'graph', value: body }],
        },
      },
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  await page.reload();
  await ready(page);
  const loop = (await leaves(page)).find((l) => l.name === 'loop_1')!;
  await page.evaluate(`window.__tessera.focus(${loop.id})`);
  await ready(page);
  const at = (await t<[number, number]>(page, `nodeCenter('loop_1')`))!;
  await page.mouse.dblclick(at[0], at[1]);
  await expect(page.getByTestId('subtab')).toHaveCount(1);
  await expect(page.getByTestId('subtab')).toContainText('loop_1.body');
  await expect
    .poll(() => t<unknown>(page, 'graphPath'))
    .toEqual({ steps: [{ node: loop.id, attribute: 'body', index: 0 }] });
  await ready(page);
  const inBody = await leaves(page);
  expect(
    inBody
      .filter((l) => l.kind === 'node')
      .map((l) => l.name)
      .sort(),
  ).toEqual(['keep', 'step']);
  await page.screenshot({ path: artifact('studio-loop-body.png') });

  // An edit inside the body: a Relu from the palette.
  const v = await t<number>(page, 'graphVersion');
  await page.getByTestId('palette-search').fill('Relu');
  await page.locator('.palette-item[data-op="Relu"]').dblclick();
  await settle(page, v);
  await newNode(page, inBody);

  // Confirm: back in the main graph, the Loop's body has the new node; undo takes it out again.
  await page.getByTestId('confirm-subgraph').click();
  await expect(page.getByTestId('subtab')).toHaveCount(0);
  await expect.poll(() => t<unknown>(page, 'graphPath')).toBeNull();
  await ready(page);
  const bodyNodes = async () =>
    (await t<{ subgraphs: Array<{ nodes: number }> }>(page, `node('loop_1')`)).subgraphs[0].nodes;
  expect(await bodyNodes()).toBe(3);
  const v2 = await t<number>(page, 'graphVersion');
  await page.mouse.click(5, 790);
  await page.keyboard.press('Control+z');
  await settle(page, v2);
  expect(await bodyNodes()).toBe(2);
});

test('designs a small CNN from scratch; the saved file passes the checkers and runs', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-new').click();
  await page.getByTestId('new-opset').fill('17');
  await page.getByTestId('new-create').click();
  await expect.poll(() => t<number>(page, 'nodeCount')).toBe(0);
  const box = (await page.getByTestId('canvas').boundingBox())!;

  // Layers with Ctrl+Space, in two columns down the canvas.
  const ops = ['Conv', 'Relu', 'MaxPool', 'Flatten', 'Gemm', 'Softmax'];
  const names: string[] = [];
  for (const [k, op] of ops.entries()) {
    const before = await leaves(page);
    await page.mouse.move(box.x + 140 + (k % 2) * 330, box.y + 50 + k * 88);
    const v = await t<number>(page, 'graphVersion');
    await page.keyboard.press('Control+Space');
    await page.getByTestId('quickadd-input').fill(op);
    await page.keyboard.press('Enter');
    await settle(page, v);
    const added = await newNode(page, before);
    expect(added.op).toBe(op);
    names.push(added.name);
  }
  const [conv, relu, pool, flatten, gemm, softmax] = names;

  const link = async (from: string, to: string, port = 0) => {
    const v = await t<number>(page, 'graphVersion');
    const a = (await t<[number, number]>(page, `terminal(${JSON.stringify(from)}, 'out', 0)`))!;
    const b = (await t<[number, number]>(page, `terminal(${JSON.stringify(to)}, 'in', ${port})`))!;
    await dragBetween(page, a, b);
    await settle(page, v);
  };
  for (const [a, b] of [
    [conv, relu],
    [relu, pool],
    [pool, flatten],
    [flatten, gemm],
    [gemm, softmax],
  ])
    await link(a, b);

  // The graph input and output, by double-clicking the free terminals.
  const io = async (node: string, side: 'in' | 'out', name: string, shape: string) => {
    const v = await t<number>(page, 'graphVersion');
    const p = (await t<[number, number]>(page, `terminal(${JSON.stringify(node)}, '${side}', 0)`))!;
    await page.mouse.dblclick(p[0], p[1]);
    await page.getByTestId('io-name').fill(name);
    await page.getByTestId('io-shape').fill(shape);
    await page.getByTestId('io-create').click();
    await settle(page, v);
  };
  await io(conv, 'in', 'image', '[1, 3, 8, 8]');
  await io(softmax, 'out', 'probs', '[1, 10]');

  // Weights: generated initializers attached to the selected node's free inputs.
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  const weight = async (node: string, name: string, shape: string, fill = 'normal') => {
    await page.getByTestId('init-name').fill(name);
    await page.getByTestId('init-shape').fill(shape);
    await page.getByTestId('init-fill').selectOption(fill);
    let v = await t<number>(page, 'graphVersion');
    await page.getByTestId('init-create').click();
    await settle(page, v);
    await page.evaluate(`window.__tessera.select([${JSON.stringify(node)}])`);
    v = await t<number>(page, 'graphVersion');
    await page.locator(`[data-attach="${name}"]`).click();
    await settle(page, v);
  };
  await weight(conv, 'conv_w', '[8, 3, 3, 3]');
  await weight(conv, 'conv_b', '[8]', 'zeros');
  await weight(gemm, 'fc_w', '[72, 10]');
  await weight(gemm, 'fc_b', '[10]', 'zeros');

  // MaxPool 2x2, stride 2: 6x6 -> 3x3, so Flatten gives 8 * 3 * 3 = 72 features.
  await page.evaluate(`window.__tessera.select([${JSON.stringify(pool)}])`);
  const params = page.getByTestId('params');
  for (const [attr, text] of [
    ['kernel_shape', '[2, 2]'],
    ['strides', '[2, 2]'],
  ]) {
    const det = params.getByTestId('defaults');
    if ((await det.count()) && !(await det.getAttribute('open'))) await det.locator('summary').click();
    const v = await t<number>(page, 'graphVersion');
    const field = params.locator(`[data-attr="${attr}"]`);
    await field.fill(text);
    await field.press('Enter');
    await settle(page, v);
  }
  await expect.poll(async () => (await t<unknown[]>(page, 'diagnostics')).length).toBe(0);
  await page.getByTestId('left-layers').click();
  await page.keyboard.press('f');
  await page.screenshot({ path: artifact('studio-from-scratch.png') });

  // Save as, then Tessera's checker, ONNX's own checker (where python3-onnx is installed) and a run.
  await page.mouse.click(box.x + 5, box.y + box.height - 5);
  await page.keyboard.press('Control+s');
  const file = join(root, 'scratch.onnx');
  await page.getByTestId('saveas-path').fill(file);
  await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => existsSync(file)).toBe(true);
  const check = spawnSync(bin, ['check', file], { encoding: 'utf8' });
  expect(check.status, check.stdout + check.stderr).toBe(0);
  const onnx = spawnSync(
    'python3',
    ['-c', `import onnx; onnx.checker.check_model(onnx.load(${JSON.stringify(file)}), full_check=True)`],
    { encoding: 'utf8' },
  );
  if (/No module named 'onnx'/.test(onnx.stderr))
    console.log('onnx.checker skipped: python3-onnx is not installed');
  else expect(onnx.status, onnx.stderr).toBe(0);
  const run = spawnSync(bin, ['run', file, '--iterations', '1'], { encoding: 'utf8' });
  expect(run.status, run.stdout + run.stderr).toBe(0);
});

/** A .npy file (format 1.0, C order) of zeros: descr like '<f4'. */
function npyFile(descr: string, shape: number[]): Buffer {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')},), }`;
  while ((10 + header.length + 1) % 64) header += ' ';
  header += '\n';
  const pre = Buffer.from([
    0x93,
    0x4e,
    0x55,
    0x4d,
    0x50,
    0x59,
    1,
    0,
    header.length & 255,
    header.length >> 8,
  ]);
  const size = shape.reduce((a, b) => a * b, 1) * Number(descr.slice(2));
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.alloc(size)]);
}

test('makes a local function of two nodes, expands its call in place, edits it, deletes it, undoes', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  type N = { id: number; name: string; inputs: string[]; outputs: string[] };
  const nodes = (await t<N[]>(page, 'graph.nodes')).filter((n) => n.name);
  const pair = nodes
    .map((a) => [a, nodes.find((b) => b.inputs.includes(a.outputs[0]))] as const)
    .find(([a, b]) => b && a.outputs[0])!;
  expect(pair).toBeTruthy();
  const [a, b] = pair as [N, N];
  await page.evaluate(`window.__tessera.select(${JSON.stringify([a.name, b.name])})`);
  await page.getByTestId('menu-edit').click();
  await page.getByTestId('action-make-function').click();
  await page.getByTestId('function-name').fill('Pair');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('function-create').click();
  await settle(page, v);
  const after = await t<N[]>(page, 'graph.nodes');
  expect(after.some((n) => n.id === a.id || n.id === b.id)).toBe(false);
  const call = after.find((n) => n.name === 'Pair_call_0')!;
  expect(call).toBeTruthy();
  expect(call.outputs).toEqual(expect.arrayContaining([b.outputs[0]]));
  expect(await t<Array<{ name: string }>>(page, 'graph.functions')).toEqual([
    expect.objectContaining({ name: 'Pair' }),
  ]);
  // Findings on the call: none while the function exists (an unknown operator once it is gone).
  const callErrors = async () =>
    (await t<Array<{ node: string; severity: string }>>(page, 'diagnostics')).filter(
      (d) => d.node === 'Pair_call_0' && d.severity !== 'info',
    ).length;
  expect(await callErrors()).toBe(0);

  // The call shows as a group of the function's body, collapsed; its title's double-click expands it
  // in place, and an edit of a node inside goes to the function's body.
  type G = { path: string; expanded: boolean };
  const group = (await t<G[]>(page, 'groups()')).find((g) => g.path.endsWith('\u0192 Pair Pair_call_0'))!;
  expect(group).toEqual(expect.objectContaining({ expanded: false }));
  const bodyShown = async () =>
    (await leaves(page)).filter((l) => (l.name === a.name || l.name === b.name) && l.visible).length;
  expect(await bodyShown()).toBe(0);
  await page.evaluate('window.__tessera.fit()');
  await ready(page);
  const title = (await t<[number, number]>(page, `groupCenter(${JSON.stringify(group.path)})`))!;
  await page.mouse.dblclick(title[0], title[1]);
  await expect.poll(bodyShown).toBe(2);
  await page.screenshot({ path: artifact('studio-function-group.png') });

  // A body node dragged inside the expanded call keeps its place across a reload: its position goes to
  // the server as 'f:CALL:NODE' (the companion file's "calls" once saved: the server's tests).
  const bodyPos = () => t<[number, number]>(page, `leafPos(${JSON.stringify(a.name)})`);
  await page.evaluate('window.__tessera.fit()');
  await ready(page);
  const bodyAt = (await t<[number, number]>(page, `nodeCenter(${JSON.stringify(a.name)})`))!;
  const bodyFrom = await bodyPos();
  await page.mouse.move(bodyAt[0], bodyAt[1]);
  await page.mouse.down();
  await page.mouse.move(bodyAt[0] + 40, bodyAt[1] + 25, { steps: 4 });
  await page.mouse.up();
  await expect.poll(bodyPos).not.toEqual(bodyFrom);
  await expect.poll(() => t<number>(page, 'busy')).toBe(0);
  const bodyTo = (await bodyPos())!.map(Math.round);
  await page.reload();
  await ready(page);
  await page.evaluate('window.__tessera.fit()');
  await ready(page);
  const title2 = (await t<[number, number]>(page, `groupCenter(${JSON.stringify(group.path)})`))!;
  await page.mouse.dblclick(title2[0], title2[1]);
  await expect.poll(bodyShown).toBe(2);
  expect(await bodyPos()).toEqual(bodyTo);
  await page.evaluate(`window.__tessera.select(${JSON.stringify([a.name])})`);
  const renamed = `${a.name.replace(/[^A-Za-z0-9_]/g, '_')}_in_body`;
  const bodyName = page.getByTestId('param-name');
  await bodyName.fill(renamed);
  v = await t<number>(page, 'graphVersion');
  await bodyName.press('Enter');
  await settle(page, v);
  const fnBody = await t<{ nodes: Array<{ name: string }> }>(page, 'localFunction(0)');
  expect(fnBody.nodes.map((n) => n.name)).toEqual([renamed, b.name]);
  expect((await leaves(page)).find((l) => l.name === renamed)?.visible).toBe(true); // still expanded

  // Attribute parameters, from the model properties (nothing selected).
  await page.evaluate('window.__tessera.select([])');
  await page.getByTestId('function-attributes').click();
  await page.getByTestId('function-attrs').fill('alpha, 2bad');
  await page.getByTestId('function-attrs-save').click();
  await expect(page.getByText("'2bad' is not a C identifier")).toBeVisible();
  await page.getByTestId('function-attrs').fill('alpha, beta');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('function-attrs-save').click();
  await settle(page, v);
  await page.getByTestId('function-attributes').click();
  await expect(page.getByTestId('function-attrs')).toHaveValue('alpha, beta');
  await page.locator('.dialog-close').click();

  // Deleted: the call is left for the type check to report; undone, all back.
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('function-delete').click();
  await settle(page, v);
  await expect.poll(callErrors).toBeGreaterThan(0);
  for (let k = 0; k < 4; k++) {
    v = await t<number>(page, 'graphVersion');
    await page.evaluate('window.__tessera.undo()');
    await settle(page, v);
  }
  const restored = await t<N[]>(page, 'graph.nodes');
  expect(restored.some((n) => n.id === a.id) && restored.some((n) => n.id === b.id)).toBe(true);
  expect(await t<unknown[]>(page, 'graph.functions')).toEqual([]);
  // The nodes put back by the undo sit where the server has them (the answer gives their indices).
  const order = restored.map((n) => n.id);
  await page.reload();
  await ready(page);
  expect((await t<N[]>(page, 'graph.nodes')).map((n) => n.id)).toEqual(order);
});

test('edits a tensor over 65,536 elements page by page, fetching only the pages shown', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const windows: number[] = []; // values asked for per request of the big initializer
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!u.pathname.endsWith('/initializers/big')) return;
    windows.push(Number(u.searchParams.get('limit') ?? 1024) * Number(u.searchParams.get('rows') ?? 1));
  });
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('big');
  await page.getByTestId('init-shape').fill('[2, 300, 400]');
  await page.getByTestId('init-fill').selectOption('normal');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  await page.locator('[data-edit="big"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [2, 300, 400]');
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 0-63 of 300, columns 0-31 of 400');
  expect(await cutCells(page)).toEqual([]);
  // The second slice, a page down and a page right: rows 64-127, columns 32-63.
  await page.getByTestId('tensor-lead-0').fill('1');
  await page.getByTestId('tensor-lead-0').dispatchEvent('change');
  await page.locator('.tensor-paging button', { hasText: '↓' }).click();
  await page.locator('.tensor-paging button', { hasText: '→' }).click();
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 64-127 of 300, columns 32-63 of 400');
  const before = await t<{ values: number[] }>(page, 'initializer("big", 2048)');
  for (const [cell, text] of [
    ['64,32', '-1.2345678e-10'],
    ['64,33', '2.5'],
    ['100,40', '7'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  expect(await cutCells(page)).toEqual([]);
  await page.screenshot({ path: artifact('studio-tensor-editor-paged.png') });
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toHaveCount(0);
  // Only pages travelled (64 x 32 cells each), never the 240,000 values.
  expect(windows.length).toBeGreaterThanOrEqual(3);
  expect(Math.max(...windows)).toBeLessThanOrEqual(64 * 32);
  const at = (s: number, r: number, c: number) => (s * 300 + r) * 400 + c;
  const read = async (i: number) =>
    (await page.evaluate(`window.__tessera.initializerAt("big", ${i})`)) as number;
  expect(await read(at(1, 64, 32))).toBeCloseTo(-1.2345678e-10, 15);
  expect(await read(at(1, 64, 33))).toBe(2.5);
  expect(await read(at(1, 100, 40))).toBe(7);
  expect(await read(at(1, 64, 34))).not.toBe(2.5); // a neighbour untouched
  expect((await t<{ values: number[] }>(page, 'initializer("big", 2048)')).values).toEqual(before.values);
  // One undo step.
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
  expect(await read(at(1, 100, 40))).not.toBe(7);
});

test('a shape change of a paged tensor applies its unapplied cell edits in the same undo step', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('wide');
  await page.getByTestId('init-shape').fill('[300, 400]');
  await page.getByTestId('init-fill').selectOption('normal');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  const read = async (i: number) =>
    (await page.evaluate(`window.__tessera.initializerAt("wide", ${i})`)) as number;
  const shape = () =>
    page.evaluate(
      () =>
        (
          window as unknown as {
            __tessera: { graph: { initializers: Array<{ name: string; shape: number[] }> } };
          }
        ).__tessera.graph.initializers.find((i) => i.name === 'wide')?.shape,
    );
  const last = await read(300 * 400 - 1);
  await page.locator('[data-edit="wide"]').click();
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 0-63 of 300, columns 0-31 of 400');
  for (const [cell, text] of [
    ['0,1', '7'],
    ['2,3', '-2.5'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  // [300, 400] -> [400, 300]: the same count, the values stay in order, the edited ones with them.
  await page.getByTestId('tensor-shape').fill('[400, 300]');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-reshape').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toContainText('float [400, 300]');
  await expect(page.getByTestId('tensor-error')).toHaveText('');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('7');
  await page.screenshot({ path: artifact('studio-tensor-editor-paged-reshape-edits.png') });
  expect(await shape()).toEqual([400, 300]);
  expect(await read(1)).toBe(7);
  expect(await read(2 * 400 + 3)).toBe(-2.5);
  expect(await read(300 * 400 - 1)).toBe(last);
  await page.locator('.dialog-close').click();
  // One undo step: the old shape and the old values, the edits too.
  v = await t<number>(page, 'graphVersion');
  await t(page, 'undo()');
  await settle(page, v);
  expect(await shape()).toEqual([300, 400]);
  expect(await read(1)).not.toBe(7);
  expect(await read(2 * 400 + 3)).not.toBe(-2.5);
});

/** The dialog's title and the grid's row numbers stay in view whichever way the page is scrolled. */
async function editorFramed(page: Page): Promise<void> {
  const dialog = (await page.locator('#dialogs .dialog').boundingBox())!;
  const title = (await page.locator('.dialog-title').boundingBox())!;
  expect(await page.locator('#dialogs .dialog').evaluate((e) => e.scrollLeft)).toBe(0);
  expect(title.x).toBeGreaterThanOrEqual(dialog.x);
  const scroll = (await page.locator('.tensor-scroll').boundingBox())!;
  const rowHead = (await page.locator('.tensor-grid tr:nth-child(2) th').boundingBox())!;
  expect(rowHead.x).toBeGreaterThanOrEqual(scroll.x - 1);
  expect(rowHead.x).toBeLessThan(scroll.x + 20);
  expect(await halfHiddenCells(page)).toEqual([]);
}

/** Cells of the grid's first row that lie partly under the sticky row numbers (scrolling snaps to cell
 *  edges beside them, so none should). */
const halfHiddenCells = (page: Page) =>
  page.locator('.tensor-grid tr:nth-child(2)').evaluate((tr) => {
    const edge = tr.querySelector('th')!.getBoundingClientRect().right;
    return [...tr.querySelectorAll('td')]
      .map((td) => td.getBoundingClientRect())
      .filter((r) => r.left < edge - 1 && r.right > edge + 1)
      .map((r) => [r.left, r.right, edge]);
  });

test('edits a float16 tensor over 65,536 elements with nan and inf; title and row numbers stay in view', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('half');
  await page.getByTestId('init-dtype').selectOption('float16');
  await page.getByTestId('init-shape').fill('[300, 400]');
  await page.getByTestId('init-fill').selectOption('zeros');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  await page.locator('[data-edit="half"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float16 [300, 400]');
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 0-63 of 300, columns 0-31 of 400');
  for (const [cell, text] of [
    ['0,0', 'nan'],
    ['0,1', '-inf'],
    ['1,0', '0.1'],
    ['2,31', 'inf'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  await editorFramed(page);
  await page.locator('.tensor-scroll').evaluate((e) => (e.scrollLeft = e.scrollWidth));
  await editorFramed(page);
  await page.screenshot({ path: artifact('studio-tensor-editor-paged-float16.png') });
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toHaveCount(0);
  const read = (i: number) => page.evaluate(`window.__tessera.initializerAt("half", ${i})`);
  expect(await read(0)).toBe('nan');
  expect(await read(1)).toBe('-inf');
  expect(await read(400)).toBe(0.0999755859375); // 0.1 in float16
  expect(await read(831)).toBe('inf');
  expect(await read(2)).toBe(0);
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
  expect(await read(0)).toBe(0);
  expect(await read(831)).toBe(0);

  // Deleting an initializer disconnects its users, in one undo step.
  type N = { name: string; inputs: string[] };
  const nodes = () => t<N[]>(page, 'graph.nodes');
  const user = (await nodes()).find((n) => n.inputs.includes('conv_out_0.bias'))!;
  const names = async () => (await t<Array<{ name: string }>>(page, 'graph.initializers')).map((i) => i.name);
  v = await t<number>(page, 'graphVersion');
  await page.locator('[data-delete="conv_out_0.bias"]').click();
  await settle(page, v);
  expect(await names()).not.toContain('conv_out_0.bias');
  expect((await nodes()).find((n) => n.name === user.name)!.inputs).not.toContain('conv_out_0.bias');
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
  expect(await names()).toContain('conv_out_0.bias');
  expect((await nodes()).find((n) => n.name === user.name)!.inputs).toEqual(user.inputs);
});

test('edits a Constant over 65,536 elements page by page, on the server, one undo step', async ({ page }) => {
  await page.goto(url);
  await ready(page);
  const windows: number[] = []; // values asked for per request of the attribute
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!/\/attributes\/value$/.test(u.pathname)) return;
    windows.push(Number(u.searchParams.get('limit') ?? 1024) * Number(u.searchParams.get('rows') ?? 1));
  });
  const value = { dtype: 'float', shape: [300, 400], fill: { kind: 'zeros' } };
  const add = {
    type: 'add_node',
    node: { name: 'lut', op_type: 'Constant', inputs: [], outputs: ['lut_out'], attributes: [] as unknown[] },
  };
  add.node.attributes.push({ name: 'value', type: 'tensor', value });
  await page.evaluate(`window.__tessera.editTimed(${JSON.stringify(add)})`);
  await page.getByTestId('menu-view').click();
  await page.getByTestId('action-constants').click();
  await page.evaluate("window.__tessera.select(['lut'])");
  await page.locator('[data-tensor-edit="value"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [300, 400]');
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 0-63 of 300, columns 0-31 of 400');
  await page.locator('.tensor-paging button', { hasText: '→' }).click();
  await expect(page.getByTestId('tensor-where')).toHaveText('rows 0-63 of 300, columns 32-63 of 400');
  for (const [cell, text] of [
    ['0,32', '1.5'],
    ['0,33', 'nan'],
    ['5,40', '-2'],
  ]) {
    await page.locator(`[data-cell="${cell}"]`).fill(text);
    await page.locator(`[data-cell="${cell}"]`).dispatchEvent('change');
  }
  await page.locator('.tensor-scroll').evaluate((e) => (e.scrollLeft = 37));
  await editorFramed(page);
  await page.screenshot({ path: artifact('studio-tensor-editor-paged-attribute.png') });
  const v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toHaveCount(0);
  expect(Math.max(...windows)).toBeLessThanOrEqual(64 * 32); // pages, never the 120,000 values
  const read = (i: number) => page.evaluate(`window.__tessera.attributeAt("lut", "value", ${i})`);
  expect(await read(32)).toBe(1.5);
  expect(await read(33)).toBe('nan');
  expect(await read(5 * 400 + 40)).toBe(-2);
  expect(await read(34)).toBe(0);
  const v2 = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v2);
  expect(await read(32)).toBe(0);
  expect(await read(5 * 400 + 40)).toBe(0);
});

test('creates a float8 initializer from values typed in and edits it: rounded and saturated as stored', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('f8');
  await page.getByTestId('init-dtype').selectOption('float8e4m3fn');
  // Generated values as the seed allows: zeros only for a one-byte float.
  const disabled = await page
    .getByTestId('init-fill')
    .locator('option:disabled')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(disabled.sort()).toEqual(['normal', 'uniform_int_neg', 'uniform_int_pos']);
  await page.getByTestId('init-fill').selectOption('values');
  await page.getByTestId('init-values').fill('[[0.3, 1000], [-inf, 0.002]]');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  const read = (i: number) => page.evaluate(`window.__tessera.initializerAt("f8", ${i})`);
  expect([await read(0), await read(1), await read(2), await read(3)]).toEqual([
    0.3125, 448, -448, 0.001953125,
  ]);
  await page.locator('[data-edit="f8"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float8e4m3fn [2, 2]');
  await expect(page.locator('[data-cell="0,0"]')).toHaveValue('0.3');
  await expect(page.locator('[data-cell="1,0"]')).toHaveValue('-448');
  await page.locator('[data-cell="0,1"]').fill('500');
  await page.locator('[data-cell="0,1"]').dispatchEvent('change');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('448'); // saturated, shown as kept
  await page.locator('[data-cell="1,1"]').fill('nan');
  await page.locator('[data-cell="1,1"]').dispatchEvent('change');
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  expect(await read(1)).toBe(448);
  expect(await read(3)).toBe('nan');
});

test('creates a float8e8m0 initializer, edits a value and changes its shape in the tensor editor, one undo', async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  await page.getByTestId('left-initializers').click();
  await page.locator('.init-form summary').click();
  await page.getByTestId('init-name').fill('scales');
  await page.getByTestId('init-dtype').selectOption('float8e8m0');
  // No zero in the type: nothing is generated, values are typed in.
  await expect(page.getByTestId('init-fill')).toHaveValue('values');
  await page.getByTestId('init-values').fill('[[3, 0.5], [1e-45, inf]]');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('init-create').click();
  await settle(page, v);
  const read = (i: number) => page.evaluate(`window.__tessera.initializerAt("scales", ${i})`);
  // round_mode "up" and saturation, as Cast's defaults.
  expect([await read(0), await read(1), await read(2), await read(3)]).toEqual([4, 0.5, 2 ** -127, 2 ** 127]);
  await page.locator('[data-edit="scales"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float8e8m0 [2, 2]');
  await expect(page.locator('[data-cell="1,0"]')).toHaveValue('2^-127');
  await expect(page.locator('[data-cell="1,1"]')).toHaveValue('2^127');
  await page.locator('[data-cell="0,1"]').fill('0');
  await page.locator('[data-cell="0,1"]').dispatchEvent('change');
  await expect(page.getByTestId('tensor-error')).toContainText('float8e8m0 has no zero');
  await page.locator('[data-cell="0,1"]').fill('100');
  await page.locator('[data-cell="0,1"]').dispatchEvent('change');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('128'); // up to the next power of two
  // Cast's other round modes, for the values typed from then on: 3 down is 2.
  await page.getByTestId('tensor-round').selectOption('down');
  await page.locator('[data-cell="0,0"]').fill('3');
  await page.locator('[data-cell="0,0"]').dispatchEvent('change');
  await expect(page.locator('[data-cell="0,0"]')).toHaveValue('2');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('128');
  await page.screenshot({ path: artifact('studio-tensor-editor-e8m0-round.png') });
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-apply').click();
  await settle(page, v);
  expect(await read(0)).toBe(2);
  expect(await read(1)).toBe(128);
  // The shape: [2, 2] -> [3, 2], the two new values 1 (the type has no zero); the editor reopens on it.
  await page.locator('[data-edit="scales"]').click();
  await page.getByTestId('tensor-shape').fill('[3, -2]');
  await expect(page.getByTestId('tensor-shape-note')).toHaveText(
    'dimension 1 is -2; dimensions are 0 or more',
  );
  await page.getByTestId('tensor-shape').fill('[3, 2]');
  await expect(page.getByTestId('tensor-shape-note')).toHaveText(
    '4 -> 6 elements: the values stay first, the 2 new ones are 1 (the type has no zero)',
  );
  await page.screenshot({ path: artifact('studio-tensor-editor-shape-note.png') });
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-reshape').click();
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toContainText('float8e8m0 [3, 2]');
  await expect(page.locator('[data-cell="2,1"]')).toHaveValue('1');
  await expect(page.locator('[data-cell="0,1"]')).toHaveValue('128');
  await page.screenshot({ path: artifact('studio-tensor-editor-reshaped-e8m0.png') });
  const shape = () =>
    page.evaluate(() => {
      const g = (
        window as unknown as {
          __tessera: { graph: { initializers: Array<{ name: string; shape: number[] }> } };
        }
      ).__tessera.graph;
      return g.initializers.find((i) => i.name === 'scales')?.shape;
    });
  expect(await shape()).toEqual([3, 2]);
  expect(await read(5)).toBe(1);
  await page.locator('.dialog-close').click();
  // One undo step gives the [2, 2] tensor back.
  v = await t<number>(page, 'graphVersion');
  await t(page, 'undo()');
  await settle(page, v);
  expect(await shape()).toEqual([2, 2]);
  expect([await read(0), await read(1), await read(2), await read(3)]).toEqual([2, 128, 2 ** -127, 2 ** 127]);

  // An initializer replaced from a .npy file in its editor: the file's type must be the initializer's
  // (the seed's rule); its shape replaces the old one; one undo step.
  await page.locator('[data-edit="conv_out_0.bias"]').click();
  await expect(page.getByTestId('tensor-editor')).toContainText('float [3]');
  await page.getByTestId('tensor-npy').setInputFiles({
    name: 'ints.npy',
    mimeType: 'application/octet-stream',
    buffer: npyFile('<i8', [5]),
  });
  await expect(page.getByTestId('tensor-npy-error')).toHaveText(
    'ints.npy: the file holds int64, the initializer float',
  );
  v = await t<number>(page, 'graphVersion');
  await page.getByTestId('tensor-npy').setInputFiles({
    name: 'bias.npy',
    mimeType: 'application/octet-stream',
    buffer: npyFile('<f4', [5]),
  });
  await settle(page, v);
  await expect(page.getByTestId('tensor-editor')).toContainText('float [5]');
  await page.locator('.dialog-close').click();
  v = await t<number>(page, 'graphVersion');
  await t(page, 'undo()');
  await settle(page, v);
  await expect(page.locator('[data-init="conv_out_0.bias"]')).toContainText('float[3]');
});

test("a Loop's body lists the main graph's initializers; deleting one disconnects the body's reader, one undo", async ({
  page,
}) => {
  await page.goto(url);
  await ready(page);
  const token = new URL(url).searchParams.get('token')!;
  const doc = await t<{ id: string }>(page, 'document');
  const api = (path: string) => new URL(`/api/documents/${doc.id}${path}`, url).href;
  const headers = { 'X-Tessera-Token': token };
  const value = (name: string, type: string) => ({ name, type, shape: [] });
  // A Loop whose body reads the sample's conv_out_0.bias from the outer scope.
  const body = {
    name: 'peek_body',
    inputs: [value('i', 'tensor(int64)'), value('c_in', 'tensor(bool)')],
    outputs: [value('c_out', 'tensor(bool)')],
    initializers: [],
    nodes: [
      { name: 'keep', op_type: 'Identity', inputs: ['c_in'], outputs: ['c_out'] },
      { name: 'peek', op_type: 'Identity', inputs: ['conv_out_0.bias'], outputs: ['peeked'] },
    ],
  };
  const add = {
    type: 'add_node',
    node: {
      name: 'loop_peek',
      op_type: 'Loop',
      inputs: ['', ''],
      outputs: [],
      attributes: [{ name: 'body', type: 'graph', value: body }],
    },
  };
  const res = await page.request.post(api('/commands'), { headers, data: { command: add } });
  expect(res.status(), await res.text()).toBe(200);
  await page.reload();
  await ready(page);
  const loop = (await t<{ id: number }>(page, `node('loop_peek')`)).id;
  const path = encodeURIComponent(JSON.stringify({ steps: [{ node: loop, attribute: 'body', index: 0 }] }));
  const peekInputs = async () => {
    const g = await (await page.request.get(api(`/graph?path=${path}`), { headers })).json();
    return (g.nodes as Array<{ name: string; inputs: string[] }>).find((n) => n.name === 'peek')!.inputs;
  };
  expect(await peekInputs()).toEqual(['conv_out_0.bias']);

  // In the body's tab the main graph's initializers are listed too (the body reads them like its own):
  // to preview and attach, edited and deleted in the main graph's tab.
  await page.evaluate(`window.__tessera.focus(${loop})`);
  await ready(page);
  const at = (await t<[number, number]>(page, `nodeCenter('loop_peek')`))!;
  await page.mouse.dblclick(at[0], at[1]);
  await expect(page.getByTestId('subtab')).toContainText('loop_peek.body');
  await ready(page);
  await page.getByTestId('left-initializers').click();
  const outer = page.locator('[data-outer-init="conv_out_0.bias"]');
  await expect(outer).toContainText('(outer)');
  await expect(outer.locator('[data-delete]')).toHaveCount(0);
  await outer.getByText('view').click();
  await expect(page.locator('.init-preview')).toContainText('conv_out_0.bias = [');
  await page.evaluate("window.__tessera.select(['peek'])");
  await expect(page.getByTestId('init-node').locator('[data-switch="0"]')).toHaveValue('conv_out_0.bias');
  await expect(page.getByTestId('init-node').locator('[data-node-edit="0"]')).toHaveCount(0);
  await page.getByTestId('confirm-subgraph').click();
  await expect(page.getByTestId('subtab')).toHaveCount(0);
  await ready(page);

  await page.getByTestId('left-initializers').click();
  let v = await t<number>(page, 'graphVersion');
  await page.locator('[data-delete="conv_out_0.bias"]').click();
  await settle(page, v);
  expect(await peekInputs()).toEqual([]);
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
  expect(await peekInputs()).toEqual(['conv_out_0.bias']);
  // Leave the sample as it was for the tests that follow.
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
});

test('Model > Convert to float16 and Sanitize apply to the document, log what they did, one undo each', async ({
  page,
}) => {
  // A fresh copy of the sample (the tests before edited the first one), opened with File > Open.
  copyFileSync(sample, join(root, 'fresh.onnx'));
  await page.goto(url);
  await ready(page);
  await page.getByTestId('menu-file').click();
  await page.getByTestId('action-open').click();
  await page.getByTestId('file-entry').filter({ hasText: 'fresh.onnx' }).dblclick();
  await expect(page.getByTestId('tab').filter({ hasText: 'fresh.onnx' })).toHaveCount(1);
  await ready(page);
  expect(await t<string>(page, 'document.name')).toBe('fresh.onnx');
  const dtypes = async () =>
    (await t<Array<{ name: string; dtype: string }>>(page, 'graph.initializers')).map((i) => i.dtype);
  const before = await dtypes();
  expect(before).toContain('float');
  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-fp16').click();
  await page.getByTestId('transform-keep_io_types').check();
  await page.getByTestId('transform-node_block_list').fill('no_such_node');
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('transform-error')).toContainText('no_such_node');
  await page.getByTestId('transform-node_block_list').fill('');
  let v = await t<number>(page, 'graphVersion');
  await page.getByTestId('transform-apply').click();
  await settle(page, v);
  await expect(page.getByTestId('transform-log')).toContainText('initializers');
  await page.screenshot({ path: artifact('studio-transform-fp16.png') });
  expect(await dtypes()).not.toContain('float');
  expect(await t<string>(page, 'document.undo')).toMatch(/float16/i);
  v = await t<number>(page, 'graphVersion');
  await page.evaluate('window.__tessera.undo()');
  await settle(page, v);
  expect(await dtypes()).toEqual(before);
  await page.locator('.dialog-close').click();

  await page.getByTestId('menu-model').click();
  await page.getByTestId('action-transform-sanitize').click();
  await page.getByTestId('transform-passes').fill('x');
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('transform-error')).toContainText("'x' is not a non-negative integer");
  await page.getByTestId('transform-passes').fill('0');
  await page.getByTestId('transform-apply').click();
  await expect(page.getByTestId('transform-log')).not.toHaveText(/running/);
  await expect(page.getByTestId('transform-log')).toContainText('nodes');
  await page.locator('.dialog-close').click();

  // Model properties (nothing selected) show the model's name and version and edit them.
  await page.evaluate('window.__tessera.select([])');
  const name = page.locator('[data-meta="graph_name"]');
  const before_name = await name.inputValue();
  expect(before_name).not.toBe('');
  v = await t<number>(page, 'graphVersion');
  await name.fill('renamed_net');
  await name.dispatchEvent('change');
  await settle(page, v);
  expect(await t<string>(page, 'graph.metadata.graph_name')).toBe('renamed_net');
  await expect(page.locator('[data-meta="graph_name"]')).toHaveValue('renamed_net');
  await page.locator('[data-meta="model_version"]').fill('x');
  await page.locator('[data-meta="model_version"]').dispatchEvent('change');
  await expect(page.getByText("version: 'x' is not an integer")).toBeVisible();
});

test('Tools runs a script tool on the saved model, streams its output, opens its output; cancel ends one', async ({
  page,
}) => {
  page.on('dialog', (d) => void d.accept()); // "save first?"
  await page.goto(url);
  await ready(page);
  await page.getByTestId('menu-tools').click();
  await page.getByTestId('action-tool-copy').click();
  await expect(page.getByTestId('ask-input')).toHaveValue('denoiser.copy.onnx');
  await page.getByTestId('ask-input').fill('copied.onnx');
  await page.getByTestId('ask-ok').click();
  await expect(page.getByTestId('tool-status')).toHaveText('exited with status 0');
  await expect(page.getByTestId('tool-output')).toContainText(`copying ${model}`);
  await expect(page.getByTestId('tool-output')).toContainText('copied');
  await expect(page.getByTestId('tab').filter({ hasText: 'copied.onnx' })).toHaveCount(1);
  expect(existsSync(join(root, 'copied.onnx'))).toBe(true);
  await page.screenshot({ path: artifact('studio-tool-run.png') });

  await page.getByTestId('menu-tools').click();
  await page.getByTestId('action-tool-sleeper').click();
  await expect(page.getByTestId('tool-output')).toHaveText('started\n');
  await expect(page.getByTestId('tool-status')).toHaveText('running…');
  await page.getByTestId('tool-cancel').click();
  await expect(page.getByTestId('tool-status')).toHaveText('cancelled (signal 15)');
  await expect(page.getByTestId('tool-output')).toHaveText('started\n');
});
