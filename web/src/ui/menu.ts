// The menu bar: File / Edit / View dropdowns of plain buttons.
import { h } from './dom';

export interface MenuItem {
  label: string;
  shortcut?: string;
  id: string;
  action: () => void;
}

export function menuBar(root: HTMLElement, menus: Array<[string, MenuItem[]]>): void {
  const closeAll = () => root.querySelectorAll('.menu.open').forEach((m) => m.classList.remove('open'));
  for (const [title, items] of menus) {
    const menu = h('div', { className: 'menu' });
    const button = h('button', {
      text: title,
      'data-testid': `menu-${title.toLowerCase()}`,
      onclick: (ev: Event) => {
        ev.stopPropagation();
        const open = menu.classList.contains('open');
        closeAll();
        menu.classList.toggle('open', !open);
      },
    });
    const list = h('div', { className: 'menu-items' });
    for (const it of items)
      list.append(
        h(
          'button',
          { 'data-testid': `action-${it.id}`, onclick: () => (closeAll(), it.action()) },
          h('span', { text: it.label }),
          it.shortcut ? h('span', { className: 'shortcut', text: it.shortcut }) : null,
        ),
      );
    menu.append(button, list);
    root.append(menu);
  }
  document.addEventListener('click', closeAll);
}
