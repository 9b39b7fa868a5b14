#!/usr/bin/env node
// The studio server alone (no browser): builds an N-node chain through the API, then times edit
// commands from the request to the answer (command, history, incremental diagnostics, JSON, HTTP on
// loopback), with the server's own account of it (the answer's Server-Timing header: parse, command,
// check, answer, dump, total) so that the server's work can be told from the wait for it.
//   TESSERA_BIN=build/src/tessera node bench/studio_server_commands.mjs [--nodes 50000] [--rounds 4]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const nodes = Number(opt('nodes', '50000'));
const rounds = Number(opt('rounds', '4'));
const bin = resolve(process.env.TESSERA_BIN ?? join(here, '../build/src/tessera'));
const root = mkdtempSync(join(tmpdir(), 'tessera-server-bench-'));
const server = spawn(bin, ['studio', '--port', '0', '--no-browser', '--root', root]);
const { base, token } = await new Promise((ok, fail) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = /(http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(out);
    if (m) ok({ base: m[1], token: m[2] });
  });
  server.on('exit', (c) => fail(new Error(`tessera studio exited with ${c}: ${out}`)));
});
async function api(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { 'X-Tessera-Token': token, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.error}`);
  lastTiming = res.headers.get('server-timing') ?? '';
  return json;
}
let lastTiming = '';
// "dump;dur=0.1, total;dur=2.3, parse;dur=..." -> "total 2.3 = parse .. + command .. + ..."
const serverParts = (header) => {
  const parts = Object.fromEntries(header.split(',').map((p) => [p.trim().split(';')[0], Number(p.split('dur=')[1])]));
  const order = ['parse', 'command', 'check', 'answer', 'dump'].filter((k) => parts[k] !== undefined);
  return `server ${parts.total?.toFixed(1)}: ${order.map((k) => `${k} ${parts[k].toFixed(1)}`).join(' ')}`;
};
const doc = await api('POST', '/api/documents/new', { opset: 17 });
const cmds = [{ type: 'add_graph_input', value: { name: 'x', type: 'tensor(float)', shape: [1, 64] } }];
let last = 'x';
for (let i = 0; i < nodes; i++) {
  const scope = `/block.${Math.floor(i / 192)}/layer.${Math.floor(i / 24) % 8}`;
  cmds.push({ type: 'add_node', node: { name: `${scope}/Relu_${i}`, op_type: 'Relu', inputs: [last], outputs: [`v${i}`] } });
  last = `v${i}`;
}
cmds.push({ type: 'add_graph_output', value: { name: last, type: 'tensor(float)', shape: [1, 64] } });
await api('POST', `/api/documents/${doc.id}/commands`, { batch: 'build', commands: cmds });
const at = `/api/documents/${doc.id}/commands`;
const timed = async (command) => {
  const t0 = performance.now();
  const answer = await api('POST', at, { command });
  const ms = performance.now() - t0;
  const server = serverParts(lastTiming);
  const { check } = await api('GET', `/api/documents/${doc.id}/diagnostics`);
  return { answer, text: `${ms.toFixed(1)} ms (${check.incremental ? '' : 'FULL check; '}${server})` };
};
const mid = Math.floor(nodes / 2);
for (let k = 0; k < rounds; k++) {
  const add = await timed({ type: 'add_node', node: { name: `/extra/LeakyRelu_${k}`, op_type: 'LeakyRelu', inputs: [`v${mid}`], outputs: [`extra${k}`] } });
  const node = add.answer.node_ids[0];
  const rename = await timed({ type: 'rename_node', node, name: `/extra/Renamed_${k}` });
  const attr = await timed({ type: 'set_attribute', node, attribute: { name: 'alpha', type: 'float', value: 0.2 } });
  const cut = await timed({ type: 'disconnect', node, index: 0 });
  const join = await timed({ type: 'connect', node, index: 0, value: `v${mid + 1}` });
  const remove = await timed({ type: 'remove_node', node });
  const init = await timed({ type: 'add_initializer', tensor: { name: `w${k}`, dtype: 'float', shape: [64] } });
  console.log(`round ${k + 1}, ${nodes} nodes:`);
  for (const [what, t] of Object.entries({ add, rename, set_attribute: attr, disconnect: cut, connect: join, remove, add_initializer: init }))
    console.log(`  ${what}: ${t.text}`);
}
server.kill('SIGINT');
rmSync(root, { recursive: true, force: true });
