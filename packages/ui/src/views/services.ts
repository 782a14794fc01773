// Services with their health roll-up, and one service's instances with their checks.
import { watch, watchSource } from '../blocking.js';
import { errorBox, h, show, table } from '../dom.js';
import { rollupBadge, statusBadge } from '../badge.js';
import { serviceRollups, type Check } from '../health.js';
import { title, type ViewContext } from '../view.js';

export function servicesView(ctx: ViewContext): void {
  if (ctx.route.rest) return serviceView(ctx, ctx.route.rest);
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, title('Services'), errors.el, body);
  let services: Record<string, string[]> | undefined;
  let checks: Check[] | undefined;
  const draw = () => {
    if (!services || !checks) return;
    body.removeAttribute('aria-busy');
    const rollups = serviceRollups(checks);
    const rows = Object.keys(services)
      .sort()
      .map((name) =>
        h(
          'tr',
          { 'data-service': name },
          h('th', { scope: 'row' }, h('a', { href: ctx.link('services', name) }, name)),
          h('td', {}, rollupBadge(rollups.get(name) ?? { passing: 0, warning: 0, critical: 0 })),
          h('td', {}, (services![name] ?? []).join(', ')),
        ),
      );
    show(body, table(`Services in ${ctx.route.dc}`, ['Service', 'Health checks', 'Tags'], rows, 'No services are registered.'));
  };
  watchSource<Record<string, string[]>>('/v1/catalog/services', { signal: ctx.signal, errors, source: 'services', missing: {}, take: (v) => (services = v), draw });
  watchSource<Check[]>('/v1/health/state/any', { signal: ctx.signal, errors, source: 'checks', missing: [], take: (v) => (checks = v), draw });
}

interface Instance {
  Node: { Node: string; Address: string };
  Service: { ID: string; Service: string; Tags: string[] | null; Address: string; Port: number };
  Checks: Check[];
}

function serviceView(ctx: ViewContext, name: string): void {
  const errors = errorBox();
  const body = h('div', { 'aria-busy': 'true' }, 'Loading…');
  show(ctx.root, h('p', {}, h('a', { href: ctx.link('services') }, '← All services')), title(`Service ${name}`), errors.el, body);
  watch<Instance[]>(`/v1/health/service/${encodeURIComponent(name)}`, {
    signal: ctx.signal,
    onValue: (v) => {
      errors.set(undefined);
      body.removeAttribute('aria-busy');
      const instances = v ?? [];
      if (instances.length === 0) return show(body, h('p', { class: 'empty' }, `No instances of ${name} are registered.`));
      show(body, instances.map((i) => instanceSection(ctx, i)));
    },
    onError: (e) => errors.set(e),
  });
}

function instanceSection(ctx: ViewContext, i: Instance): HTMLElement {
  const address = `${i.Service.Address || i.Node.Address}:${i.Service.Port}`;
  const headingId = `instance-${i.Node.Node}-${i.Service.ID}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return h(
    'section',
    { class: 'instance', 'aria-labelledby': headingId, 'data-instance': i.Service.ID },
    h('h2', { id: headingId }, `${i.Service.ID} on `, h('a', { href: ctx.link('nodes', i.Node.Node) }, i.Node.Node)),
    h('dl', {}, h('dt', {}, 'Address'), h('dd', {}, address), h('dt', {}, 'Tags'), h('dd', {}, (i.Service.Tags ?? []).join(', ') || '—')),
    checksTable(`Checks of ${i.Service.ID} on ${i.Node.Node}`, i.Checks),
  );
}

export function checksTable(caption: string, checks: Check[]): HTMLElement {
  const rows = checks.map((c) =>
    h(
      'tr',
      { 'data-check': c.CheckID },
      h('th', { scope: 'row' }, c.Name || c.CheckID),
      h('td', {}, c.ServiceID ? 'service' : 'node'),
      h('td', {}, statusBadge(c.Status)),
      h('td', {}, h('pre', {}, c.Output || c.Notes || '')),
    ),
  );
  return table(caption, ['Check', 'Scope', 'Status', 'Output'], rows, 'No checks.');
}
