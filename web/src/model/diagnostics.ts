// Comparing type-check lists: an edit's answer carries the whole list, and most edits leave it as it
// was; rebuilding the list's table then was DOM work proportional to the model's findings per edit.
import type { Diagnostic } from '../api/types';

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
