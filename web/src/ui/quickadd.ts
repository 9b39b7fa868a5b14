// Ctrl+Space: a search box under the cursor; Enter adds the first match there, Escape closes.
import type { RegistryOp } from '../api/types';
import { registryKey } from '../model/viewmodel';
import { h } from './dom';
import { matchOps } from './palette';

export class QuickAdd {
  private box: HTMLElement | null = null;

  constructor(private readonly parent: HTMLElement) {}

  open(ops: RegistryOp[], left: number, top: number, pick: (key: string) => void): void {
    this.close();
    const list = h('div', { className: 'quickadd-list' });
    const input = h('input', { type: 'text', placeholder: 'Add layer…', 'data-testid': 'quickadd-input' });
    let found: RegistryOp[] = [];
    const render = () => {
      found = matchOps(ops, input.value).slice(0, 12);
      list.replaceChildren(
        ...found.map((op) =>
          h('div', {
            className: 'quickadd-item',
            text: op.op_type + (op.domain ? ` · ${op.domain}` : ''),
            onmousedown: (ev: MouseEvent) => {
              ev.preventDefault();
              this.close();
              pick(registryKey(op.domain, op.op_type));
            },
          }),
        ),
      );
    };
    input.addEventListener('input', render);
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') this.close();
      if (ev.key !== 'Enter' || !found.length) return;
      const op = found[0];
      this.close();
      pick(registryKey(op.domain, op.op_type));
    });
    const box = h(
      'div',
      { className: 'quickadd', 'data-testid': 'quickadd', style: `left:${left}px;top:${top}px` },
      input,
      list,
    );
    // Closes this box only: a box closed by Enter blurs as it goes, and its delayed close must not take
    // the next box, opened by a quick second Ctrl+Space, with it.
    input.addEventListener('blur', () =>
      setTimeout(() => {
        if (this.box === box) this.close();
      }, 100),
    );
    this.box = box;
    this.parent.append(box);
    render();
    input.focus();
  }

  close(): void {
    this.box?.remove();
    this.box = null;
  }
}
