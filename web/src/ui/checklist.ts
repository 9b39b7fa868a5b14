// The type-check list: the checker's diagnostics after every edit; double-click focuses the node.
import type { Diagnostic } from '../api/types';
import { clear, h } from './dom';

export class CheckList {
  constructor(
    private readonly root: HTMLElement,
    private readonly focus: (d: Diagnostic) => void,
  ) {}

  show(diags: Diagnostic[]): void {
    clear(this.root);
    const errors = diags.filter((d) => d.severity === 'error').length;
    const warnings = diags.filter((d) => d.severity === 'warning').length;
    this.root.append(
      h('div', {
        className: 'panel-title',
        'data-testid': 'checklist-title',
        text: `Type check: ${counted(errors, 'error')}, ${counted(warnings, 'warning')}`,
      }),
    );
    const table = h('table', { className: 'checklist', 'data-testid': 'checklist' });
    for (const d of diags) {
      const row = h(
        'tr',
        { className: `sev-${d.severity}`, title: d.text, ondblclick: () => this.focus(d) },
        h('td', { text: d.severity }),
        h('td', { text: d.node ? `${d.node} (${d.op_type})` : d.graph }),
        h('td', { text: d.message }),
      );
      table.append(row);
    }
    this.root.append(table);
  }
}

/** "1 error", "0 errors", "2 errors". */
export function counted(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
}
