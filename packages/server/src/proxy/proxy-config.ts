// What a proxy does, in Consul 1.4's terms (connect/proxy/config.go): the service it represents, its
// public listener (mutual TLS in, plain TCP to the local service) and its upstreams (plain TCP in,
// mutual TLS to a healthy instance of the destination). Built from the command's flags or from the
// agent's registration of the proxy; defaults as Consul applies them.

export interface PublicListenerConfig {
  bindAddress: string;
  bindPort: number;
  /** host:port of the application behind the proxy. */
  localServiceAddress: string;
  localConnectTimeoutMs: number;
  handshakeTimeoutMs: number;
}

export interface UpstreamConfig {
  destinationType: 'service' | 'prepared_query';
  destinationName: string;
  /** Empty: the agent's own datacenter. */
  datacenter: string;
  localBindAddress: string;
  localBindPort: number;
  connectTimeoutMs: number;
}

export interface ProxyConfig {
  /** The service whose identity (leaf certificate) the proxy carries. */
  service: string;
  publicListener: PublicListenerConfig | null;
  upstreams: UpstreamConfig[];
  /** host:port where the proxy serves its own metrics (Config `prometheus_bind_addr`); '' for none. */
  prometheusBindAddr?: string;
}

/** Two configurations that need the same listeners (compared before listeners are rebuilt). */
export function sameConfig(a: ProxyConfig, b: ProxyConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : fallback);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function publicListenerOf(bindAddress: string, bindPort: number, localServiceAddress: string, config: Record<string, unknown> = {}): PublicListenerConfig {
  return {
    bindAddress: bindAddress || '0.0.0.0',
    bindPort,
    localServiceAddress,
    localConnectTimeoutMs: num(config.local_connect_timeout_ms, 1000),
    handshakeTimeoutMs: num(config.handshake_timeout_ms, 10_000),
  };
}

/** One upstream as the agent's API spells it (Upstreams[] of a proxy registration). */
export function upstreamOf(raw: unknown): UpstreamConfig | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const u = raw as Record<string, unknown>;
  const cfg = (typeof u.Config === 'object' && u.Config !== null ? u.Config : {}) as Record<string, unknown>;
  const name = str(u.DestinationName);
  if (!name || typeof u.LocalBindPort !== 'number') return null;
  return {
    destinationType: u.DestinationType === 'prepared_query' ? 'prepared_query' : 'service',
    destinationName: name,
    datacenter: str(u.Datacenter),
    localBindAddress: str(u.LocalBindAddress) || '127.0.0.1',
    localBindPort: u.LocalBindPort,
    connectTimeoutMs: num(cfg.connect_timeout_ms, 10_000),
  };
}

/** `-upstream name:port` (Consul's FlagUpstreams: `name:port` or `name:addr:port`; a `prepared_query.` prefix names a query). */
export function upstreamFlag(value: string): UpstreamConfig {
  const parts = value.split(':');
  if (parts.length < 2 || parts.length > 3) throw new Error(`Upstream config should be of the form name:addr, got ${JSON.stringify(value)}`);
  let name = parts[0]!;
  const port = Number(parts[parts.length - 1]);
  if (!name || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`Invalid upstream ${JSON.stringify(value)}: name:port expected`);
  let destinationType: UpstreamConfig['destinationType'] = 'service';
  if (name.startsWith('prepared_query.')) {
    destinationType = 'prepared_query';
    name = name.slice('prepared_query.'.length);
  }
  return {
    destinationType,
    destinationName: name,
    datacenter: '',
    localBindAddress: parts.length === 3 ? parts[1]! : '127.0.0.1',
    localBindPort: port,
    connectTimeoutMs: 10_000,
  };
}

/** From `/v1/agent/service/:id` of a connect-proxy registration (Consul 1.4.5's AgentConfigWatcher). */
export function configFromAgentService(svc: Record<string, any>): ProxyConfig {
  if (svc.Kind !== 'connect-proxy' || !svc.Proxy?.DestinationServiceName) throw new Error(`service with id ${svc.ID} is not a valid connect proxy`);
  const p = svc.Proxy as Record<string, any>;
  const config = (p.Config ?? {}) as Record<string, unknown>;
  return {
    service: p.DestinationServiceName,
    publicListener: publicListenerOf(str(svc.Address), svc.Port, `${p.LocalServiceAddress || '127.0.0.1'}:${p.LocalServicePort ?? 0}`, config),
    upstreams: ((p.Upstreams ?? []) as unknown[]).map(upstreamOf).filter((u): u is UpstreamConfig => u !== null),
    prometheusBindAddr: str(config.prometheus_bind_addr),
  };
}

/** From `/v1/agent/connect/proxy/:id`, a managed proxy's configuration (its Config and Upstreams live there). */
export function configFromManagedProxy(m: Record<string, any>): ProxyConfig {
  const config = (m.Config ?? {}) as Record<string, unknown>;
  return {
    service: m.TargetServiceName,
    publicListener: publicListenerOf(str(config.bind_address), num(config.bind_port, 0), str(config.local_service_address), config),
    upstreams: ((m.Upstreams ?? []) as unknown[]).map(upstreamOf).filter((u): u is UpstreamConfig => u !== null),
    prometheusBindAddr: str(config.prometheus_bind_addr),
  };
}
