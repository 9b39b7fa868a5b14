import { describe, expect, it } from 'vitest';
import { EventHub, type EventSourceLike } from '../../src/api/events';
import type { ApiGraph, JobInfo, TransformLog } from '../../src/api/types';
import { foldJob, indicatorText, JobList, jobLog, type JobsApi, type JobsHost } from '../../src/ui/jobs';
import {
  followedJobs,
  matchingValues,
  readOptions,
  runJob,
  toggleName,
  TRANSFORMS,
  valueNames,
  type JobView,
} from '../../src/ui/transforms';

class FakeSource implements EventSourceLike {
  listeners = new Map<string, Array<(e: MessageEvent) => void>>();
  addEventListener(type: string, fn: (e: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close(): void {}
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

const log: TransformLog = {
  counts: [['nodes kept float32 for accuracy', 2]],
  warnings: [],
  details: [],
  changed: true,
};

/** A server with a listing and a job answer, driven by the test through `source`. */
function fakeServer(listing: JobInfo[], full: Record<string, JobInfo>) {
  const source = new FakeSource();
  const hub = new EventHub(() => source);
  const calls: string[] = [];
  const api: JobsApi = {
    jobs: () => (calls.push('list'), Promise.resolve({ jobs: listing })),
    job: (id) => (calls.push(`get ${id}`), Promise.resolve(full[id])),
    cancelJob: (id) => (
      calls.push(`cancel ${id}`),
      Promise.resolve(job({ id, cancel_requested: true, seconds: 9 }))
    ),
    events: () => hub,
  };
  const applied: JobInfo[] = [];
  const toasts: string[] = [];
  const host: JobsHost = {
    docName: (id) => `model ${id}`,
    applyUnfollowed: (j) => (applied.push(j), Promise.resolve()),
    toast: (m) => void toasts.push(m),
  };
  return { source, api, host, calls, applied, toasts };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('the jobs list', () => {
  it('folds events and listings: newer views win, an ended job never runs again', () => {
    const jobs = new Map<string, JobInfo>();
    expect(foldJob(jobs, job({ progress: 0.2, seconds: 1 }))).toBe(true);
    expect(foldJob(jobs, job({ progress: 0.1, seconds: 0.5 }))).toBe(false); // an older listing
    expect(foldJob(jobs, job({ progress: 0.4, seconds: 2, cancel_requested: true }))).toBe(true);
    expect(foldJob(jobs, job({ state: 'cancelled', seconds: 2.1 }))).toBe(true);
    expect(foldJob(jobs, job({ progress: 0.5, seconds: 2.05 }))).toBe(false); // a late event
    expect(jobs.get('j1')!.state).toBe('cancelled');
    // An end's event has no log: the one fetched stays.
    foldJob(jobs, job({ id: 'j2', state: 'succeeded', log }));
    foldJob(jobs, job({ id: 'j2', state: 'succeeded' }));
    expect(jobs.get('j2')!.log).toEqual(log);
  });

  it('says what runs in the status bar, and nothing when nothing runs', () => {
    expect(indicatorText([])).toBe('');
    expect(indicatorText([job({ state: 'succeeded' })])).toBe('');
    expect(indicatorText([job({ progress: 0.354 })])).toBe('1 job: amp 35 %');
    expect(indicatorText([job({ transform: 'fp16', progress: 0.5 }), job({ id: 'j2' })])).toBe(
      '2 jobs: fp16 50 %, …',
    );
  });

  it("shows a job's log, its error, or its cancel", () => {
    expect(jobLog(job({ state: 'succeeded', log }))).toEqual(['nodes kept float32 for accuracy: 2']);
    expect(jobLog(job({ state: 'succeeded', answer: { log } } as unknown as Partial<JobInfo>))).toEqual([
      'nodes kept float32 for accuracy: 2',
    ]);
    expect(jobLog(job({ state: 'failed', error: "node 'nope' is not in the model" }))).toEqual([
      "error: node 'nope' is not in the model",
    ]);
    expect(jobLog(job({ state: 'cancelled' }))).toEqual(['cancelled: the model is unchanged']);
    expect(jobLog(job({}))).toEqual([]);
  });

  it('starts from the server listing (a reloaded page) and follows the events, newest first', async () => {
    const s = fakeServer(
      [job({ id: 'j1', state: 'succeeded' }), job({ id: 'j2', progress: 0.3, seconds: 3 })],
      {},
    );
    const list = new JobList(s.api, s.host);
    let changes = 0;
    list.onChange(() => changes++);
    await list.start();
    expect(list.list().map((j) => j.id)).toEqual(['j2', 'j1']);
    s.source.emit('job', job({ id: 'j2', progress: 0.6, seconds: 4 }));
    expect(list.jobs.get('j2')!.progress).toBe(0.6);
    expect(changes).toBe(3);
    await list.cancel('j2');
    expect(s.calls).toEqual(['list', 'cancel j2']);
    expect(list.jobs.get('j2')!.cancel_requested).toBe(true);
  });

  it('applies a job that ends unfollowed (its dialog closed, or a reload), not one a dialog follows', async () => {
    const done = (id: string) =>
      job({ id, state: 'succeeded', progress: 1, seconds: 5, answer: { log } } as never);
    const s = fakeServer([job({ id: 'j7', seconds: 1 })], { j7: done('j7'), j8: done('j8') });
    const list = new JobList(s.api, s.host);
    await list.start();
    followedJobs.set('j8', () => true);
    s.source.emit('job', job({ id: 'j8', seconds: 1 }));
    s.source.emit('job', job({ id: 'j8', state: 'succeeded', seconds: 2 }));
    s.source.emit('job', job({ id: 'j7', state: 'succeeded', seconds: 5 }));
    await tick();
    expect(s.applied.map((j) => j.id)).toEqual(['j7']);
    expect(s.applied[0].answer).toBeDefined(); // fetched with its answer
    // A listing's finished job is history, not applied again.
    const again = fakeServer([done('j9')], {});
    await new JobList(again.api, again.host).start();
    expect(again.applied).toEqual([]);
  });

  it('tells how a followed job ended only when its dialog was closed', async () => {
    const s = fakeServer([], {});
    const list = new JobList(s.api, s.host);
    await list.start();
    let shown = true;
    followedJobs.set('j20', () => shown);
    followedJobs.set('j21', () => shown);
    s.source.emit('job', job({ id: 'j20', transform: 'fp16', seconds: 1 }));
    s.source.emit('job', job({ id: 'j20', transform: 'fp16', state: 'failed', error: 'bad', seconds: 2 }));
    expect(s.toasts).toEqual([]); // its dialog shows it
    shown = false;
    s.source.emit('job', job({ id: 'j21', seconds: 1 }));
    s.source.emit('job', job({ id: 'j21', state: 'failed', error: "node 'x' is missing", seconds: 2 }));
    expect(s.toasts).toEqual(["amp on model d1 failed: node 'x' is missing"]);
    expect(s.applied).toEqual([]); // the dialog's runJob applies what succeeds
  });

  it('follows a job a dialog started, so the list leaves it to the dialog', async () => {
    const s = fakeServer([], {});
    const hub = s.api.events();
    const view: JobView = { update: () => undefined, onCancel: () => undefined };
    const api = {
      startJob: () => Promise.resolve(job({ id: 'j42' })),
      job: () => Promise.resolve(job({ id: 'j42', state: 'cancelled' })),
      cancelJob: () => Promise.resolve(job({ id: 'j42' })),
      events: () => hub,
    };
    const run = runJob(api, 'd1', 'fp16', {}, view).catch((e: Error) => e.message);
    await tick();
    expect(followedJobs.has('j42')).toBe(true);
    s.source.emit('job', job({ id: 'j42', state: 'cancelled' }));
    expect(await run).toBe('cancelled: the model is unchanged');
  });
});

describe("the cut's tensors", () => {
  const g = {
    inputs: [{ name: 'x' }, { name: 'W' }],
    initializers: [{ name: 'W' }],
    nodes: [
      { outputs: ['mm'], inputs: ['x', 'W'] },
      { outputs: ['add', ''], inputs: ['mm'] },
      { outputs: ['relu'], inputs: ['add'] },
    ],
    outputs: [{ name: 'relu' }],
  } as unknown as ApiGraph;

  it('lists graph inputs and node outputs, not initializers', () => {
    expect(valueNames(g)).toEqual(['x', 'mm', 'add', 'relu']);
    expect(valueNames(null)).toEqual([]);
  });

  it('filters by a part of the name, the selected links first', () => {
    const all = valueNames(g);
    expect(matchingValues(all, 'M')).toEqual(['mm']);
    expect(matchingValues(all, '', ['add'])).toEqual(['add', 'x', 'mm', 'relu']);
    expect(matchingValues(all, 're', ['add'])).toEqual(['relu']);
    expect(matchingValues(all, '', [], 2)).toEqual(['x', 'mm']);
  });

  it('offers every selected link first, each once, leaving out names the graph lacks', () => {
    const all = valueNames(g);
    expect(matchingValues(all, '', ['relu', 'mm', 'relu'])).toEqual(['relu', 'mm', 'x', 'add']);
    expect(matchingValues(all, '', ['gone', 'add'])).toEqual(['add', 'x', 'mm', 'relu']);
    expect(matchingValues(all, 'd', ['relu', 'add'])).toEqual(['add']);
    expect(matchingValues(all, '', ['relu', 'mm', 'add'], 2)).toEqual(['relu', 'mm']);
  });

  it('adds and takes out names of a field, which the extraction reads as lists', () => {
    expect(toggleName('', 'mm')).toBe('mm');
    expect(toggleName('mm', 'add')).toBe('mm, add');
    expect(toggleName('mm, add', 'mm')).toBe('add');
    const extract = TRANSFORMS.find((t) => t.id === 'extract')!;
    expect(readOptions(extract, { inputs: toggleName('x', 'mm'), outputs: 'relu' })).toEqual({
      inputs: ['x', 'mm'],
      outputs: ['relu'],
    });
  });
});
