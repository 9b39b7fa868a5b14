// Messages between the main thread and the layout worker.
import type { HierGraph, HierResult } from './hierarchy';

export type ToWorker =
  | { type: 'graph'; graphId: number; graph: HierGraph }
  | { type: 'layout'; job: number; graphId: number; expanded: Uint8Array }
  | { type: 'cancel'; job: number };

export type FromWorker =
  | {
      type: 'done';
      job: number;
      result: HierResult;
      ms: number;
      started: number;
      finished: number;
      loaded: number; // when the worker's script ran: a message then could reach no handler yet
    }
  | { type: 'cancelled'; job: number }
  | { type: 'error'; job: number; message: string };
