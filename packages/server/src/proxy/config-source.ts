// Where a proxy's configuration comes from (Consul's ConfigWatcher): the command's flags, fixed; or
// the agent's registration of the proxy, followed by hash-blocking reads so that a changed
// registration (new upstreams, a moved local service) is picked up. A managed proxy's Config and
// Upstreams live in `/v1/agent/connect/proxy/:id`; any other proxy's in `/v1/agent/service/:id`.
import { AgentApiError, type AgentApi } from './agent-api';
import { blockingLoop, type BlockingLoop } from './blocking-loop';
import { configFromAgentService, configFromManagedProxy, type ProxyConfig } from './proxy-config';
import type { ProxyLog } from './proxy-log';

export interface ConfigSource {
  /** Calls `fn` with the first configuration and then with each change; resolves after the first. */
  start(fn: (cfg: ProxyConfig) => void): Promise<void>;
  stop(): void;
  describe(): string;
}

export function staticSource(cfg: ProxyConfig): ConfigSource {
  return {
    async start(fn) {
      fn(cfg);
    },
    stop() {},
    describe: () => 'Flags',
  };
}

export function agentSource(api: AgentApi, proxyId: string, log: ProxyLog): ConfigSource {
  let loop: BlockingLoop | undefined;
  return {
    async start(fn) {
      const id = encodeURIComponent(proxyId);
      let managed = true;
      try {
        await api.get(`/v1/agent/connect/proxy/${id}`);
      } catch (err) {
        if (!(err instanceof AgentApiError && err.status === 404)) throw err;
        managed = false;
      }
      const path = managed ? `/v1/agent/connect/proxy/${id}` : `/v1/agent/service/${id}`;
      loop = blockingLoop<Record<string, unknown>>(
        (last, signal) => api.block(path, {}, { hash: last.hash }, signal),
        (v) => {
          try {
            fn(managed ? configFromManagedProxy(v) : configFromAgentService(v));
          } catch (err) {
            log.error('proxy configuration is not usable', { proxyId, err: (err as Error).message });
          }
        },
        (err) => log.warn('watching the proxy configuration failed', { proxyId, err: err.message }),
      );
      await loop.ready;
    },
    stop: () => loop?.stop(),
    describe: () => `Agent API (proxy ID ${proxyId})`,
  };
}

/** The one connect-proxy registered on the agent as sidecar for `serviceId` (Consul's LookupProxyIDForSidecar). */
export async function proxyIdForSidecar(api: AgentApi, serviceId: string): Promise<string> {
  let services: Record<string, { ID: string; Kind?: string; Proxy?: { DestinationServiceID?: string } }>;
  try {
    services = (await api.get<typeof services>('/v1/agent/services')).body;
  } catch (err) {
    throw new Error(`Failed looking up sidecar proxy info for ${serviceId}: ${(err as Error).message}`);
  }
  const ids = Object.values(services)
    .filter((s) => s.Kind === 'connect-proxy' && (s.Proxy?.DestinationServiceID ?? '').toLowerCase() === serviceId.toLowerCase())
    .map((s) => s.ID);
  if (ids.length === 0) throw new Error(`No sidecar proxy registered for ${serviceId}`);
  if (ids.length > 1) throw new Error(`More than one sidecar proxy registered for ${serviceId}.\n    Start proxy with -proxy-id and one of the following IDs: ${ids.join(', ')}`);
  return ids[0]!;
}
