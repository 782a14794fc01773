// `DebugConfig` of GET /v1/agent/self: the resolved configuration under Consul's RuntimeConfig
// names, with secrets replaced by "hidden" as Consul's Sanitized() does — any non-empty string
// whose field name contains "token", "key" or "secret" (case-insensitive), at any depth.
import { formatDurationMs } from '@registry/store';
import type { AgentConfig } from '../config/config';

const HIDDEN = 'hidden';

/**
 * `advertise`: the host this agent advertises as resolved at start (agent/advertise-address.ts);
 * `lanPort`: the port of its member record (`/v1/agent/members` Port: a server's server port, a
 * client agent's HTTP port), Consul's Serf LAN port.
 */
export function debugConfig(c: AgentConfig, nodeId: string, advertise: string | undefined, lanPort: number): Record<string, unknown> {
  const tokens = c.acl.tokens;
  const raw: Record<string, unknown> = {
    ACLAgentMasterToken: tokens.agentMaster ?? '',
    ACLAgentToken: tokens.agent ?? '',
    ACLDatacenter: c.datacenter,
    ACLDefaultPolicy: c.acl.defaultPolicy,
    ACLDownPolicy: c.acl.downPolicy,
    ACLEnableTokenPersistence: c.acl.enableTokenPersistence ?? false,
    ACLMasterToken: tokens.initialManagement ?? '',
    ACLReplicationToken: tokens.replication ?? '',
    ACLToken: tokens.default ?? '',
    ACLTokenTTL: formatDurationMs(c.acl.tokenTtlMs),
    ACLsEnabled: c.acl.enabled,
    AdvertiseAddrLAN: advertise ?? c.advertise ?? c.bind,
    BindAddr: c.bind,
    Bootstrap: c.bootstrapExpect === 1,
    BootstrapExpect: c.bootstrapExpect,
    CheckUpdateInterval: formatDurationMs(c.checks.updateIntervalMs),
    ClientAddrs: [c.client],
    ConnectEnabled: c.connect.enabled,
    ConnectProxyAllowManagedAPIRegistration: c.connect.proxy.allowManagedApiRegistration,
    DNSDomain: `${c.dns.domain}.`,
    DNSPort: c.dnsPort,
    DataDir: c.dataDir ?? '',
    Datacenter: c.datacenter,
    DevMode: c.dev,
    HTTPPort: c.httpPort,
    HTTPConsulCompat: c.consulCompat,
    LogLevel: c.logLevel.toUpperCase(),
    NodeID: nodeId,
    NodeMeta: { ...c.nodeMeta },
    NodeName: c.nodeName,
    ConnectProxyBindMinPort: c.connect.proxyPorts?.min ?? 20000,
    ConnectProxyBindMaxPort: c.connect.proxyPorts?.max ?? 20255,
    ConnectSidecarMinPort: c.connect.sidecarPorts?.min ?? 21000,
    ConnectSidecarMaxPort: c.connect.sidecarPorts?.max ?? 21255,
    RetryJoinLAN: [...c.retryJoin],
    ServerMode: c.server,
    ServerPort: c.serverPort,
    // Consul prints its LAN Serf addresses as Go's net.Addr ("tcp://host:port"); Go's API tests
    // join the agent by the advertised one.
    SerfAdvertiseAddrLAN: `tcp://${hostPort(advertise ?? c.advertise ?? c.bind, lanPort)}`,
    SerfBindAddrLAN: `tcp://${hostPort(c.bind, lanPort)}`,
    SessionTTLMin: formatDurationMs(c.sessionTtlMinMs),
    TranslateWANAddrs: c.translateWanAddrs,
    Services: c.definitions.services,
    Checks: c.definitions.checks,
  };
  return sanitized(raw) as Record<string, unknown>;
}

/** `host:port`, an IPv6 host in brackets. */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A deep copy with every secret-named non-empty string hidden. */
export function sanitized(value: unknown, name = ''): unknown {
  if (typeof value === 'string') return value !== '' && isSecret(name) ? HIDDEN : value;
  if (Array.isArray(value)) return value.map((v) => sanitized(v, name));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = sanitized(v, k);
    return out;
  }
  return value;
}

function isSecret(name: string): boolean {
  const n = name.toLowerCase();
  return n.includes('key') || n.includes('token') || n.includes('secret');
}
