// The shell: navigation, datacenter picker, token box, and the router that swaps views. Leaving a
// view aborts its signal, which ends that view's blocking queries.
import { get, setDatacenter } from './api.js';
import { announce, h, show } from './dom.js';
import { href, parseRoute, VIEWS } from './router.js';
import { getToken, setToken } from './token-store.js';
import { viewContext, type View } from './view.js';
import { aclView } from './views/acl.js';
import { intentionsView } from './views/intentions.js';
import { kvView } from './views/kv.js';
import { nodesView } from './views/nodes.js';
import { serversView } from './views/servers.js';
import { servicesView } from './views/services.js';

const views: Record<(typeof VIEWS)[number], View> = {
  services: servicesView,
  nodes: nodesView,
  kv: kvView,
  intentions: intentionsView,
  acl: aclView,
  servers: serversView,
};

const labels: Record<(typeof VIEWS)[number], string> = {
  services: 'Services',
  nodes: 'Nodes',
  kv: 'Key/Value',
  intentions: 'Intentions',
  acl: 'ACL',
  servers: 'Servers',
};

const isView = (v: string): v is (typeof VIEWS)[number] => (VIEWS as readonly string[]).includes(v);

let current: AbortController | undefined;
let localDc = 'dc1';
let firstRender = true;

function byId<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function render(): void {
  const route = parseRoute(location.hash);
  if (!route || !isView(route.view)) {
    location.replace(href(route?.dc ?? localDc, 'services'));
    return;
  }
  current?.abort();
  current = new AbortController();
  setDatacenter(route.dc);
  const nav = byId<HTMLElement>('main-nav');
  show(
    nav,
    h(
      'ul',
      {},
      VIEWS.map((v) => h('li', {}, h('a', { href: href(route.dc, v), 'aria-current': v === route.view ? 'page' : undefined }, labels[v]))),
    ),
  );
  const picker = byId<HTMLSelectElement>('dc-picker');
  if (![...picker.options].some((o) => o.value === route.dc)) picker.append(h('option', { value: route.dc }, route.dc));
  picker.value = route.dc;
  document.title = `${labels[route.view]} · ${route.dc} · registry`;
  const main = byId<HTMLElement>('main');
  views[route.view](viewContext(main, current.signal, route));
  // After a navigation (not the first load) focus moves to the new heading, as a page load would.
  if (!firstRender) byId<HTMLElement>('view-title')?.focus();
  firstRender = false;
}

async function loadDatacenters(): Promise<void> {
  const picker = byId<HTMLSelectElement>('dc-picker');
  try {
    const reply = await get<string[]>('/v1/catalog/datacenters');
    const selected = picker.value;
    show(picker, (reply.value ?? []).map((dc) => h('option', { value: dc }, dc)));
    if (![...picker.options].some((o) => o.value === selected)) picker.append(h('option', { value: selected }, selected));
    picker.value = selected;
  } catch {
    // The picker keeps the current datacenter; the view shows the agent's error itself.
  }
}

/** The agent's own datacenter: where a bare /ui/ lands. */
async function agentDatacenter(): Promise<string> {
  try {
    const self = await get<{ Config?: { Datacenter?: string } }>('/v1/agent/self');
    if (self.value?.Config?.Datacenter) return self.value.Config.Datacenter;
  } catch {
    // agent:read may be denied: fall back to the nearest datacenter (listed first).
  }
  try {
    const dcs = await get<string[]>('/v1/catalog/datacenters');
    if (dcs.value?.[0]) return dcs.value[0];
  } catch {
    // no answer: dc1, the default
  }
  return 'dc1';
}

function wireShell(): void {
  const picker = byId<HTMLSelectElement>('dc-picker');
  picker.addEventListener('change', () => {
    const route = parseRoute(location.hash);
    location.hash = href(picker.value, route && isView(route.view) ? route.view : 'services');
  });
  const form = byId<HTMLFormElement>('token-form');
  const input = byId<HTMLInputElement>('token-input');
  input.value = getToken();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    announce(input.value.trim() ? 'Token saved in this browser' : 'Token cleared');
    render();
  });
  byId<HTMLButtonElement>('token-clear').addEventListener('click', () => {
    input.value = '';
    setToken('');
    announce('Token cleared');
    render();
  });
  window.addEventListener('registry-token', () => {
    input.value = getToken();
    render();
  });
  // The skip link cannot be a #fragment: fragments are routes here.
  byId<HTMLAnchorElement>('skip').addEventListener('click', (ev) => {
    ev.preventDefault();
    (byId<HTMLElement>('view-title') ?? byId<HTMLElement>('main')).focus();
  });
  window.addEventListener('hashchange', render);
}

async function start(): Promise<void> {
  wireShell();
  if (!parseRoute(location.hash)) localDc = await agentDatacenter();
  render();
  void loadDatacenters();
}

void start();
