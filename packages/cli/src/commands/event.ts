// `registry event -name NAME [-node RE] [-service RE] [-tag RE] [PAYLOAD]` (Consul's command/event):
// PUT /v1/event/fire/NAME, printing the event's ID.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withServerFlags } from '../http-flags';
import { out } from '../output';
import { compileUserRegexp } from '../user-regexp';

export function eventCommand(): Command {
  const c = withServerFlags(new Command('event').description('fire a custom event'))
    .argument('[payload]', 'the event\'s payload')
    .option('--name <name>', 'the event\'s name')
    .option('--node <regexp>', 'only nodes whose name matches')
    .option('--service <regexp>', 'only nodes running a matching service')
    .option('--tag <regexp>', 'with -service, only instances with a matching tag');
  return c.action((payload: string | undefined, _o: unknown, cmd: Command) =>
    attempt('Error firing event', async () => {
      const o = c.opts();
      if (cmd.args.length > 1) throw usage('Too many command line arguments.');
      if (!o.name) throw usage('Event name must be specified');
      if (o.tag && !o.service) throw usage('Cannot provide tag filter without service filter.');
      for (const [flag, re] of [['node', o.node], ['service', o.service], ['tag', o.tag]] as const) {
        if (!re) continue;
        try {
          await compileUserRegexp(re);
        } catch (e) {
          throw usage(`Failed to compile ${flag} filter regexp: ${(e as Error).message}`);
        }
      }
      const client = clientOf(o);
      const ev = await client.put<{ ID: string }>(`/v1/event/fire/${encodeURIComponent(o.name)}`, payload === undefined ? undefined : Buffer.from(payload), {
        query: { node: o.node, service: o.service, tag: o.tag },
      });
      out(`Event ID: ${ev.ID}`);
    }),
  );
}
