// What every view gets: where to draw, a signal that fires when the user leaves the view (its
// blocking queries stop then), and the current route.
import { h } from './dom.js';
import { href, type Route } from './router.js';

export interface ViewContext {
  root: HTMLElement;
  signal: AbortSignal;
  route: Route;
  /** A link within the current datacenter. */
  link(view: string, rest?: string): string;
  go(view: string, rest?: string): void;
}

export type View = (ctx: ViewContext) => void;

export function viewContext(root: HTMLElement, signal: AbortSignal, route: Route): ViewContext {
  return {
    root,
    signal,
    route,
    link: (view, rest) => href(route.dc, view, rest),
    go: (view, rest) => {
      location.hash = href(route.dc, view, rest);
    },
  };
}

/** The view's heading; focused after navigation so keyboard and screen-reader users land on it. */
export function title(text: string): HTMLHeadingElement {
  return h('h1', { id: 'view-title', tabindex: '-1' }, text);
}

/** A button that runs an async action, disabled while it runs so a double click sends once. */
export function actionButton(label: string, action: () => Promise<void>, attrs: Record<string, unknown> = {}): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', () => {
    b.disabled = true;
    action().finally(() => {
      b.disabled = false;
    });
  });
  return b;
}
