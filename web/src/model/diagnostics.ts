// Type-check lists: an edit's answer carries what changed in the list (a diff from the version the app
// holds), or the whole list; most edits leave it as it was, and rebuilding the list's table then was
// DOM work proportional to the model's findings per edit.
import type { Diagnostic, DiagnosticsDiff } from '../api/types';

/** `list` with `diff` applied: the removed indices taken out, then each added item inserted at its
 *  index in the new list (ascending). Null when the diff does not fit the list (an index past it). */
export function applyDiagnosticsDiff(
  list: readonly Diagnostic[],
  diff: DiagnosticsDiff,
): Diagnostic[] | null {
  const gone = new Set(diff.removed);
  if (diff.removed.some((k) => k < 0 || k >= list.length)) return null;
  const out = list.filter((_, k) => !gone.has(k));
  for (const [at, item] of diff.added) {
    if (at < 0 || at > out.length) return null;
    out.splice(at, 0, item);
  }
  return out;
}

/** The list after an edit's answer, from the list held at version `held`: the answer's whole list, its
 *  diff applied, or, when the diff is not from `held` (an answer missed), null: fetch the whole list. */
export function nextDiagnostics(
  held: readonly Diagnostic[],
  heldVersion: number | undefined,
  answer: { diagnostics?: Diagnostic[]; diagnostics_diff?: DiagnosticsDiff },
): Diagnostic[] | null {
  if (answer.diagnostics) return answer.diagnostics;
  const diff = answer.diagnostics_diff;
  if (!diff || diff.base !== heldVersion) return null;
  return applyDiagnosticsDiff(held, diff);
}

/** Whether two lists say the same, item by item (what the type-check list shows and focuses). */
export function sameDiagnostics(a: readonly Diagnostic[], b: readonly Diagnostic[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.text !== y.text || x.severity !== y.severity || x.node_id !== y.node_id || x.graph !== y.graph)
      return false;
  }
  return true;
}

/** A "diagnostics" event (GET /api/events): the finished list of document `document` after an edit
 *  answered with the partial list `base`, as a diff from it. */
export interface DiagnosticsEvent {
  document: string;
  version: number;
  base: number;
  diagnostics_version: number;
  diagnostics_diff: DiagnosticsDiff;
}

/** What to do with event `e` while waiting for the finished version of partial list `waiting` of the
 *  same document: apply its diff ('apply'), pass it by ('ignore': an older list's), or fetch the whole
 *  list ('fetch': the event finishes a list newer than the one waited for, so that one was missed). */
export function pushedAction(e: DiagnosticsEvent, waiting: number | undefined): 'apply' | 'ignore' | 'fetch' {
  if (waiting === undefined) return 'fetch';
  if (e.base === waiting && e.diagnostics_diff.base === waiting) return 'apply';
  return e.diagnostics_version > waiting ? 'fetch' : 'ignore';
}
