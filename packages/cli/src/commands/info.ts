// `registry info`: the agent's /v1/agent/self Stats, section by section, keys sorted (Consul's layout).
import { Command } from 'commander';
import { attempt } from '../action';
import { clientOf, withClientFlags } from '../http-flags';
import { out } from '../output';

export function infoCommand(): Command {
  const c = withClientFlags(new Command('info').description('debugging information about the agent'));
  return c.action(() =>
    attempt('Error querying agent', async () => {
      const self = await clientOf(c.opts()).get<{ Stats?: Record<string, Record<string, unknown>> }>('/v1/agent/self', { local: true });
      const stats = self.Stats ?? {};
      for (const section of Object.keys(stats).sort()) {
        out(`${section}:`);
        const values = stats[section] ?? {};
        for (const k of Object.keys(values).sort()) {
          const v = values[k];
          out(`\t${k} = ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`);
        }
      }
    }),
  );
}
