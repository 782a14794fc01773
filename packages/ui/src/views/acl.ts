// ACL tokens and policies: list (live), read, create, delete. A token can be made the one this
// browser sends.
import { ApiError, del, get, put } from '../api.js';
import { watch } from '../blocking.js';
import { announce, errorBox, field, h, show, table } from '../dom.js';
import { setToken } from '../token-store.js';
import { actionButton, title, type ViewContext } from '../view.js';

interface PolicyLink {
  ID: string;
  Name: string;
}

interface Token {
  AccessorID: string;
  SecretID?: string;
  Description: string;
  Policies?: PolicyLink[] | null;
  Local: boolean;
  CreateTime?: string;
}

interface Policy {
  ID: string;
  Name: string;
  Description: string;
  Rules?: string;
  Datacenters?: string[] | null;
}

export function aclView(outer: ViewContext): void {
  // The view's reads stop when the user leaves, or at once when the agent says ACLs are off.
  const stop = new AbortController();
  outer.signal.addEventListener('abort', () => stop.abort(), { once: true });
  const ctx: AclContext = {
    ...outer,
    signal: stop.signal,
    failed: (e, errors, source) => {
      if (stop.signal.aborted) return;
      if (!aclsDisabled(e)) return errors.set(e, source);
      stop.abort();
      disabledNotice(outer);
    },
  };
  const [section = 'tokens', id = ''] = splitOnce(ctx.route.rest);
  const nav = h(
    'nav',
    { 'aria-label': 'ACL', class: 'subnav' },
    h('a', { href: ctx.link('acl', 'tokens'), 'aria-current': section === 'tokens' ? 'page' : undefined }, 'Tokens'),
    ' ',
    h('a', { href: ctx.link('acl', 'policies'), 'aria-current': section === 'policies' ? 'page' : undefined }, 'Policies'),
  );
  if (section === 'policies') return id ? policyView(ctx, nav, id) : policiesView(ctx, nav);
  return id ? tokenView(ctx, nav, id) : tokensView(ctx, nav);
}

/** The ACL views' context: `failed` shows an error, or the notice that ACLs are off. */
interface AclContext extends ViewContext {
  failed(e: Error, errors: ReturnType<typeof errorBox>, source?: string): void;
}

/** The agent's answer with ACLs off (Consul's 401 `ACL support disabled`). */
function aclsDisabled(e: Error): boolean {
  return e instanceof ApiError && e.status === 401 && e.message.includes('ACL support disabled');
}

/** Instead of an error and forms that cannot work: what is the case and how to change it. */
function disabledNotice(ctx: ViewContext): void {
  show(
    ctx.root,
    title('ACLs are disabled'),
    h(
      'p',
      { 'data-acl': 'disabled' },
      'This agent runs with ACLs off (acl.enabled = false in its configuration): every request is allowed, and there are no tokens or policies to manage. Turn ACLs on in the configuration of every server to use them.',
    ),
  );
}

function splitOnce(rest: string): string[] {
  const i = rest.indexOf('/');
  return i < 0 ? [rest] : [rest.slice(0, i), rest.slice(i + 1)];
}

function deleteButton(label: string, path: string, errors: ReturnType<typeof errorBox>, done: () => void = () => undefined): HTMLButtonElement {
  return actionButton(
    'Delete',
    async () => {
      if (!confirm(`Delete ${label}?`)) return;
      try {
        await del(path);
        errors.set(undefined, 'action');
        announce(`Deleted ${label}`);
        done();
      } catch (e) {
        errors.set(e as Error, 'action');
      }
    },
    { 'aria-label': `Delete ${label}` },
  );
}

function tokensView(ctx: AclContext, nav: HTMLElement): void {
  const errors = errorBox();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title('ACL tokens'), nav, errors.el, list, tokenForm(ctx));
  watch<Token[]>('/v1/acl/tokens', {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'list');
      list.removeAttribute('aria-busy');
      const rows = (v ?? []).map((t) =>
        h(
          'tr',
          { 'data-token': t.AccessorID },
          h('th', { scope: 'row' }, h('a', { href: ctx.link('acl', `tokens/${t.AccessorID}`) }, t.AccessorID)),
          h('td', {}, t.Description),
          h('td', {}, (t.Policies ?? []).map((p) => p.Name).join(', ')),
          h('td', {}, t.Local ? 'local' : 'global'),
          h('td', {}, deleteButton(`token ${t.AccessorID}`, `/v1/acl/token/${encodeURIComponent(t.AccessorID)}`, errors)),
        ),
      );
      show(list, table('Tokens', ['Accessor ID', 'Description', 'Policies', 'Scope', 'Actions'], rows, 'No tokens.'));
    },
    onError: (e) => ctx.failed(e, errors, 'list'),
  });
}

function policyNames(text: string): Array<{ Name: string }> {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((Name) => ({ Name }));
}

function tokenForm(ctx: ViewContext): HTMLElement {
  const errors = errorBox();
  const description = h('input', { name: 'description', autocomplete: 'off' });
  const policies = h('input', { name: 'policies', autocomplete: 'off' });
  const local = h('input', { type: 'checkbox', name: 'local' });
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'token-create-title' },
    h('h2', { id: 'token-create-title' }, 'Create a token'),
    errors.el,
    field('Description', description),
    field('Policies', policies, 'Policy names, separated by commas.'),
    field('Local to this datacenter', local),
    h('button', { type: 'submit' }, 'Create'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    put<Token>('/v1/acl/token', { Description: description.value, Policies: policyNames(policies.value), Local: local.checked })
      .then((r) => {
        errors.set(undefined);
        announce('Token created');
        if (r.value) ctx.go('acl', `tokens/${r.value.AccessorID}`);
      })
      .catch((e: Error) => errors.set(e));
  });
  return form;
}

function tokenView(ctx: AclContext, nav: HTMLElement, accessor: string): void {
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title(`Token ${accessor}`), nav, errors.el, body);
  get<Token>(`/v1/acl/token/${encodeURIComponent(accessor)}`, { signal: ctx.signal })
    .then((r) => {
      body.removeAttribute('aria-busy');
      const t = r.value!;
      show(
        body,
        h(
          'dl',
          {},
          h('dt', {}, 'Accessor ID'),
          h('dd', {}, t.AccessorID),
          h('dt', {}, 'Secret ID'),
          h('dd', {}, h('code', {}, t.SecretID ?? '(hidden)')),
          h('dt', {}, 'Description'),
          h('dd', {}, t.Description || '—'),
          h('dt', {}, 'Policies'),
          h('dd', {}, (t.Policies ?? []).map((p) => p.Name).join(', ') || '—'),
          h('dt', {}, 'Scope'),
          h('dd', {}, t.Local ? 'local' : 'global'),
          h('dt', {}, 'Created'),
          h('dd', {}, t.CreateTime ?? '—'),
        ),
        t.SecretID
          ? h(
              'button',
              {
                type: 'button',
                onclick: () => {
                  setToken(t.SecretID!);
                  window.dispatchEvent(new Event('registry-token'));
                  announce('This browser now uses that token');
                },
              },
              'Use this token in this browser',
            )
          : null,
        ' ',
        deleteButton(`token ${t.AccessorID}`, `/v1/acl/token/${encodeURIComponent(t.AccessorID)}`, errors, () => ctx.go('acl', 'tokens')),
      );
    })
    .catch((e: Error) => ctx.failed(e, errors));
}

function policiesView(ctx: AclContext, nav: HTMLElement): void {
  const errors = errorBox();
  const list = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title('ACL policies'), nav, errors.el, list, policyForm(ctx));
  watch<Policy[]>('/v1/acl/policies', {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'list');
      list.removeAttribute('aria-busy');
      const rows = (v ?? []).map((p) =>
        h(
          'tr',
          { 'data-policy': p.Name },
          h('th', { scope: 'row' }, h('a', { href: ctx.link('acl', `policies/${p.ID}`) }, p.Name)),
          h('td', {}, p.Description),
          h('td', {}, (p.Datacenters ?? []).join(', ') || 'all'),
          h('td', {}, deleteButton(`policy ${p.Name}`, `/v1/acl/policy/${encodeURIComponent(p.ID)}`, errors)),
        ),
      );
      show(list, table('Policies', ['Name', 'Description', 'Datacenters', 'Actions'], rows, 'No policies.'));
    },
    onError: (e) => ctx.failed(e, errors, 'list'),
  });
}

function policyForm(ctx: ViewContext): HTMLElement {
  const errors = errorBox();
  const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
  const description = h('input', { name: 'description', autocomplete: 'off' });
  const rules = h('textarea', { name: 'rules', rows: '6', spellcheck: 'false' });
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'policy-create-title' },
    h('h2', { id: 'policy-create-title' }, 'Create a policy'),
    errors.el,
    field('Name', name),
    field('Description', description),
    field('Rules', rules, 'HCL or JSON, e.g. key_prefix "app/" { policy = "write" }'),
    h('button', { type: 'submit' }, 'Create'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    put<Policy>('/v1/acl/policy', { Name: name.value.trim(), Description: description.value, Rules: rules.value })
      .then((r) => {
        errors.set(undefined);
        announce(`Policy ${name.value} created`);
        if (r.value) ctx.go('acl', `policies/${r.value.ID}`);
      })
      .catch((e: Error) => errors.set(e));
  });
  return form;
}

function policyView(ctx: AclContext, nav: HTMLElement, id: string): void {
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title('ACL policy'), nav, errors.el, body);
  get<Policy>(`/v1/acl/policy/${encodeURIComponent(id)}`, { signal: ctx.signal })
    .then((r) => {
      body.removeAttribute('aria-busy');
      const p = r.value!;
      show(
        body,
        h(
          'dl',
          {},
          h('dt', {}, 'Name'),
          h('dd', {}, p.Name),
          h('dt', {}, 'ID'),
          h('dd', {}, p.ID),
          h('dt', {}, 'Description'),
          h('dd', {}, p.Description || '—'),
          h('dt', {}, 'Datacenters'),
          h('dd', {}, (p.Datacenters ?? []).join(', ') || 'all'),
        ),
        h('h2', {}, 'Rules'),
        h('pre', { class: 'rules' }, p.Rules || '(none)'),
        deleteButton(`policy ${p.Name}`, `/v1/acl/policy/${encodeURIComponent(p.ID)}`, errors, () => ctx.go('acl', 'policies')),
      );
    })
    .catch((e: Error) => ctx.failed(e, errors));
}
