// The layout worker: holds the current graph and the per-group cache; runs one job at a time, yielding
// to its event loop between groups so that a cancel (or a newer job, which supersedes) gets through.
import { layoutSteps, type HierGraph, type LayoutCache } from './hierarchy';
import type { FromWorker, ToWorker } from './protocol';

// When this script ran (the first render's marks: a worker made by the page runs before the app does).
const loaded = performance.timeOrigin + performance.now();
let graph: HierGraph | null = null;
let graphId = -1;
let cache: LayoutCache = new Map();
let latestJob = -1;
const cancelled = new Set<number>();

const post = (m: FromWorker, transfer: Transferable[] = []) =>
  (self as unknown as Worker).postMessage(m, transfer);
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

async function run(job: number, expanded: Uint8Array): Promise<void> {
  if (!graph) return post({ type: 'error', job, message: 'layout asked before any graph was sent' });
  const t0 = performance.now();
  const steps = layoutSteps(graph, expanded, cache);
  let last = performance.now();
  for (;;) {
    const s = steps.next();
    if (s.done) {
      const r = s.value;
      const transfer = [r.itemX, r.itemY, r.itemW, r.itemH, r.routePts].map((a) => a.buffer);
      const abs = (t: number) => performance.timeOrigin + t;
      return post(
        {
          type: 'done',
          job,
          result: r,
          ms: performance.now() - t0,
          started: abs(t0),
          finished: abs(performance.now()),
          loaded,
        },
        transfer,
      );
    }
    if (performance.now() - last > 15) {
      await tick();
      last = performance.now();
      if (cancelled.has(job) || job !== latestJob) return post({ type: 'cancelled', job });
    }
  }
}

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data;
  if (m.type === 'graph') {
    graph = m.graph;
    graphId = m.graphId;
    // Kept across graph versions: keys cover each group's inputs, so an entry is right or missed.
    if (cache.size > 20000) cache = new Map();
  } else if (m.type === 'cancel') {
    cancelled.add(m.job);
  } else if (m.graphId !== graphId) {
    post({
      type: 'error',
      job: m.job,
      message: `layout of graph ${m.graphId}, but the worker holds ${graphId}`,
    });
  } else {
    latestJob = m.job;
    run(m.job, m.expanded).catch((e: unknown) => post({ type: 'error', job: m.job, message: String(e) }));
  }
};
