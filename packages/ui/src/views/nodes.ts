// Nodes with the roll-up of every check on them, and one node's services and checks.
import { watch, watchSource } from '../blocking.js';
import { errorBox, h, show, table } from '../dom.js';
import { rollupBadge } from '../badge.js';
import { checksByNode, rollup, type Check } from '../health.js';
import { title, type ViewContext } from '../view.js';
import { checksTable } from './services.js';

interface CatalogNode {
  Node: string;
  Address: string;
}

export function nodesView(ctx: ViewContext): void {
  if (ctx.route.rest) return nodeView(ctx, ctx.route.rest);
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title('Nodes'), errors.el, body);
  let nodes: CatalogNode[] | undefined;
  let checks: Check[] | undefined;
  const draw = () => {
    if (!nodes || !checks) return;
    body.removeAttribute('aria-busy');
    const byNode = checksByNode(checks);
    const rows = nodes.map((n) => {
      const own = byNode.get(n.Node) ?? [];
      return h(
        'tr',
        { 'data-node': n.Node },
        h('th', { scope: 'row' }, h('a', { href: ctx.link('nodes', n.Node) }, n.Node)),
        h('td', {}, n.Address),
        h('td', {}, rollupBadge(rollup(own))),
        h('td', {}, own.map((c) => `${c.Name || c.CheckID}: ${c.Status}`).join('; ') || '—'),
      );
    });
    show(body, table(`Nodes in ${ctx.route.dc}`, ['Node', 'Address', 'Health checks', 'Checks'], rows, 'No nodes are registered.'));
  };
  watchSource<CatalogNode[]>('/v1/catalog/nodes', { signal: ctx.signal, errors, source: 'nodes', missing: [], take: (v) => (nodes = v), draw });
  watchSource<Check[]>('/v1/health/state/any', { signal: ctx.signal, errors, source: 'checks', missing: [], take: (v) => (checks = v), draw });
}

interface NodeServices {
  Node: CatalogNode;
  Services: Record<string, { ID: string; Service: string; Port: number; Tags: string[] | null }>;
}

function nodeView(ctx: ViewContext, name: string): void {
  const errors = errorBox();
  const services = h('div', { 'aria-busy': 'true' }, 'Loading…');
  const checks = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(
    ctx.root,
    h('p', {}, h('a', { href: ctx.link('nodes') }, '← All nodes')),
    title(`Node ${name}`),
    errors.el,
    h('h2', {}, 'Services'),
    services,
    h('h2', {}, 'Checks'),
    checks,
  );
  const enc = encodeURIComponent(name);
  watch<NodeServices | null>(`/v1/catalog/node/${enc}`, {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'node');
      services.removeAttribute('aria-busy');
      if (!v) return show(services, h('p', { class: 'empty' }, `Node ${name} is not in the catalog.`));
      const rows = Object.values(v.Services ?? {}).map((s) =>
        h('tr', {}, h('th', { scope: 'row' }, h('a', { href: ctx.link('services', s.Service) }, s.ID)), h('td', {}, s.Service), h('td', {}, String(s.Port)), h('td', {}, (s.Tags ?? []).join(', '))),
      );
      show(services, table(`Services on ${name}`, ['ID', 'Service', 'Port', 'Tags'], rows, 'No services on this node.'));
    },
    onError: (e) => errors.set(e, 'node'),
  });
  watch<Check[]>(`/v1/health/node/${enc}`, {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined, 'checks');
      checks.removeAttribute('aria-busy');
      show(checks, checksTable(`Checks on ${name}`, v ?? []));
    },
    onError: (e) => errors.set(e, 'checks'),
  });
}
