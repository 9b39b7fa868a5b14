// Main-thread side of the layout worker. A new layout supersedes the one in flight; cancel() stops it
// cooperatively and, if the worker is stuck inside one huge group, terminates and restarts it.
import type { HierGraph, HierResult } from './hierarchy';
import type { FromWorker, ToWorker } from './protocol';

export class LayoutCancelled extends Error {
  constructor() {
    super('layout cancelled');
  }
}

export interface Laid {
  result: HierResult;
  ms: number;
  started: number;
  finished: number;
  loaded: number;
}

interface Pending {
  resolve: (r: Laid) => void;
  reject: (e: Error) => void;
}

export class LayoutClient {
  private worker!: Worker;
  private job = 0;
  private graphId = 0;
  private graph: HierGraph | null = null;
  private pending = new Map<number, Pending>();

  constructor(private readonly make: () => Worker) {
    this.start();
  }

  private start(): void {
    this.worker = this.make();
    this.worker.onmessage = (ev: MessageEvent<FromWorker>) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => {
      for (const p of this.pending.values()) p.reject(new Error(`layout worker failed: ${ev.message}`));
      this.pending.clear();
    };
    this.unsent = !!this.graph; // a restarted worker needs the graph again
  }

  private send(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  private onMessage(m: FromWorker): void {
    const p = this.pending.get(m.job);
    if (!p) return;
    this.pending.delete(m.job);
    if (m.type === 'done')
      p.resolve({ result: m.result, ms: m.ms, started: m.started, finished: m.finished, loaded: m.loaded });
    else if (m.type === 'cancelled') p.reject(new LayoutCancelled());
    else p.reject(new Error(m.message));
  }

  /** The graph is sent with the next layout job, not now: an edit whose layout is patched on the main
   *  thread (layout/patch.ts) then posts nothing (copying a 50,000-leaf input to the worker was a few
   *  ms of every edit), and only the last of several edits' inputs is sent. */
  setGraph(graph: HierGraph): void {
    this.graph = graph;
    this.graphId++;
    this.unsent = true;
  }
  private unsent = false;

  /** started/finished: when the worker began and ended the job, loaded: when its script ran, as
   *  performance.timeOrigin-based times. */
  layout(expanded: Uint8Array): Promise<Laid> {
    const job = ++this.job;
    for (const [id, p] of this.pending) {
      p.reject(new LayoutCancelled());
      this.pending.delete(id);
    }
    if (this.unsent && this.graph) this.send({ type: 'graph', graphId: this.graphId, graph: this.graph });
    this.unsent = false;
    return new Promise((resolve, reject) => {
      this.pending.set(job, { resolve, reject });
      this.send({ type: 'layout', job, graphId: this.graphId, expanded: expanded.slice() });
    });
  }

  /** Cancels the job in flight; after `hardMs` without an answer the worker is replaced. */
  cancel(hardMs = 300): void {
    const job = this.job;
    if (!this.pending.has(job)) return;
    this.send({ type: 'cancel', job });
    setTimeout(() => {
      const p = this.pending.get(job);
      if (!p) return;
      this.pending.delete(job);
      this.worker.terminate();
      this.start();
      p.reject(new LayoutCancelled());
    }, hardMs);
  }

  dispose(): void {
    this.worker.terminate();
  }
}
