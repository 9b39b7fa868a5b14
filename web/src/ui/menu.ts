// The menu bar: File / Edit / View dropdowns of plain buttons. A menu whose items are a function is
// filled each time it opens (the Tools menu: the tools file may have changed).
import { h } from './dom';

export interface MenuItem {
  label: string;
  shortcut?: string;
  id: string;
  action: () => void;
}

export type MenuItems = MenuItem[] | (() => Promise<MenuItem[]>);

export function menuBar(root: HTMLElement, menus: Array<[string, MenuItems]>): void {
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
        if (!open && typeof items === 'function')
          items()
            .then(fill)
            .catch((e: unknown) =>
              fill([{ id: 'menu-error', label: String((e as Error).message ?? e), action: () => undefined }]),
            );
      },
    });
    const list = h('div', { className: 'menu-items' });
    const fill = (its: MenuItem[]) => {
      while (list.firstChild) list.firstChild.remove();
      for (const it of its)
        list.append(
          h(
            'button',
            { 'data-testid': `action-${it.id}`, onclick: () => (closeAll(), it.action()) },
            h('span', { text: it.label }),
            it.shortcut ? h('span', { className: 'shortcut', text: it.shortcut }) : null,
          ),
        );
    };
    if (typeof items !== 'function') fill(items);
    menu.append(button, list);
    root.append(menu);
  }
  document.addEventListener('click', closeAll);
}
