// The Tools menu: the user tools of the tools file, run by the server on the saved model. A run's
// output comes into a panel as the tool writes it (pushed "tool" events; a gap the stream missed is
// asked for), Cancel ends it (and its children), the exit status shows at the end, and "open output"
// opens the model it wrote. A tool that writes a model asks
// where first ("prompt for output"); the model must be saved and unmodified (it asks to save first).
import type { StudioClient } from '../api/client';
import type { DocumentInfo, ToolEvent, ToolRun, UserTool } from '../api/types';
import { h } from './dom';
import type { MenuItem } from './menu';

/** What the panel needs of the app. */
export interface ToolHost {
  client: StudioClient | null;
  doc: DocumentInfo | null;
  /** Saves the current document (asks for a path when it has none); true when it is saved after. */
  saveForTool(): Promise<boolean>;
  openPath(path: string): Promise<void>;
  ask(title: string, label: string, initial: string): Promise<string | null>;
  toast(msg: string, error?: boolean): void;
}

/** With no event for this long, a run still going is asked for (an event lost on a reconnect). */
const QUIET_MS = 3000;

/** A run as the panel knows it: its output so far and the byte the next event should start at. */
export interface RunView {
  run: ToolRun;
  text: string;
}

/** Folds a "tool" event into the panel's view of run `v`: its output appended when it starts where the
 *  view ends; 'gap' when it starts later (events missed: ask for the run from v.run.next); 'old' when
 *  the view has it already. */
export function foldToolEvent(v: RunView, e: ToolEvent): 'applied' | 'gap' | 'old' {
  if (e.id !== v.run.id) return 'old';
  if (e.from > v.run.next) return 'gap';
  if (e.next <= v.run.next && !(e.done && !v.run.done)) return 'old';
  if (e.from < v.run.next && e.next > v.run.next) return 'gap'; // overlaps: byte offsets, not characters
  v.text += e.from === v.run.next ? e.output : '';
  v.run = {
    ...v.run,
    next: Math.max(v.run.next, e.next),
    done: e.done,
    cancelled: e.cancelled ?? v.run.cancelled,
    exit_status: e.exit_status,
    signal: e.signal,
    output_file: e.output_file ?? v.run.output_file,
  };
  return 'applied';
}

/** The status line of a run: running, exit status, signal, cancelled. */
export function runStatus(r: ToolRun): string {
  if (!r.done) return r.cancelled ? 'cancelling…' : 'running…';
  if (r.cancelled) return `cancelled${r.signal ? ` (signal ${r.signal})` : ''}`;
  if (r.signal) return `ended by signal ${r.signal}`;
  return `exited with status ${r.exit_status}`;
}

/** Where a tool's output model goes by default: beside the model, named after it and the tool. */
export function defaultOutput(modelPath: string, root: string, tool: string): string {
  const rel = modelPath.startsWith(`${root}/`) ? modelPath.slice(root.length + 1) : modelPath;
  const safe = tool.replace(/[^A-Za-z0-9_.-]+/g, '_');
  return rel.replace(/(\.onnx)?$/, `.${safe}.onnx`);
}

export class ToolMenu {
  private root = '';
  private panel: HTMLElement | null = null;

  constructor(private readonly host: ToolHost) {}

  /** The menu's items, read from the server each time the menu opens (the file may have changed). */
  async items(): Promise<MenuItem[]> {
    const client = this.host.client;
    if (!client) return [];
    const list = await client.tools();
    if (!this.root) this.root = (await client.files()).root;
    const items: MenuItem[] = list.tools.map((t) => ({
      id: `tool-${t.name}`,
      label: t.prompt_for_output ? `${t.name}…` : t.name,
      action: () => void this.run(t),
    }));
    if (list.problem) items.push({ id: 'tools-problem', label: list.problem, action: () => undefined });
    else if (!items.length)
      items.push({ id: 'tools-none', label: `no tools in ${list.file}`, action: () => undefined });
    return items;
  }

  async run(tool: UserTool): Promise<void> {
    const { client } = this.host;
    if (!client || !this.host.doc) return this.host.toast('open a model first', true);
    try {
      const d = this.host.doc;
      if (!d.path || d.dirty) {
        const ok = window.confirm(`${tool.name} runs on the saved file: save ${d.name} first?`);
        if (!ok || !(await this.host.saveForTool())) return;
      }
      const doc = this.host.doc!;
      let output: string | undefined;
      if (tool.prompt_for_output) {
        const at = defaultOutput(doc.path ?? doc.name, this.root, tool.name);
        const got = await this.host.ask(`Output of ${tool.name}`, 'Path (under the studio root)', at);
        if (got === null) return;
        output = got;
      }
      const run = await client.runTool(doc.id, tool.name, output);
      await this.follow(run, tool.open_output);
    } catch (e) {
      this.host.toast(String((e as Error).message ?? e), true);
    }
  }

  /** The run's panel, updated until the run is done. */
  private async follow(first: ToolRun, openOutput: boolean): Promise<void> {
    const client = this.host.client!;
    this.panel?.remove();
    const out = h('pre', { className: 'tool-output', 'data-testid': 'tool-output' });
    const status = h('span', { className: 'tool-status', 'data-testid': 'tool-status' });
    const cancel = h('button', {
      text: 'Cancel',
      'data-testid': 'tool-cancel',
      onclick: () => void client.cancelTool(first.id).catch(() => undefined),
    });
    const open = h('button', { text: 'Open output', 'data-testid': 'tool-open', disabled: true });
    const close = h('button', { text: '×', className: 'dialog-close', onclick: () => panel.remove() });
    const panel = h(
      'div',
      { className: 'tool-run', 'data-testid': 'tool-run' },
      h('div', { className: 'dialog-title' }, `Tool ${first.tool}`, close),
      out,
      h('div', { className: 'tool-bar' }, status, cancel, first.output_file ? open : null),
    );
    this.panel = panel;
    document.body.append(panel);
    const v: RunView = { run: first, text: first.output };
    const show = () => {
      out.textContent = v.text;
      out.scrollTop = out.scrollHeight;
      status.textContent = runStatus(v.run);
    };
    show();
    await new Promise<void>((resolve) => {
      let heard = Date.now();
      let asking = false;
      let ended = false;
      let stop: () => void = () => undefined;
      let timer: ReturnType<typeof setInterval> | undefined = undefined;
      const finish = () => {
        if (ended) return;
        ended = true;
        stop();
        if (timer !== undefined) clearInterval(timer);
        resolve();
      };
      // What the stream missed (or all of it, when it is quiet): the run from the byte the view ends at.
      const ask = () => {
        if (asking || ended) return;
        asking = true;
        client.toolRun(first.id, v.run.next).then(
          (r) => {
            asking = false;
            if (ended) return;
            v.text += r.output;
            v.run = r;
            show();
            if (r.done) finish();
          },
          () => (asking = false),
        );
      };
      if (v.run.done) return finish();
      // Recent events are replayed inside subscribe: the run may have ended already.
      stop = client.events().subscribe('tool', (data) => {
        const e = data as ToolEvent;
        if (e.id !== first.id || ended) return;
        heard = Date.now();
        if (foldToolEvent(v, e) === 'gap') return ask();
        show();
        if (v.run.done) finish();
      });
      if (ended) return stop();
      timer = setInterval(() => {
        if (Date.now() - heard < QUIET_MS) return;
        heard = Date.now();
        ask();
      }, QUIET_MS / 3);
    });
    const r = v.run;
    cancel.disabled = true;
    const file = r.output_file;
    const ok = !r.cancelled && !r.signal && r.exit_status === 0;
    if (!file) return;
    open.disabled = false;
    open.onclick = () => void this.host.openPath(file);
    if (ok && openOutput) await this.host.openPath(file);
  }
}
