// The layer palette: the registry's operators for the document's opsets, searchable by name, domain
// or category, grouped by category; drag an item onto the canvas (or click it) to add a node.
import type { RegistryOp } from '../api/types';
import { registryKey } from '../model/viewmodel';
import { clear, h } from './dom';

export function matchOps(ops: RegistryOp[], query: string): RegistryOp[] {
  const q = query.trim().toLowerCase();
  if (!q) return ops;
  const words = q.split(/\s+/);
  return ops
    .filter((op) => {
      const hay = `${op.op_type} ${op.domain || 'ai.onnx'} ${op.category}`.toLowerCase();
      return words.every((w) => hay.includes(w));
    })
    .sort((a, b) => rank(a, q) - rank(b, q) || a.op_type.localeCompare(b.op_type));
}

function rank(op: RegistryOp, q: string): number {
  const name = op.op_type.toLowerCase();
  return name === q ? 0 : name.startsWith(q) ? 1 : name.includes(q) ? 2 : 3;
}

export class Palette {
  private ops: RegistryOp[] = [];
  private list: HTMLElement;
  private search: HTMLInputElement;

  constructor(
    root: HTMLElement,
    private readonly add: (key: string) => void,
  ) {
    this.search = h('input', {
      type: 'search',
      placeholder: 'Search layers (name, domain, category)',
      'data-testid': 'palette-search',
      oninput: () => this.render(),
    });
    this.list = h('div', { className: 'palette-list' });
    root.append(h('div', { className: 'panel-title', text: 'Layers' }), this.search, this.list);
  }

  setOps(ops: RegistryOp[]): void {
    this.ops = [...ops].sort((a, b) => a.op_type.localeCompare(b.op_type));
    this.render();
  }

  private render(): void {
    clear(this.list);
    const found = matchOps(this.ops, this.search.value);
    const byCat = new Map<string, RegistryOp[]>();
    for (const op of found) {
      const cat = op.category || 'other';
      (byCat.get(cat) ?? byCat.set(cat, []).get(cat)!).push(op);
    }
    const searching = this.search.value.trim() !== '';
    for (const cat of [...byCat.keys()].sort()) {
      const details = h(
        'details',
        { open: searching },
        h('summary', { text: `${cat} (${byCat.get(cat)!.length})` }),
      );
      for (const op of byCat.get(cat)!) details.append(this.item(op));
      this.list.append(details);
    }
  }

  private item(op: RegistryOp): HTMLElement {
    const key = registryKey(op.domain, op.op_type);
    return h('div', {
      className: 'palette-item',
      draggable: true,
      title: op.doc ?? `${op.op_type} (${op.domain || 'ai.onnx'}, since opset ${op.since_version})`,
      'data-op': op.op_type,
      'data-domain': op.domain,
      text: op.domain ? `${op.op_type}  ·  ${op.domain}` : op.op_type,
      ondragstart: (ev: DragEvent) => ev.dataTransfer?.setData('application/x-tessera-op', key),
      ondblclick: () => this.add(key),
    });
  }
}
