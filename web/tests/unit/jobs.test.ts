import { describe, expect, it } from 'vitest';
import { EventHub, type EventSourceLike } from '../../src/api/events';
import type { ApiGraph, ApiNode, JobInfo, ToolEvent, ToolRun } from '../../src/api/types';
import { foldToolEvent, type RunView } from '../../src/ui/tools';
import {
  cutOfSelection,
  extractInitial,
  jobStatus,
  readOptions,
  runJob,
  setLine,
  TRANSFORMS,
  type JobApi,
  type JobView,
} from '../../src/ui/transforms';

const spec = (id: string) => TRANSFORMS.find((t) => t.id === id)!;

/** An EventSource the test feeds by hand. */
class FakeSource implements EventSourceLike {
  listeners = new Map<string, Array<(e: MessageEvent) => void>>();
  closed = false;
  addEventListener(type: string, fn: (e: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close(): void {
    this.closed = true;
  }
  emit(type: string, data: unknown): void {
    for (const fn of this.listeners.get(type) ?? []) fn({ data: JSON.stringify(data) } as MessageEvent);
  }
}

const job = (j: Partial<JobInfo>): JobInfo => ({
  id: 'j1',
  doc: 'd1',
  transform: 'amp',
  state: 'running',
  progress: 0,
  stage: '',
  cancel_requested: false,
  seconds: 0,
  ...j,
});

/** A server whose job `j1` is driven by the test through `source`. */
function fakeServer(final: JobInfo) {
  const source = new FakeSource();
  const hub = new EventHub(() => source);
  const calls: string[] = [];
  const api: JobApi = {
    startJob: (doc, transform, options) => {
      calls.push(`start ${doc} ${transform} ${JSON.stringify(options)}`);
      return Promise.resolve(job({}));
    },
    job: (id) => (calls.push(`get ${id}`), Promise.resolve(final)),
    cancelJob: (id) => (calls.push(`cancel ${id}`), Promise.resolve(job({ cancel_requested: true }))),
    events: () => hub,
  };
  const seen: JobInfo[] = [];
  let cancel: () => void = () => undefined;
  const view: JobView = { update: (j) => seen.push(j), onCancel: (fn) => (cancel = fn) };
  return { source, hub, api, calls, seen, view, cancel: () => cancel() };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('transformation jobs', () => {
  it('reads amp and extract options as the server takes them', () => {
    expect(
      readOptions(spec('amp'), {
        inputs: 'input_ids = data/ids.npy\nmask=data/mask.npy',
        shapes: 'x=1x128',
        rtol: '0.05',
        atol: '1e-4',
        backend: 'cuda',
        max_runs: '20',
      }),
    ).toEqual({
      inputs: { input_ids: 'data/ids.npy', mask: 'data/mask.npy' },
      shapes: { x: '1x128' },
      rtol: 0.05,
      atol: 1e-4,
      backend: 'cuda',
      max_runs: 20,
    });
    expect(() => readOptions(spec('amp'), { rtol: '-1' })).toThrow(
      "relative tolerance: '-1' is not a non-negative number",
    );
    expect(() => readOptions(spec('amp'), { inputs: 'ids.npy' })).toThrow(
      "inputs: 'ids.npy' is not NAME=VALUE (e.g. x=inputs/x.npy)",
    );
    expect(readOptions(spec('extract'), { inputs: 'a, b', outputs: 'c' })).toEqual({
      inputs: ['a', 'b'],
      outputs: ['c'],
    });
  });

  it('follows a job through its events to its answer', async () => {
    const answer = { log: { counts: [], warnings: [], details: [], changed: true } };
    const final = job({ state: 'succeeded', progress: 1, seconds: 2, answer } as unknown as Partial<JobInfo>);
    const s = fakeServer(final);
    const done = runJob(s.api, 'd1', 'amp', { atol: 1 }, s.view);
    await tick();
    s.source.emit('job', job({ stage: 'model runs', progress: 0.25, seconds: 1 }));
    s.source.emit('job', job({ id: 'j2', state: 'failed' })); // another job's: not this one
    s.source.emit('job', job({ state: 'succeeded', progress: 1, seconds: 2 }));
    const end = await done;
    expect(end.answer).toEqual(answer);
    expect(s.calls).toEqual(['start d1 amp {"atol":1}', 'get j1']);
    expect(s.seen.map((j) => jobStatus(j))).toEqual([
      'running… (0.0 s)',
      'model runs… 25 % (1.0 s)',
      'done in 2.0 s',
      'done in 2.0 s',
    ]);
  });

  it('cancels, and says so; a failure is the server message', async () => {
    const s = fakeServer(job({ state: 'cancelled' }));
    const done = runJob(s.api, 'd1', 'amp', {}, s.view);
    await tick();
    s.cancel();
    s.source.emit('job', job({ cancel_requested: true, seconds: 1 }));
    expect(jobStatus(s.seen[s.seen.length - 1])).toBe('cancelling… 1.0 s');
    s.source.emit('job', job({ state: 'cancelled', seconds: 1.5 }));
    await expect(done).rejects.toThrow('cancelled: the model is unchanged');
    expect(s.calls).toContain('cancel j1');
    expect(jobStatus(job({ state: 'cancelled', seconds: 1.5 }))).toBe(
      'cancelled after 1.5 s: the model is unchanged',
    );
    const f = fakeServer(job({}));
    const failed = runJob(f.api, 'd1', 'fp16', {}, f.view);
    await tick();
    f.source.emit('job', job({ state: 'failed', error: "node 'nope' is not in the graph", status: 422 }));
    await expect(failed).rejects.toThrow("node 'nope' is not in the graph");
  });

  it('asks for the job when the stream is quiet, and sees events that came before it listened', async () => {
    const final = job({ state: 'succeeded', document: { id: 'd2' } } as unknown as Partial<JobInfo>);
    const quiet = fakeServer(final);
    const end = await runJob(quiet.api, 'd1', 'extract', {}, quiet.view, 40);
    expect(end.document).toEqual({ id: 'd2' });
    // An end pushed before runJob subscribed (the answer and the event race) is replayed.
    const early = fakeServer(final);
    early.hub.start();
    early.source.emit('job', job({ state: 'succeeded' }));
    await expect(runJob(early.api, 'd1', 'extract', {}, early.view, 60000)).resolves.toBe(final);
  });
});

describe('extraction from the selection', () => {
  const node = (id: number, op: string, inputs: string[], outputs: string[], extra = {}): ApiNode => ({
    id,
    name: `n${id}`,
    op_type: op,
    domain: '',
    scope: '',
    inputs,
    outputs,
    attributes: [],
    ...extra,
  });
  // x -> n1 (a) -> n2 (b, with W) -> n3 (c) -> y ; n4 reads b too
  const nodes = [
    node(1, 'Relu', ['x'], ['a']),
    node(2, 'MatMul', ['a', 'W'], ['b']),
    node(3, 'Tanh', ['b'], ['c']),
    node(4, 'Neg', ['b'], ['d']),
    node(5, 'Loop', ['t', '', 'c'], ['e'], { subgraphs: [{ attribute: 'body', index: 0, nodes: 3 }] }),
    node(6, 'Block', ['e'], ['y'], { function: { domain: 'local', name: 'Block' } }),
  ];
  const g = {
    nodes,
    inputs: [{ name: 'x', type: 'tensor(float)' }],
    outputs: [{ name: 'y', type: 'tensor(float)' }],
    initializers: [{ name: 'W', dtype: 'float', shape: [4, 4], bytes: 64 }],
  } as unknown as ApiGraph;

  it('cuts around the selected nodes: what they read from outside, what is read of them outside', () => {
    expect(cutOfSelection([nodes[0], nodes[1]], g)).toEqual({ inputs: ['x'], outputs: ['b'] });
    expect(cutOfSelection([nodes[1], nodes[2], nodes[3]], g)).toEqual({ inputs: ['a'], outputs: ['c'] });
  });
  it('suggests a subgraph, a function or a cut', () => {
    expect(extractInitial([nodes[4]], g)).toEqual({ subgraph: 'n5:body' });
    expect(extractInitial([nodes[5]], g)).toEqual({ function: 'local:Block' });
    expect(extractInitial([nodes[0], nodes[1]], g)).toEqual({ inputs: 'x', outputs: 'b' });
    expect(extractInitial([], g)).toEqual({});
  });
  it('sets one NAME=FILE line of the inputs field', () => {
    expect(setLine('', 'x', 'a.npy')).toBe('x=a.npy');
    expect(setLine('x=a.npy\nm=m.npy', 'x', 'd/b.npy')).toBe('m=m.npy\nx=d/b.npy');
  });
});

describe('pushed tool output', () => {
  const run = (r: Partial<ToolRun>): ToolRun => ({
    id: 'r1',
    tool: 't',
    output: '',
    next: 0,
    done: false,
    cancelled: false,
    output_file: '',
    ...r,
  });
  const ev = (e: Partial<ToolEvent>): ToolEvent => ({
    id: 'r1',
    tool: 't',
    from: 0,
    output: '',
    next: 0,
    done: false,
    ...e,
  });
  it('appends in order, skips what it has, and names a gap', () => {
    const v: RunView = { run: run({ output: 'ab', next: 2 }), text: 'ab' };
    expect(foldToolEvent(v, ev({ from: 0, output: 'ab', next: 2 }))).toBe('old');
    expect(foldToolEvent(v, ev({ from: 2, output: 'cd', next: 4 }))).toBe('applied');
    expect(v.text).toBe('abcd');
    expect(foldToolEvent(v, ev({ from: 6, output: 'gh', next: 8 }))).toBe('gap');
    expect(foldToolEvent(v, ev({ from: 3, output: 'de', next: 5 }))).toBe('gap');
    expect(foldToolEvent(v, ev({ from: 4, next: 4, done: true, exit_status: 2 }))).toBe('applied');
    expect(v.run.done).toBe(true);
    expect(v.run.exit_status).toBe(2);
    expect(foldToolEvent(v, ev({ id: 'r2', from: 4, output: 'x', next: 5 }))).toBe('old');
  });
  it('replays recent events to a late listener and keeps listening', () => {
    const source = new FakeSource();
    const hub = new EventHub(() => source);
    hub.start();
    source.emit('tool', ev({ output: 'early' }));
    const got: string[] = [];
    const stop = hub.subscribe('tool', (d) => got.push((d as ToolEvent).output));
    source.emit('tool', ev({ output: 'late' }));
    stop();
    source.emit('tool', ev({ output: 'after stop' }));
    expect(got).toEqual(['early', 'late']);
  });
});
