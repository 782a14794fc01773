// A tiny element builder: text goes in as text nodes (never as HTML), so names and values coming
// from the agent cannot inject markup.
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
    else if (k === 'value' || k === 'checked') (el as unknown as Record<string, unknown>)[k] = v;
    else el.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replace what `el` shows. */
export function show(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A message for assistive technology and sighted users alike (the shell's live region). */
export function announce(message: string): void {
  const region = document.getElementById('status');
  if (region) region.textContent = message;
}

/**
 * An error box inside a view: role=alert so a screen reader reads it when it appears. Each
 * source (one per blocking query or form) sets and clears its own message.
 */
export function errorBox(): { el: HTMLElement; set(err: Error | undefined, source?: string): void } {
  const el = h('p', { class: 'error', role: 'alert', hidden: true });
  const messages = new Map<string, string>();
  return {
    el,
    set(err, source = 'main') {
      if (err) messages.set(source, err.message);
      else messages.delete(source);
      el.hidden = messages.size === 0;
      el.textContent = [...messages.values()].join(' — ');
    },
  };
}

/** A labelled form field: `<label for>` + control, so every control has an accessible name. */
export function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, hint?: string): HTMLElement {
  const id = control.id || (control.id = `f-${++fieldIds}`);
  const hintEl = hint ? h('small', { id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}
let fieldIds = 0;

export function table(caption: string, headings: string[], rows: HTMLTableRowElement[], empty: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headings.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, rows),
  );
}
