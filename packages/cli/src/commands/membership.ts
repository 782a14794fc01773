// `registry join`, `leave`, `force-leave` and `reload`: the agent's own lifecycle over HTTP.
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withClientFlags } from '../http-flags';
import { err, out } from '../output';

export function joinCommand(): Command {
  const c = withClientFlags(new Command('join').description('tell the agent to join the cluster of another server'))
    .argument('<address...>', 'host:server-port of a server')
    .option('--wan', 'accepted for compatibility; registry joins WAN areas through operator area');
  return c.action((addresses: string[]) =>
    attempt('Error joining the cluster', async () => {
      const client = clientOf(c.opts());
      let joined = 0;
      for (const a of addresses) {
        try {
          await client.put(`/v1/agent/join/${encodeURIComponent(a)}`, undefined, { local: true });
          joined += 1;
        } catch (e) {
          err(`Error joining address '${a}': ${(e as Error).message}`);
        }
      }
      if (joined === 0) throw usage('Failed to join any nodes.');
      out(`Successfully joined cluster by contacting ${joined} nodes.`);
    }),
  );
}

export function leaveCommand(): Command {
  const c = withClientFlags(new Command('leave').description('gracefully leave the cluster and shut down the agent'));
  return c.action(() =>
    attempt('Error leaving', async () => {
      await clientOf(c.opts()).put('/v1/agent/leave', undefined, { local: true });
      out('Graceful leave complete');
    }),
  );
}

export function forceLeaveCommand(): Command {
  const c = withClientFlags(new Command('force-leave').description('force a failed member out of the cluster')).argument('<node>', 'the node name');
  return c.action((node: string) =>
    attempt('Error force leaving', async () => {
      await clientOf(c.opts()).put(`/v1/agent/force-leave/${encodeURIComponent(node)}`, undefined, { local: true });
    }),
  );
}

export function reloadCommand(): Command {
  const c = withClientFlags(new Command('reload').description('make the agent reload its configuration files'));
  return c.action(() =>
    attempt('Error reloading', async () => {
      await clientOf(c.opts()).put('/v1/agent/reload', undefined, { local: true });
      out('Configuration reload triggered');
    }),
  );
}
