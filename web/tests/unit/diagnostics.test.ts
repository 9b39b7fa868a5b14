import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/api/types';
import { sameDiagnostics } from '../../src/model/diagnostics';

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
