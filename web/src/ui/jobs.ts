// Running and recent transformation jobs, reachable whatever happened to the dialog that started them:
// an indicator in the status bar ("1 job: amp 35 %") and the Model > Jobs list (progress, Cancel, log).
// The list starts from GET /api/jobs (so a reloaded page finds the jobs it started) and follows the
// pushed "job" events. A job that ends while no dialog of this page follows it (runJob, transforms.ts)
// is applied here: its document is fetched again, or its extracted model opened in a tab.
import type { DocumentInfo, JobInfo, TransformLog } from '../api/types';
import { clear, h } from './dom';
import './jobs.css';
import { followedJobs, jobStatus, logLines } from './transforms';

/** What the list needs of the server (StudioClient; a fake in the unit tests). */
export interface JobsApi {
  jobs(): Promise<{ jobs: JobInfo[] }>;
  job(id: string): Promise<JobInfo>;
  cancelJob(id: string): Promise<JobInfo>;
  events(): { subscribe(type: string, fn: (data: unknown) => void): () => void };
}

/** What the list needs of the app: document names, and what to do with a job nobody followed. */
export interface JobsHost {
  docName(id: string): string;
  /** A job that succeeded while no dialog followed it: `job` has its answer. */
  applyUnfollowed(job: JobInfo): Promise<void>;
  toast(msg: string, error?: boolean): void;
}

/** Folds job `j` (an event or a listing's row) into `jobs`: a newer view replaces the one held, but an
 *  ended job never goes back to running (a late event, or a listing taken before its end). Returns
 *  whether it changed something. */
export function foldJob(jobs: Map<string, JobInfo>, j: JobInfo): boolean {
  const held = jobs.get(j.id);
  if (held && held.state !== 'running' && j.state === 'running') return false;
  if (held && held.state === 'running' && j.state === 'running' && j.seconds < held.seconds) return false;
  // The event of an end leaves the answer and log out: what the list fetched stays.
  jobs.set(j.id, { ...held, ...j });
  return true;
}

/** The status bar's words: empty when nothing runs and nothing ended unseen. */
export function indicatorText(jobs: Iterable<JobInfo>): string {
  const running = [...jobs].filter((j) => j.state === 'running');
  if (!running.length) return '';
  const one = running[0];
  const pct = `${Math.round(one.progress * 100)} %`;
  if (running.length === 1) return `1 job: ${one.transform} ${pct}`;
  return `${running.length} jobs: ${one.transform} ${pct}, …`;
}

/** A job's log for the list: the transformation's log, or why it failed, or nothing yet. */
export function jobLog(j: JobInfo): string[] {
  if (j.state === 'failed') return [`error: ${j.error ?? 'failed'}`];
  if (j.state === 'cancelled') return ['cancelled: the model is unchanged'];
  const log: TransformLog | undefined = j.log ?? j.answer?.log;
  return log ? logLines(log) : [];
}

export class JobList {
  readonly jobs = new Map<string, JobInfo>();
  private readonly changed = new Set<() => void>();
  private started = false;

  constructor(
    private readonly api: JobsApi,
    private readonly host: JobsHost,
  ) {}

  /** Lists the server's jobs and follows their events from now on. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.api.events().subscribe('job', (data) => this.seen(data as JobInfo, true));
    const { jobs } = await this.api.jobs();
    for (const j of jobs) this.seen(j, false);
  }

  /** Calls `fn` after each change; returns what stops it. */
  onChange(fn: () => void): () => void {
    this.changed.add(fn);
    return () => this.changed.delete(fn);
  }

  /** Newest first. */
  list(): JobInfo[] {
    return [...this.jobs.values()].reverse();
  }

  cancel(id: string): Promise<void> {
    return this.api.cancelJob(id).then(
      (j) => void this.seen(j, false),
      (e: unknown) => this.host.toast(String((e as Error).message ?? e), true),
    );
  }

  /** The job with its answer or log (fetched once it ended). */
  async details(id: string): Promise<JobInfo> {
    const j = await this.api.job(id);
    this.seen(j, false);
    return this.jobs.get(id)!;
  }

  private seen(j: JobInfo, live: boolean): void {
    const before = this.jobs.get(j.id);
    if (!foldJob(this.jobs, j)) return;
    for (const fn of this.changed) fn();
    const ended = live && before?.state === 'running' && j.state !== 'running';
    if (!ended) return;
    // A dialog's runJob applies its own job; a job no dialog follows is applied here.
    const followed = followedJobs.get(j.id);
    if (!followed && j.state === 'succeeded') return void this.applyUnfollowed(j.id);
    // How it ended is told where no dialog shows it (the dialog was closed).
    if (!followed?.()) {
      const what = `${j.transform} on ${this.host.docName(j.doc)}`;
      if (j.state === 'failed') this.host.toast(`${what} failed: ${j.error ?? 'see Model > Jobs'}`, true);
      else if (j.state === 'cancelled') this.host.toast(`${what} cancelled: the model is unchanged`);
      else this.host.toast(`${what} finished`);
    }
  }

  private async applyUnfollowed(id: string): Promise<void> {
    try {
      await this.host.applyUnfollowed(await this.details(id));
    } catch (e) {
      this.host.toast(String((e as Error).message ?? e), true);
    }
  }
}

/** The status bar's jobs indicator: hidden while nothing runs; a click opens the list. */
export function jobsIndicator(list: JobList, open: () => void): HTMLElement {
  const el = h('button', {
    className: 'jobs-indicator',
    'data-testid': 'jobs-indicator',
    title: 'Running transformations (Model > Jobs)',
    hidden: true,
    onclick: open,
  });
  const show = () => {
    const text = indicatorText(list.jobs.values());
    el.textContent = text;
    el.hidden = !text;
  };
  list.onChange(show);
  show();
  return el;
}

/** The Model > Jobs list, in the dialogs layer: a row per job (newest first) with its progress, its
 *  Cancel while it runs, and its log on demand; kept up to date while open. */
export function showJobsDialog(container: HTMLElement, list: JobList, host: JobsHost): void {
  clear(container);
  const rows = h('div', { className: 'jobs-rows', 'data-testid': 'jobs-list' });
  const opened = new Map<string, string[]>(); // job id -> log shown
  const stop = list.onChange(() => render());
  const close = () => (stop(), clear(container));
  const render = () => {
    if (!container.contains(rows)) return void stop();
    clear(rows);
    const jobs = list.list();
    if (!jobs.length) rows.append(h('div', { className: 'hint', text: 'No transformation has run yet.' }));
    for (const j of jobs) rows.append(jobRow(j, list, host, opened, render));
  };
  container.append(
    h(
      'div',
      { className: 'dialog jobs-dialog', role: 'dialog', 'data-testid': 'jobs-dialog' },
      h(
        'div',
        { className: 'dialog-title' },
        'Jobs',
        h('button', { className: 'dialog-close', text: '×', onclick: close }),
      ),
      rows,
    ),
  );
  render();
}

function jobRow(
  j: JobInfo,
  list: JobList,
  host: JobsHost,
  opened: Map<string, string[]>,
  render: () => void,
): HTMLElement {
  const bar = h('progress', { max: 1, value: j.state === 'succeeded' ? 1 : j.progress });
  const cancel = h('button', {
    text: 'Cancel',
    'data-testid': 'job-cancel',
    disabled: j.cancel_requested,
    onclick: () => ((cancel.disabled = true), void list.cancel(j.id)),
  });
  const logButton = h('button', {
    text: opened.has(j.id) ? 'Hide log' : 'Log',
    'data-testid': 'job-log-toggle',
    onclick: async () => {
      if (opened.delete(j.id)) return render();
      opened.set(j.id, []);
      const full = j.state === 'running' ? j : await list.details(j.id).catch(() => j);
      opened.set(j.id, jobLog(full));
      render();
    },
  });
  const log = opened.get(j.id);
  return h(
    'div',
    { className: `job-row ${j.state}`, 'data-testid': 'job-row', 'data-job': j.id, 'data-state': j.state },
    h(
      'div',
      { className: 'job-line' },
      h('span', { className: 'job-name', text: `${j.transform} on ${host.docName(j.doc)}` }),
      bar,
      h('span', { className: 'job-status', 'data-testid': 'job-status', text: jobStatus(j) }),
      j.state === 'running' ? cancel : null,
      j.state === 'running' ? null : logButton,
    ),
    log ? h('pre', { className: 'transform-log', 'data-testid': 'job-log', text: log.join('\n') }) : null,
  );
}

/** Whether a document is the one a job changed (its answer names it). */
export function answerDoc(j: JobInfo): DocumentInfo | undefined {
  return j.document ?? j.answer?.document;
}
