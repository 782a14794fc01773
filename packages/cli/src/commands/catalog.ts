// `registry catalog datacenters|nodes|services`, with Consul's flags and columns.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withServerFlags } from '../http-flags';
import { err, out, printTable } from '../output';

interface CatalogNode {
  Node: string;
  ID: string;
  Address: string;
  Datacenter: string;
  TaggedAddresses?: Record<string, string> | null;
  Meta?: Record<string, string> | null;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `-node-meta key=value` (repeatable) → `?node-meta=key:value`, as Consul's flag does. */
function nodeMeta(pairs: string[] = []): string[] {
  return pairs.map((p) => {
    const i = p.indexOf('=');
    if (i <= 0) throw usage(`Error parsing -node-meta ${JSON.stringify(p)}: expected key=value`);
    return `${p.slice(0, i)}:${p.slice(i + 1)}`;
  });
}

const mapText = (m?: Record<string, string> | null) =>
  Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${m![k]}`)
    .join(', ');

export function catalogCommand(): Command {
  const catalog = new Command('catalog').description('interact with the catalog');

  const dcs = withServerFlags(new Command('datacenters').description('list the known datacenters'));
  catalog.addCommand(
    dcs.action(() =>
      attempt('Error listing datacenters', async () => {
        const list = await clientOf(dcs.opts()).get<string[]>('/v1/catalog/datacenters', { local: true });
        if (list.length === 0) {
          err('No datacenters found');
          process.exitCode = 1;
          return;
        }
        for (const dc of list) out(dc);
      }),
    ),
  );

  const nodes = withServerFlags(new Command('nodes').description('list the nodes of the catalog'))
    .option('--detailed', 'full node IDs, tagged addresses and meta')
    .option('--near <node>', 'sort by round-trip time from this node (_agent: the queried agent)')
    .option('--node-meta <key=value>', 'only nodes with this metadata (repeatable)', collect)
    .option('--service <name>', 'only nodes providing this service');
  catalog.addCommand(
    nodes.action(() =>
      attempt('Error listing nodes', async () => {
        const o = nodes.opts();
        const client = clientOf(o);
        const query = { 'node-meta': nodeMeta(o.nodeMeta), near: o.near };
        let list: CatalogNode[];
        if (o.service) {
          const entries = await client.get<any[]>(`/v1/catalog/service/${encodeURIComponent(o.service)}`, { query });
          list = entries.map((s) => ({ Node: s.Node, ID: s.ID, Address: s.Address, Datacenter: s.Datacenter, TaggedAddresses: s.TaggedAddresses, Meta: s.NodeMeta }));
        } else {
          list = await client.get<CatalogNode[]>('/v1/catalog/nodes', { query });
        }
        if (list.length === 0) {
          err('No nodes match the given query - try expanding your search.');
          return;
        }
        if (o.detailed) {
          printTable([
            ['Node', 'ID', 'Address', 'DC', 'TaggedAddresses', 'Meta'],
            ...list.map((n) => [n.Node, n.ID, n.Address, n.Datacenter, mapText(n.TaggedAddresses), mapText(n.Meta)]),
          ]);
        } else {
          printTable([['Node', 'ID', 'Address', 'DC'], ...list.map((n) => [n.Node, (n.ID ?? '').slice(0, 8), n.Address, n.Datacenter])]);
        }
      }),
    ),
  );

  const services = withServerFlags(new Command('services').description('list the services of the catalog'))
    .option('--node <name>', 'only services on this node')
    .option('--node-meta <key=value>', 'only services on nodes with this metadata (repeatable)', collect)
    .option('--tags', 'show each service\'s tags');
  catalog.addCommand(
    services.action(() =>
      attempt('Error listing services', async () => {
        const o = services.opts();
        const client = clientOf(o);
        let byName: Record<string, string[]>;
        if (o.node) {
          const node = await client.get<{ Services?: Record<string, { Service: string; Tags?: string[] | null }> } | null>(`/v1/catalog/node/${encodeURIComponent(o.node)}`, {
            query: { 'node-meta': nodeMeta(o.nodeMeta) },
          });
          byName = {};
          for (const s of Object.values(node?.Services ?? {})) byName[s.Service] = [...new Set([...(byName[s.Service] ?? []), ...(s.Tags ?? [])])];
        } else {
          byName = await client.get<Record<string, string[]>>('/v1/catalog/services', { query: { 'node-meta': nodeMeta(o.nodeMeta) } });
        }
        const names = Object.keys(byName).sort();
        if (names.length === 0) {
          err('No services match the given query - try expanding your search.');
          return;
        }
        if (o.tags) printTable(names.map((n) => [n, [...(byName[n] ?? [])].sort().join(',')]));
        else for (const n of names) out(n);
      }),
    ),
  );
  return catalog;
}
