// `registry healthcheck`: exit 0 only when this agent is a working part of a cluster — for a
// container's HEALTHCHECK (the slim image has no curl). "Knows a leader" is not enough: a server
// that recorded a wrong address for the leader named one and never received the log (issue #25).
//   server: the leader it names is in its configuration, the leader (asked through it: autopilot
//           health) counts it healthy — in its term, heard from lately, its log within
//           MaxTrailingLogs — and it has applied the log to within -max-lag entries of the leader's;
//   client: a server answered it, naming a leader.
// Prints one line, `healthy: …` or `unhealthy: …`; exit 1 when unhealthy or unreachable.
import { Command } from 'commander';
import { CliError } from '../cli-error';
import { clientOf, withClientFlags } from '../http-flags';
import type { Client } from '../http-client';
import { out } from '../output';

interface Self {
  Config: { NodeID: string; NodeName: string; Server: boolean };
  Stats?: { raft?: { appliedIndex?: number }; agent?: { server?: string } };
}

interface ServerHealth { ID: string; Leader: boolean; Healthy: boolean; LastIndex: number; LastContact: string; LastTerm: number }

const unhealthy = (why: string) => new CliError(`unhealthy: ${why}`, 1);

function isWildcard(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === '0.0.0.0' || host === '::' || host === '';
}

async function check(client: Client, maxLag: number, timeoutMs: number): Promise<string> {
  const opts = { timeoutMs };
  const self = await client.get<Self>('/v1/agent/self', { ...opts, local: true });
  const answer = await client.request('GET', '/v1/status/leader', { ...opts, accept: [500] });
  if (answer.status !== 200) throw unhealthy(answer.text().trim() || `status ${answer.status}`);
  const leader = answer.json<string>();
  if (typeof leader !== 'string' || leader === '') throw unhealthy('no cluster leader');
  if (isWildcard(leader)) throw unhealthy(`the leader is known only by the wildcard address ${leader}`);
  if (!self.Config.Server) {
    return `client ${self.Config.NodeName} connected to ${self.Stats?.agent?.server || 'a server'}, leader ${leader}`;
  }
  const peers = await client.get<string[]>('/v1/status/peers', opts);
  if (!peers.includes(leader)) throw unhealthy(`leader ${leader} is not in this server's configuration (${peers.join(', ') || 'empty'})`);
  // Forwarded to the leader, over the very link this server uses; 429 is Consul's "not every server healthy".
  const reply = await client.request('GET', '/v1/operator/autopilot/health', { ...opts, accept: [429] });
  const servers = (reply.json<{ Servers?: ServerHealth[] }>()?.Servers ?? []);
  const me = servers.find((s) => s.ID === self.Config.NodeID);
  if (!me) throw unhealthy(`the leader ${leader} does not count this server (${self.Config.NodeID}) as a member`);
  if (!me.Healthy) throw unhealthy(`the leader counts this server unhealthy (last contact ${me.LastContact}, term ${me.LastTerm}, index ${me.LastIndex})`);
  const leaderIndex = servers.find((s) => s.Leader)?.LastIndex ?? 0;
  const applied = self.Stats?.raft?.appliedIndex ?? 0;
  if (leaderIndex - applied > maxLag) throw unhealthy(`applied index ${applied} trails the leader's ${leaderIndex} by more than ${maxLag}`);
  return `server ${self.Config.NodeName}, leader ${leader}, applied ${applied} of ${leaderIndex}`;
}

export function healthcheckCommand(): Command {
  const c = withClientFlags(new Command('healthcheck').description('exit 0 only if this agent has a real leader and (a server) has applied the log'))
    .option('--max-lag <entries>', 'how far a server\'s applied index may trail the leader\'s log', '128')
    .option('--timeout <ms>', 'give up (unhealthy) after this long in all', '2500');
  return c.action(async () => {
    const o = c.opts<{ maxLag: string; timeout: string }>();
    const maxLag = Number(o.maxLag);
    const timeoutMs = Number(o.timeout);
    if (!Number.isInteger(maxLag) || maxLag < 0) throw new CliError('Error: -max-lag must be a whole number of entries', 1);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new CliError('Error: -timeout must be a number of milliseconds', 1);
    try {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(unhealthy(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        out(`healthy: ${await Promise.race([check(clientOf(c.opts()), maxLag, timeoutMs), late])}`);
      } finally {
        clearTimeout(timer);
      }
    } catch (e) {
      if (e instanceof CliError && e.message.startsWith('unhealthy:')) throw e;
      throw unhealthy((e as Error).message);
    }
  });
}
