// `registry maint [-enable|-disable] [-reason R] [-service ID]` (Consul's command/maint): with no
// flags, list what is in maintenance (the agent's _node_maintenance / _service_maintenance checks).
import { Command } from 'commander';
import { attempt, usage } from '../action';
import { clientOf, withClientFlags } from '../http-flags';
import { out } from '../output';

interface AgentCheck {
  CheckID: string;
  ServiceID?: string;
  Notes?: string;
}

const NODE_MAINT = '_node_maintenance';
const SERVICE_MAINT = '_service_maintenance:';

export function maintCommand(): Command {
  const c = withClientFlags(new Command('maint').description('put a node or service into maintenance mode (or list what is)'))
    .option('--enable', 'enable maintenance mode')
    .option('--disable', 'disable maintenance mode')
    .option('--reason <text>', 'why (with -enable)', '')
    .option('--service <id>', 'a service ID instead of the whole node');
  return c.action(() =>
    attempt('Error toggling maintenance mode', async () => {
      const o = c.opts();
      if (o.enable && o.disable) throw usage('Only one of -enable or -disable may be provided');
      if (!o.enable && o.reason) throw usage('Reason may only be provided with -enable');
      if (!o.enable && !o.disable && o.service) throw usage('Service requires either -enable or -disable');
      const client = clientOf(o);
      if (!o.enable && !o.disable) {
        const self = await client.get<{ Config: { NodeName: string } }>('/v1/agent/self', { local: true });
        // The agent's own checks, and the node's catalog checks for an agent that keeps its
        // maintenance checks only in the catalog.
        const local = await client.get<Record<string, AgentCheck>>('/v1/agent/checks', { local: true });
        const node = await client.get<AgentCheck[]>(`/v1/health/node/${encodeURIComponent(self.Config.NodeName)}`, { local: true }).catch(() => [] as AgentCheck[]);
        const checks = new Map<string, AgentCheck>();
        for (const ch of [...Object.values(local), ...node]) if (!checks.has(ch.CheckID)) checks.set(ch.CheckID, ch);
        for (const ch of checks.values()) {
          if (ch.CheckID === NODE_MAINT) {
            out('Node:');
            out(`  Name:   ${self.Config.NodeName}`);
            out(`  Reason: ${ch.Notes ?? ''}`);
            out('');
          } else if (ch.CheckID.startsWith(SERVICE_MAINT)) {
            out('Service:');
            out(`  ID:     ${ch.ServiceID ?? ch.CheckID.slice(SERVICE_MAINT.length)}`);
            out(`  Reason: ${ch.Notes ?? ''}`);
            out('');
          }
        }
        return;
      }
      const query = { enable: o.enable ? 'true' : 'false', reason: o.enable && o.reason ? o.reason : undefined };
      const word = o.enable ? 'enabled' : 'disabled';
      if (o.service) {
        await client.put(`/v1/agent/service/maintenance/${encodeURIComponent(o.service)}`, undefined, { query, local: true });
        out(`Service maintenance is now ${word} for "${o.service}"`);
      } else {
        await client.put('/v1/agent/maintenance', undefined, { query, local: true });
        out(`Node maintenance is now ${word}`);
      }
    }),
  );
}
