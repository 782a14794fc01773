// `registry intention create|delete|get|check|match` (Consul 1.4's command/intention). An
// intention is named by its ID or by SRC DST (found by listing, as Consul's finder does).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { ExitCode } from '../cli-error';
import type { Client } from '../http-client';
import { clientOf, withServerFlags } from '../http-flags';
import { out, printFields } from '../output';

interface Intention {
  ID: string;
  SourceName: string;
  DestinationName: string;
  SourceNS?: string;
  DestinationNS?: string;
  Action: string;
  Meta?: Record<string, string> | null;
  CreatedAt?: string;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];
const show = (i: Intention) => `${i.SourceName} => ${i.DestinationName} (${i.Action})`;

async function find(client: Client, args: string[]): Promise<Intention> {
  if (args.length === 1) return client.get<Intention>(`/v1/connect/intentions/${encodeURIComponent(args[0])}`);
  if (args.length !== 2) throw usage('command requires exactly 1 or 2 arguments: ID or SRC DST');
  const [src, dst] = args;
  const all = await client.get<Intention[]>('/v1/connect/intentions');
  const hit = all.find((i) => i.SourceName === src && i.DestinationName === dst);
  if (!hit) throw usage(`Intention with source "${src}" and destination "${dst}" not found.`);
  return hit;
}

export function intentionCommand(): Command {
  const intention = new Command('intention').description('manage service-to-service intentions');

  const create = withServerFlags(new Command('create').description('create an intention'))
    .argument('[args...]', 'SRC DST, or with -file the files to read')
    .option('--allow', 'allow the connection (the default)')
    .option('--deny', 'deny the connection')
    .option('--file', 'read intentions (JSON) from the files given as arguments')
    .option('--replace', 'replace an existing intention with the same source and destination')
    .option('--meta <key=value>', 'metadata (repeatable)', collect);
  intention.addCommand(
    create.action((args: string[]) =>
      attempt('Error creating intention', async () => {
        const o = create.opts();
        if (o.allow && o.deny) throw usage('Only one of -allow or -deny may be specified.');
        const client = clientOf(o);
        let wanted: Partial<Intention>[];
        if (o.file) {
          if (args.length === 0) throw usage('Must specify at least one file with -file');
          wanted = args.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Partial<Intention>);
        } else {
          if (args.length !== 2) throw usage('Must specify two arguments: source and destination');
          const meta: Record<string, string> = {};
          for (const kv of o.meta ?? []) {
            const i = kv.indexOf('=');
            if (i <= 0) throw usage(`Error parsing -meta ${JSON.stringify(kv)}: expected key=value`);
            meta[kv.slice(0, i)] = kv.slice(i + 1);
          }
          wanted = [{ SourceName: args[0], DestinationName: args[1], SourceType: 'registry', Action: o.deny ? 'deny' : 'allow', Meta: meta } as Partial<Intention>];
        }
        for (const ixn of wanted) {
          if (o.replace) {
            const all = await client.get<Intention[]>('/v1/connect/intentions');
            const old = all.find((i) => i.SourceName === ixn.SourceName && i.DestinationName === ixn.DestinationName);
            if (old) await client.delete(`/v1/connect/intentions/${old.ID}`);
          }
          await client.request('POST', '/v1/connect/intentions', { body: ixn });
          out(`Created: ${show(ixn as Intention)}`);
        }
      }),
    ),
  );

  const get = withServerFlags(new Command('get').description('show an intention')).argument('<args...>', 'ID or SRC DST');
  intention.addCommand(
    get.action((args: string[]) =>
      attempt('Error reading the intention', async () => {
        const ixn = await find(clientOf(get.opts()), args);
        const fields: [string, string][] = [
          ['Source', ixn.SourceName],
          ['Destination', ixn.DestinationName],
          ['Action', ixn.Action],
          ['ID', ixn.ID],
        ];
        for (const k of Object.keys(ixn.Meta ?? {}).sort()) fields.push([`Meta[${k}]`, ixn.Meta![k]]);
        if (ixn.CreatedAt) fields.push(['Created At', new Date(ixn.CreatedAt).toUTCString()]);
        printFields(fields);
      }),
    ),
  );

  const del = withServerFlags(new Command('delete').description('delete an intention')).argument('<args...>', 'ID or SRC DST');
  intention.addCommand(
    del.action((args: string[]) =>
      attempt('Error deleting intention', async () => {
        const client = clientOf(del.opts());
        const ixn = await find(client, args);
        await client.delete(`/v1/connect/intentions/${ixn.ID}`);
        out('Intention deleted.');
      }),
    ),
  );

  const check = withServerFlags(new Command('check').description('would SRC be allowed to connect to DST? (exit 0 allowed, 2 denied)'))
    .argument('<source>')
    .argument('<destination>');
  intention.addCommand(
    check.action((source: string, destination: string) =>
      attempt('Error checking the connection', async () => {
        const { Allowed } = await clientOf(check.opts()).get<{ Allowed: boolean }>('/v1/connect/intentions/check', { query: { source, destination } });
        out(Allowed ? 'Allowed' : 'Denied');
        if (!Allowed) throw new ExitCode(2);
      }),
    ),
  );

  const match = withServerFlags(new Command('match').description('list the intentions that match a source or destination, by precedence'))
    .argument('<name>')
    .option('--destination', 'match intentions by destination (the default)')
    .option('--source', 'match intentions by source');
  intention.addCommand(
    match.action((name: string) =>
      attempt('Error matching the intention', async () => {
        const o = match.opts();
        if (o.source && o.destination) throw usage('Only one of -source or -destination may be specified.');
        const by = o.source ? 'source' : 'destination';
        const result = await clientOf(o).get<Record<string, Intention[]>>('/v1/connect/intentions/match', { query: { by, name } });
        for (const ixn of result[name] ?? []) out(show(ixn));
      }),
    ),
  );
  return intention;
}
