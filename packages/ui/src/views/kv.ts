// The KV browser and editor: folders by `/`, create, edit (check-and-set on the index that was
// loaded, so a concurrent change is reported rather than overwritten), delete.
import { del, get, keyPath, put } from '../api.js';
import { watch } from '../blocking.js';
import { announce, errorBox, field, h, show, table } from '../dom.js';
import { baseName, crumbs, decodeValue, isFolder, parentFolder } from '../kv-path.js';
import { actionButton, title, type ViewContext } from '../view.js';

interface KvEntry {
  Key: string;
  Value: string | null;
  Flags: number;
  ModifyIndex: number;
  CreateIndex: number;
  Session?: string;
}

export function kvView(ctx: ViewContext): void {
  const key = ctx.route.rest;
  if (isFolder(key)) folderView(ctx, key);
  else keyView(ctx, key);
}

function breadcrumbs(ctx: ViewContext, key: string): HTMLElement {
  return h(
    'nav',
    { 'aria-label': 'Folders', class: 'crumbs' },
    h('ol', {}, crumbs(key).map((c) => h('li', {}, h('a', { href: ctx.link('kv', c.folder) }, c.label)))),
  );
}

function folderView(ctx: ViewContext, folder: string): void {
  const errors = errorBox();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, breadcrumbs(ctx, folder), title(folder ? `Key/Value: ${folder}` : 'Key/Value'), errors.el, list, createForm(ctx, folder, errors));
  watch<string[]>(`/v1/kv/${keyPath(folder)}`, {
    params: { keys: '', separator: '/' },
    allow404: true,
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'list');
      list.removeAttribute('aria-busy');
      const keys = (v ?? []).filter((k) => k !== folder);
      const rows = keys.map((k) =>
        h(
          'tr',
          { 'data-key': k },
          h('th', { scope: 'row' }, h('a', { href: ctx.link('kv', k) }, baseName(k))),
          h('td', {}, isFolder(k) ? 'folder' : 'key'),
          h('td', {}, actionButton('Delete', () => remove(k, errors), { 'aria-label': `Delete ${k}` })),
        ),
      );
      show(list, table(folder ? `Keys in ${folder}` : 'Keys', ['Name', 'Kind', 'Actions'], rows, 'This folder is empty.'));
    },
    onError: (e) => errors.set(e, 'list'),
  });
}

async function remove(key: string, errors: ReturnType<typeof errorBox>): Promise<void> {
  const what = isFolder(key) ? `the folder ${key} and everything in it` : `the key ${key}`;
  if (!confirm(`Delete ${what}?`)) return;
  try {
    await del(`/v1/kv/${keyPath(key)}`, { params: isFolder(key) ? { recurse: '' } : {} });
    errors.set(undefined, 'action');
    announce(`Deleted ${key}`);
  } catch (e) {
    errors.set(e as Error, 'action');
  }
}

function createForm(ctx: ViewContext, folder: string, errors: ReturnType<typeof errorBox>): HTMLElement {
  const name = h('input', { name: 'key', required: true, autocomplete: 'off' });
  const value = h('textarea', { name: 'value', rows: '4' });
  const form = h(
    'form',
    { 'aria-labelledby': 'kv-create-title', class: 'panel' },
    h('h2', { id: 'kv-create-title' }, folder ? `Create in ${folder}` : 'Create'),
    field('Key or folder name', name, 'End the name with / to create a folder.'),
    field('Value', value),
    h('button', { type: 'submit' }, 'Create'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = folder + name.value.replace(/^\/+/, '');
    if (!name.value.trim()) return;
    // cas=0: create only; an existing key is reported, not overwritten.
    put<boolean>(`/v1/kv/${keyPath(key)}`, isFolder(key) ? '' : value.value, { params: { cas: '0' } })
      .then((r) => {
        if (r.value === false) throw new Error(`${key} already exists`);
        errors.set(undefined, 'action');
        announce(`Created ${key}`);
        name.value = '';
        value.value = '';
        if (!isFolder(key)) ctx.go('kv', key);
      })
      .catch((e: Error) => errors.set(e, 'action'));
  });
  return form;
}

function keyView(ctx: ViewContext, key: string): void {
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, breadcrumbs(ctx, key), title(`Key ${key}`), errors.el, body);
  get<KvEntry[]>(`/v1/kv/${keyPath(key)}`, { allow404: true, signal: ctx.signal })
    .then((r) => {
      body.removeAttribute('aria-busy');
      const entry = r.value?.[0];
      if (!entry) return show(body, h('p', { class: 'empty' }, `The key ${key} does not exist.`));
      show(body, editor(ctx, entry, errors));
    })
    .catch((e: Error) => {
      if (!ctx.signal.aborted) errors.set(e);
    });
}

function editor(ctx: ViewContext, entry: KvEntry, errors: ReturnType<typeof errorBox>): HTMLElement {
  let modifyIndex = entry.ModifyIndex;
  const value = h('textarea', { name: 'value', rows: '10', value: decodeValue(entry.Value) });
  const meta = h('p', { class: 'meta' });
  const showMeta = () => {
    meta.textContent = `Modify index ${modifyIndex} · flags ${entry.Flags}${entry.Session ? ` · locked by session ${entry.Session}` : ''}`;
  };
  showMeta();
  const form = h('form', { class: 'panel' }, field('Value', value), meta, h('button', { type: 'submit' }, 'Save'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    // Check-and-set on the index this page loaded: a change made elsewhere since is not lost.
    put<boolean>(`/v1/kv/${keyPath(entry.Key)}`, value.value, { params: { cas: String(modifyIndex), flags: String(entry.Flags) } })
      .then(async (r) => {
        if (r.value === false) throw new Error('The key was changed elsewhere since this page loaded; reload to see the new value.');
        const fresh = await get<KvEntry[]>(`/v1/kv/${keyPath(entry.Key)}`);
        modifyIndex = fresh.value?.[0]?.ModifyIndex ?? modifyIndex;
        showMeta();
        errors.set(undefined);
        announce(`Saved ${entry.Key}`);
      })
      .catch((e: Error) => errors.set(e));
  });
  const remove = actionButton('Delete key', async () => {
    if (!confirm(`Delete the key ${entry.Key}?`)) return;
    try {
      await del(`/v1/kv/${keyPath(entry.Key)}`);
      announce(`Deleted ${entry.Key}`);
      ctx.go('kv', parentFolder(entry.Key));
    } catch (e) {
      errors.set(e as Error);
    }
  });
  return h('div', {}, form, remove);
}
