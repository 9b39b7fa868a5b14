import { describe, expect, it } from 'vitest';
import type { Diagnostic, DiagnosticsDiff } from '../../src/api/types';
import {
  applyDiagnosticsDiff,
  nextDiagnostics,
  pushedAction,
  sameDiagnostics,
  type DiagnosticsEvent,
} from '../../src/model/diagnostics';

const d = (node: string, severity: Diagnostic['severity'] = 'error', node_id = 1): Diagnostic => ({
  severity,
  graph: 'main',
  node,
  node_id,
  op_type: 'Relu',
  input_index: 0,
  output_index: -1,
  message: 'input 0 is not connected',
  text: `${severity}: node '${node}' (Relu): input 0 is not connected`,
});

describe('type-check lists compared', () => {
  it('finds equal lists equal, whatever the objects', () => {
    expect(sameDiagnostics([], [])).toBe(true);
    expect(sameDiagnostics([d('a'), d('b')], [d('a'), d('b')])).toBe(true);
  });

  it('tells a list that differs in length, order, text, severity, node or graph', () => {
    expect(sameDiagnostics([d('a')], [])).toBe(false);
    expect(sameDiagnostics([d('a'), d('b')], [d('b'), d('a')])).toBe(false);
    expect(sameDiagnostics([d('a')], [{ ...d('a'), text: 'other' }])).toBe(false);
    expect(sameDiagnostics([d('a', 'error')], [{ ...d('a', 'error'), severity: 'warning' }])).toBe(false);
    expect(sameDiagnostics([d('a', 'error', 1)], [d('a', 'error', 2)])).toBe(false);
    expect(sameDiagnostics([d('a')], [{ ...d('a'), graph: 'function custom.Twice' }])).toBe(false);
  });
});

// The diff the server sends (server/diagnostics.cpp): indices of the old list removed, items inserted at
// their index in the new one.
const diff = (base: number, removed: number[], added: [number, Diagnostic][]): DiagnosticsDiff => ({
  base,
  version: base + 1,
  removed,
  added,
});

describe('type-check list diffs applied', () => {
  it('gives the new list, whatever was removed and added where', () => {
    const [a, b, c, x, y] = ['a', 'b', 'c', 'x', 'y'].map((n) => d(n));
    expect(applyDiagnosticsDiff([a, b, c], diff(1, [1], [[1, x]]))).toEqual([a, x, c]);
    expect(applyDiagnosticsDiff([a, b, c], diff(1, [], [[3, x]]))).toEqual([a, b, c, x]);
    expect(
      applyDiagnosticsDiff(
        [a, b, c],
        diff(
          1,
          [0, 2],
          [
            [0, x],
            [2, y],
          ],
        ),
      ),
    ).toEqual([x, b, y]);
    expect(applyDiagnosticsDiff([a, b, c], diff(1, [0, 1, 2], []))).toEqual([]);
    expect(
      applyDiagnosticsDiff(
        [],
        diff(
          1,
          [],
          [
            [0, x],
            [1, y],
          ],
        ),
      ),
    ).toEqual([x, y]);
  });

  it('refuses a diff that does not fit the list', () => {
    expect(applyDiagnosticsDiff([d('a')], diff(1, [1], []))).toBeNull();
    expect(applyDiagnosticsDiff([d('a')], diff(1, [], [[2, d('x')]]))).toBeNull();
  });

  it('takes a whole list as it is, a diff from the version held, and asks for the list after a gap', () => {
    const held = [d('a')];
    expect(nextDiagnostics(held, 3, { diagnostics: [d('z')] })).toEqual([d('z')]);
    expect(nextDiagnostics(held, 3, { diagnostics_diff: diff(3, [0], []) })).toEqual([]);
    expect(nextDiagnostics(held, 2, { diagnostics_diff: diff(3, [0], []) })).toBeNull(); // an answer missed
    expect(nextDiagnostics(held, undefined, { diagnostics_diff: diff(3, [0], []) })).toBeNull();
    expect(nextDiagnostics(held, 3, {})).toBeNull();
  });
});

describe('finished lists pushed after a partial answer', () => {
  const event = (base: number, version: number, diffBase = base): DiagnosticsEvent => ({
    document: 'd1',
    version: 7,
    base,
    diagnostics_version: version,
    diagnostics_diff: { base: diffBase, version, removed: [0], added: [] },
  });

  it('applies the event that finishes the partial list waited for, and its diff gives the list', () => {
    expect(pushedAction(event(4, 5), 4)).toBe('apply');
    expect(applyDiagnosticsDiff([d('a'), d('b')], event(4, 5).diagnostics_diff)).toEqual([d('b')]);
  });

  it("passes by an older list's event and fetches when the event finishes a newer list", () => {
    expect(pushedAction(event(2, 3), 4)).toBe('ignore');
    expect(pushedAction(event(4, 4), 5)).toBe('ignore');
    expect(pushedAction(event(6, 7), 4)).toBe('fetch');
    expect(pushedAction(event(4, 5, 3), 4)).toBe('fetch');
    expect(pushedAction(event(4, 5), undefined)).toBe('fetch');
  });
});
