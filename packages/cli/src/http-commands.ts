// Commands that talk to an agent over HTTP (REGISTRY_HTTP_ADDR, default 127.0.0.1:8500). Consul's
// CONSUL_HTTP_ADDR / CONSUL_HTTP_TOKEN are honoured too, below the REGISTRY_* names.
import { Command } from 'commander';

function baseUrl(opt?: string): string {
  const addr = opt || process.env.REGISTRY_HTTP_ADDR || process.env.CONSUL_HTTP_ADDR || '127.0.0.1:8500';
  return /^https?:\/\//.test(addr) ? addr : `http://${addr}`;
}

async function call(method: string, path: string, opts: { httpAddr?: string; token?: string }, body?: unknown) {
  const headers: Record<string, string> = {};
  const token = opts.token || process.env.REGISTRY_HTTP_TOKEN || process.env.CONSUL_HTTP_TOKEN;
  if (token) headers['X-Registry-Token'] = token;
  const res = await fetch(baseUrl(opts.httpAddr) + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const withHttp = (c: Command) =>
  c
    .option('--http-addr <addr>', 'agent HTTP address (env REGISTRY_HTTP_ADDR, else CONSUL_HTTP_ADDR)')
    .option('--token <token>', 'ACL token (env REGISTRY_HTTP_TOKEN, else CONSUL_HTTP_TOKEN)');

export function httpCommands(): Command[] {
  const members = withHttp(new Command('members').description('list the servers of the cluster')).action(async (o) => {
    const list = (await call('GET', '/v1/agent/members', o)) as { Name: string; Addr: string; Port: number; Status: number }[];
    const rows = list.map((m) => [m.Name, `${m.Addr}:${m.Port}`, m.Status === 1 ? 'alive' : 'failed', 'server']);
    printTable([['Node', 'Address', 'Status', 'Type'], ...rows]);
  });

  const catalog = new Command('catalog').description('read the catalog');
  catalog.addCommand(
    withHttp(new Command('services')).action(async (o) => {
      const services = (await call('GET', '/v1/catalog/services', o)) as Record<string, string[]>;
      for (const name of Object.keys(services).sort()) console.log(name);
    }),
  );
  catalog.addCommand(
    withHttp(new Command('nodes')).action(async (o) => {
      const nodes = (await call('GET', '/v1/catalog/nodes', o)) as { Node: string; ID: string; Address: string; Datacenter: string }[];
      printTable([['Node', 'ID', 'Address', 'DC'], ...nodes.map((n) => [n.Node, n.ID.slice(0, 8), n.Address, n.Datacenter])]);
    }),
  );
  catalog.addCommand(
    withHttp(new Command('datacenters')).action(async (o) => {
      for (const dc of (await call('GET', '/v1/catalog/datacenters', o)) as string[]) console.log(dc);
    }),
  );

  const operator = new Command('operator').description('cluster operations');
  const raft = new Command('raft');
  raft.addCommand(
    withHttp(new Command('list-peers')).action(async (o) => {
      const conf = (await call('GET', '/v1/operator/raft/configuration', o)) as {
        Servers: { Node: string; ID: string; Address: string; Leader: boolean; Voter: boolean }[];
      };
      printTable([
        ['Node', 'ID', 'Address', 'State', 'Voter'],
        ...conf.Servers.map((s) => [s.Node, s.ID, s.Address, s.Leader ? 'leader' : 'follower', String(s.Voter)]),
      ]);
    }),
  );
  operator.addCommand(raft);

  const leave = withHttp(new Command('leave').description('make the agent leave the cluster and stop')).action(async (o) => {
    await call('PUT', '/v1/agent/leave', o);
    console.log('Graceful leave complete');
  });

  const join = withHttp(new Command('join').argument('<address>', 'host:server-port of a server')).action(async (address, o) => {
    await call('PUT', `/v1/agent/join/${encodeURIComponent(address)}`, o);
    console.log(`Successfully joined cluster by contacting ${address}`);
  });

  return [members, catalog, operator, leave, join];
}

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}
