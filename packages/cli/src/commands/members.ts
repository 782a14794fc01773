// `registry members`: Consul's columns (Node Address Status Type Build Protocol DC Segment), or with
// -detailed the member's tags; -status filters by a regular expression over the status word.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withClientFlags } from '../http-flags';
import { printTable } from '../output';
import { compileUserRegexp } from '../user-regexp';

interface Member {
  Name: string;
  Addr: string;
  Port: number;
  Tags?: Record<string, string>;
  Status: number;
}

const STATUS = ['none', 'alive', 'leaving', 'left', 'failed'];

export function membersCommand(): Command {
  const c = withClientFlags(new Command('members').description('list the members of the cluster'))
    .option('--detailed', 'show each member\'s tags')
    .option('--status <regexp>', 'only members whose status matches')
    .option('--segment <name>', 'accepted for compatibility; registry has no segments')
    .option('--wan', 'accepted for compatibility; registry has no WAN gossip pool');
  return c.action(() =>
    attempt('Error retrieving members', async () => {
      const o = c.opts();
      let re: { test(input: string): boolean } | undefined;
      if (o.status) {
        try {
          re = await compileUserRegexp(o.status);
        } catch (e) {
          throw usage(`Failed to compile status regexp: ${(e as Error).message}`);
        }
      }
      const list = await clientOf(o).get<Member[]>('/v1/agent/members', { local: true });
      const rows = list
        .map((m) => ({ m, status: STATUS[m.Status] ?? 'unknown' }))
        .filter(({ status }) => !re || re.test(status))
        .sort((a, b) => a.m.Name.localeCompare(b.m.Name));
      if (rows.length === 0) {
        // Consul: nothing matched is exit 2 with no output.
        process.exitCode = 2;
        return;
      }
      const addr = (m: Member) => (m.Addr.includes(':') ? `[${m.Addr}]:${m.Port}` : `${m.Addr}:${m.Port}`);
      if (o.detailed) {
        const tags = (t: Record<string, string> = {}) =>
          Object.keys(t)
            .sort()
            .map((k) => `${k}=${t[k]}`)
            .join(',');
        printTable([['Node', 'Address', 'Status', 'Tags'], ...rows.map(({ m, status }) => [m.Name, addr(m), status, tags(m.Tags)])]);
        return;
      }
      printTable([
        ['Node', 'Address', 'Status', 'Type', 'Build', 'Protocol', 'DC', 'Segment'],
        ...rows.map(({ m, status }) => {
          const t = m.Tags ?? {};
          const server = t.role === 'registry' || t.role === 'consul';
          return [m.Name, addr(m), status, server ? 'server' : 'client', (t.build ?? '').split(':')[0], t.vsn ?? '', t.dc ?? '', server ? '<all>' : t.segment ?? ''];
        }),
      ]);
    }),
  );
}
