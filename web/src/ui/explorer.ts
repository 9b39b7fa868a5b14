// The layer explorer: the graph's nodes by name or type, filtered and sorted; a click selects, a
// double-click jumps to the node (expanding its groups). Shows at most MAX rows: a filter narrows it.
import type { ApiNode } from '../api/types';
import { clear, h } from './dom';

const MAX = 400;

export class Explorer {
  private nodes: ApiNode[] = [];
  private list: HTMLElement;
  private filter: HTMLInputElement;
  private sort: HTMLSelectElement;

  private stale = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly select: (id: number) => void,
    private readonly jump: (id: number) => void,
  ) {
    this.filter = h('input', {
      type: 'search',
      placeholder: 'Filter by name or type',
      'data-testid': 'explorer-filter',
      oninput: () => this.render(),
    });
    this.sort = h(
      'select',
      { onchange: () => this.render() },
      h('option', { value: 'order', text: 'graph order' }),
      h('option', { value: 'name', text: 'by name' }),
      h('option', { value: 'type', text: 'by type' }),
    );
    this.list = h('div', { className: 'explorer-list', 'data-testid': 'explorer' });
    root.append(
      h('div', { className: 'panel-title', text: 'Layer explorer' }),
      this.filter,
      this.sort,
      this.list,
    );
  }

  /** Rendered now when the panel shows, else when it is next shown (shown()): an edit on a large
   *  model does not rebuild a hidden list of hundreds of rows. */
  setNodes(nodes: ApiNode[]): void {
    this.nodes = nodes;
    this.stale = true;
    if (this.root.style.display !== 'none') this.render();
  }

  shown(): void {
    if (this.stale) this.render();
  }

  private render(): void {
    this.stale = false;
    clear(this.list);
    const q = this.filter.value.trim().toLowerCase();
    let found = q
      ? this.nodes.filter((n) => n.name.toLowerCase().includes(q) || n.op_type.toLowerCase().includes(q))
      : [...this.nodes];
    if (this.sort.value === 'name') found.sort((a, b) => a.name.localeCompare(b.name));
    if (this.sort.value === 'type')
      found.sort((a, b) => a.op_type.localeCompare(b.op_type) || a.name.localeCompare(b.name));
    const total = found.length;
    found = found.slice(0, MAX);
    for (const n of found) {
      this.list.append(
        h(
          'div',
          {
            className: `explorer-item${n.severity ? ` sev-${n.severity}` : ''}`,
            'data-node': n.name,
            onclick: () => this.select(n.id),
            ondblclick: () => this.jump(n.id),
          },
          h('span', { className: 'explorer-op', text: n.op_type }),
          h('span', { text: n.name }),
        ),
      );
    }
    if (total > MAX)
      this.list.append(h('div', { className: 'hint', text: `… ${total - MAX} more: narrow the filter` }));
  }
}
