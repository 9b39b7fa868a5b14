// Entry point: with ?token=... it talks to `tessera studio`; with ?fixture=synthetic it shows a
// generated graph without a server (the large-graph benchmark and the renderer tests use this).
import './style.css';
import { StudioClient } from './api/client';
import { App } from './app/app';
import { syntheticGraph } from './fixtures/synthetic';
import { JobList, jobsIndicator, showJobsDialog, type JobsHost } from './ui/jobs';
import { menuBar } from './ui/menu';
import { ToolMenu } from './ui/tools';
import { TRANSFORMS } from './ui/transforms';
import { installHook } from './hook';

const bootMs = performance.now();
const $ = (id: string) => document.getElementById(id)!;
const params = new URLSearchParams(location.search);
const token = params.get('token') ?? '';
const fixture = params.get('fixture');

// The document list is asked for before the app is built: the request runs while the WebGL context
// and the layout worker start (the slowest steps of opening the page under software rendering).
const client = fixture ? null : new StudioClient(token);
const documents = client?.documents();
documents?.catch(() => undefined); // reported by app.start
// The pushed events (jobs' progress, tools' output) from now on: a job's first events are not missed.
client?.events().start();

const app = new App(
  {
    tabs: $('tabs'),
    left: $('left'),
    right: $('right'),
    bottom: $('bottom'),
    canvas: $('canvas') as HTMLCanvasElement,
    status: $('status'),
    toast: $('toast'),
    dialogs: $('dialogs'),
  },
  client,
);
installHook(app);
const appMs = performance.now();

const c = app.canvas;
const tools = new ToolMenu(app);

// Running and recent jobs (ui/jobs.ts): the status bar's indicator and Model > Jobs, also after a reload.
const jobsHost: JobsHost = {
  docName: (id) => app.docs.find((d) => d.id === id)?.name ?? id,
  toast: (msg, error) => app.toast(msg, error),
  // A job that ended while no dialog of this page followed it (closed, or started before a reload):
  // the server applied it; the page shows the changed document or the extracted one.
  applyUnfollowed: async (j) => {
    const d = j.document ?? j.answer?.document;
    if (!d) return;
    await app.adoptJobResult(d, j.document ? undefined : j.answer);
    app.toast(
      `${j.transform} finished on ${jobsHost.docName(j.doc)}${j.document ? `: ${d.name} opened` : ''}`,
    );
  },
};
const jobs = client ? new JobList(client, jobsHost) : null;
const openJobs = () => (jobs ? showJobsDialog($('dialogs'), jobs, jobsHost) : undefined);
if (jobs) {
  $('status').after(jobsIndicator(jobs, openJobs));
  jobs.start().catch((e: unknown) => app.toast(`cannot list the jobs: ${String(e)}`, true));
}
const toggle = (get: () => boolean, set: (v: boolean) => void) => () => set(!get());
menuBar($('menubar'), [
  [
    'File',
    [
      { id: 'new', label: 'New…', action: () => app.newDialog() },
      { id: 'open', label: 'Open…', action: () => app.openDialog() },
      { id: 'save', label: 'Save', shortcut: 'Ctrl+S', action: () => void app.save() },
      { id: 'save-as', label: 'Save as…', action: () => app.saveAsDialog() },
      { id: 'export', label: 'Export…', action: () => app.exportDialog() },
      { id: 'export-svg', label: 'Export canvas as SVG', action: () => void app.exportImage('svg') },
      { id: 'export-png', label: 'Export canvas as PNG', action: () => void app.exportImage('png') },
      { id: 'export-jpeg', label: 'Export canvas as JPEG', action: () => void app.exportImage('jpeg') },
    ],
  ],
  [
    'Edit',
    [
      { id: 'undo', label: 'Undo', shortcut: 'Ctrl+Z', action: () => void app.undo() },
      { id: 'redo', label: 'Redo', shortcut: 'Ctrl+Y', action: () => void app.redo() },
      { id: 'delete', label: 'Delete', shortcut: 'Del', action: () => void app.deleteSelection() },
      {
        id: 'make-function',
        label: 'Make a local function of the selection…',
        action: () => app.functionDialog(true),
      },
      { id: 'new-function', label: 'New local function…', action: () => app.functionDialog(false) },
    ],
  ],
  [
    'Model',
    [
      ...TRANSFORMS.map((t) => ({
        id: `transform-${t.id}`,
        label: t.label,
        action: () => app.transformDialog(t),
      })),
      { id: 'jobs', label: 'Jobs…', action: openJobs },
    ],
  ],
  ['Tools', () => tools.items()],
  [
    'View',
    [
      { id: 'fit', label: 'Fit to view', shortcut: 'F', action: () => c.fit() },
      {
        id: 'zoom-box',
        label: 'Zoom to box (drag)',
        shortcut: 'Alt+drag',
        action: () => (c.boxZoomNext = true),
      },
      {
        id: 'grid',
        label: 'Grid',
        action: toggle(
          () => c.renderer.showGrid,
          (v) => ((c.renderer.showGrid = v), c.renderer.invalidate()),
        ),
      },
      {
        id: 'constants',
        label: 'Show all constants',
        action: () => void c.setShowConstants(!c.showConstants),
      },
      { id: 'arrange', label: 'Arrange nodes', action: () => void app.arrange() },
      { id: 'expand-all', label: 'Expand all groups', action: () => void c.expandAll(true) },
      { id: 'collapse-all', label: 'Collapse all groups', action: () => void c.expandAll(false) },
    ],
  ],
]);

// One turn of the event loop before the fixture's synchronous graph and view model build: the layout
// worker that index.html made is started by a task of this thread, which would otherwise wait behind
// that build (and the job with it). With the server, its answers give the turns.
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

if (fixture === 'synthetic') {
  await turn();
  const nodes = Number(params.get('nodes') ?? 1000);
  const t0 = performance.now();
  const graph = syntheticGraph({
    nodes,
    scoped: params.get('scoped') === '1',
    seed: Number(params.get('seed') ?? 1),
    errors: 3,
  });
  const generatedMs = performance.now() - t0;
  void app
    .showStatic(graph, `synthetic-${nodes}.onnx`, params.get('expand') === 'all')
    .then(() => Object.assign(c.marks, { generatedMs, bootMs, appMs }));
} else {
  app.start(documents).catch((e: unknown) => app.toast(`cannot reach the studio server: ${String(e)}`, true));
}
