// The cluster's servers: Raft configuration, the leader, and the indexes the agent reports.
//
// /v1/operator/raft/configuration and /v1/status/leader cannot block, so they are re-read each
// time a blocking query on the servers' own `registry` service answers: at once when a server's
// health changes, and at least every 10 s (that query's wait) for changes the catalog does not
// record, such as a new leader.
import { get } from '../api.js';
import { watch } from '../blocking.js';
import { errorBox, h, show, table } from '../dom.js';
import { statusBadge } from '../badge.js';
import { rollup, worst, type Check } from '../health.js';
import { title, type ViewContext } from '../view.js';

interface RaftServer {
  ID: string;
  Node: string;
  Address: string;
  Leader: boolean;
  Voter: boolean;
}

interface RaftConfiguration {
  Servers: RaftServer[];
  Index: number;
}

interface ServerInstance {
  Node: { Node: string };
  Checks: Check[];
}

export function serversView(ctx: ViewContext): void {
  const errors = errorBox();
  const summary = h('dl', { class: 'summary', 'aria-busy': 'true' });
  const body = h('div', {});
  show(ctx.root, title('Servers'), errors.el, summary, body);
  let busy = false;
  watch<ServerInstance[]>('/v1/health/service/registry', {
    signal: ctx.signal,
    wait: '10s',
    everyAnswer: true,
    onValue: (instances, healthIndex) => {
      if (busy) return;
      busy = true;
      Promise.all([
        get<RaftConfiguration>('/v1/operator/raft/configuration', { signal: ctx.signal }),
        get<string>('/v1/status/leader', { signal: ctx.signal }),
      ])
        .then(([config, leader]) => {
          errors.set(undefined);
          const health = new Map((instances ?? []).map((i) => [i.Node.Node, worst(rollup(i.Checks))]));
          const conf = config.value ?? { Servers: [], Index: 0 };
          summary.removeAttribute('aria-busy');
          show(
            summary,
            h('dt', {}, 'Leader'),
            h('dd', { 'data-field': 'leader' }, leader.value || 'no leader'),
            h('dt', {}, 'Raft configuration index'),
            h('dd', { 'data-field': 'raft-index' }, String(conf.Index)),
            h('dt', {}, 'Catalog index (last change seen)'),
            h('dd', { 'data-field': 'registry-index' }, String(config.index || healthIndex)),
          );
          const rows = conf.Servers.map((s) =>
            h(
              'tr',
              { 'data-server': s.Node },
              h('th', { scope: 'row' }, h('a', { href: ctx.link('nodes', s.Node) }, s.Node)),
              h('td', {}, s.ID),
              h('td', {}, s.Address),
              h('td', {}, s.Leader ? h('strong', {}, 'leader') : 'follower'),
              h('td', {}, s.Voter ? 'yes' : 'no'),
              h('td', {}, health.has(s.Node) && health.get(s.Node) !== 'none' ? statusBadge(health.get(s.Node)!) : '—'),
            ),
          );
          show(body, table(`Servers in ${ctx.route.dc}`, ['Node', 'ID', 'Address', 'Role', 'Voter', 'Health'], rows, 'No servers in the Raft configuration.'));
        })
        .catch((e: Error) => {
          if (!ctx.signal.aborted) errors.set(e);
        })
        .finally(() => {
          busy = false;
        });
    },
    onError: (e) => errors.set(e),
  });
}
