import { describe, expect, it } from 'vitest';
import { LayoutCancelled, LayoutClient } from '../../src/layout/client';
import type { HierGraph } from '../../src/layout/hierarchy';
import { PRESTART_GLOBAL, takePrestartedWorker } from '../../src/layout/prestart';

/** A worker that records messages and answers only when told to. */
class FakeWorker {
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  sent: Array<{ type: string; job?: number }> = [];
  terminated = false;
  postMessage(m: { type: string; job?: number }): void {
    this.sent.push(m);
  }
  terminate(): void {
    this.terminated = true;
  }
  answer(m: unknown): void {
    this.onmessage?.({ data: m } as MessageEvent);
  }
}

const graph = {} as HierGraph;

describe('layout client', () => {
  it('supersedes a job in flight with a newer one', async () => {
    const w = new FakeWorker();
    const client = new LayoutClient(() => w as unknown as Worker);
    client.setGraph(graph);
    const first = client.layout(new Uint8Array(1));
    const second = client.layout(new Uint8Array(1));
    await expect(first).rejects.toBeInstanceOf(LayoutCancelled);
    w.answer({ type: 'done', job: 2, result: { width: 1 }, ms: 1, started: 0, finished: 0 });
    await expect(second).resolves.toMatchObject({ result: { width: 1 } });
  });

  it('cancels cooperatively, and replaces a worker that does not answer', async () => {
    const workers: FakeWorker[] = [];
    const client = new LayoutClient(() => {
      workers.push(new FakeWorker());
      return workers[workers.length - 1] as unknown as Worker;
    });
    client.setGraph(graph);
    const job = client.layout(new Uint8Array(1));
    client.cancel(20);
    expect(workers[0].sent.at(-1)).toMatchObject({ type: 'cancel', job: 1 });
    await expect(job).rejects.toBeInstanceOf(LayoutCancelled);
    expect(workers[0].terminated).toBe(true);
    expect(workers).toHaveLength(2);
    expect(workers[1].sent).toHaveLength(0);
    void client.layout(new Uint8Array(1)).catch(() => {});
    // The new worker gets the graph again, before the job.
    expect(workers[1].sent.map((m) => m.type)).toEqual(['graph', 'layout']);
  });

  it('sends the graph with the next layout job only, and only its last version', () => {
    const w = new FakeWorker();
    const client = new LayoutClient(() => w as unknown as Worker);
    const a = { leafW: new Float32Array(1) } as HierGraph;
    const b = { leafW: new Float32Array(2) } as HierGraph;
    client.setGraph(a);
    client.setGraph(b); // an edit laid out on the main thread, then another
    expect(w.sent).toHaveLength(0);
    void client.layout(new Uint8Array(1)).catch(() => {});
    void client.layout(new Uint8Array(1)).catch(() => {});
    expect(w.sent.map((m) => m.type)).toEqual(['graph', 'layout', 'layout']);
    const sent = w.sent[0] as unknown as { graph: HierGraph; graphId: number };
    expect(sent.graph).toBe(b);
    expect(w.sent[1]).toMatchObject({ graphId: sent.graphId });
  });

  it('reports a worker error to the job waiting for it', async () => {
    const w = new FakeWorker();
    const client = new LayoutClient(() => w as unknown as Worker);
    client.setGraph(graph);
    const job = client.layout(new Uint8Array(1));
    w.answer({ type: 'error', job: 1, message: 'layout asked before any graph was sent' });
    await expect(job).rejects.toThrow('layout asked before any graph was sent');
  });
});

describe('layout worker made by the page', () => {
  it('passes on when the worker script ran, with the times of the job', async () => {
    const w = new FakeWorker();
    const client = new LayoutClient(() => w as unknown as Worker);
    client.setGraph(graph);
    const job = client.layout(new Uint8Array(1));
    w.answer({ type: 'done', job: 1, result: { width: 3 }, ms: 1, started: 20, finished: 30, loaded: 10 });
    await expect(job).resolves.toMatchObject({ result: { width: 3 }, started: 20, finished: 30, loaded: 10 });
  });

  it('is taken once: a restarted worker is a new one', () => {
    const page = new FakeWorker() as unknown as Worker;
    const holder: Record<string, Worker | undefined> = { [PRESTART_GLOBAL]: page };
    expect(takePrestartedWorker(holder)).toBe(page);
    expect(takePrestartedWorker(holder)).toBeNull();
    expect(takePrestartedWorker({})).toBeNull();
  });
});
