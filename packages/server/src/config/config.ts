// The agent's configuration: defaults, then config files in order, then flags (DECISIONS.md).
import { hostname } from 'node:os';
import { parseDurationMs as parseDuration } from '@registry/store';
import { applyClientsConfig, defaultClientsConfig, type ClientsConfig } from './client-config';
import { applySnapshotConfig, defaultSnapshotConfig, type SnapshotConfig } from './snapshot-config';
import { agentDefinitionsOf, type AgentDefinitions } from '../local/config-definitions';
import { watchesOf, type WatchDefinition } from '../watches/watch-definition';
import { scriptChecksRefusal } from '../checks/script-gate';
import { applyDnsConfig, defaultDnsConfig, DEFAULT_DNS_PORT, type DnsConfig } from '../dns/config';
import { applyTelemetryConfig, defaultTelemetryConfig, type TelemetryConfig } from '../metrics/config';
import { applyTlsConfig, defaultTlsConfig, validateTlsConfig, type TlsConfig } from './tls-config';
import { invalidLogLevel, pinoLevel } from '../runtime/logger';
import { ConfigError, readConfigSources, type ConfigSource } from './config-sources';
import { applyNodeIdentity } from './node-identity';
import { applyCaConfig, applyPortRange, DEFAULT_PROXY_PORTS, DEFAULT_SIDECAR_PORTS, portRangeProblem, type CaBootstrapConfig, type PortRange } from './connect-config';
import { applyLegacyAclTokens } from './legacy-acl-tokens';
import { applyAclCacheConfig, DEFAULT_TOKEN_TTL_MS, type DownPolicy } from './acl-cache-config';

export type DefaultPolicy = 'allow' | 'deny';

export interface AclConfig {
  enabled: boolean;
  defaultPolicy: DefaultPolicy;
  /** `acl.down_policy`: a client agent's answer when no server can resolve a token (config/acl-cache-config.ts). */
  downPolicy: DownPolicy;
  /** `acl.token_ttl` / `acl_ttl`: how long a client agent trusts a token it resolved through the servers. */
  tokenTtlMs: number;
  tokens: { initialManagement?: string; agent?: string; default?: string; agentMaster?: string; replication?: string };
  /** `acl.enable_token_persistence`: tokens set through /v1/agent/token survive a restart (acl/agent-tokens.ts). */
  enableTokenPersistence?: boolean;
  /** `acl.enable_token_replication`: a secondary datacenter's leader also replicates global tokens (acl/acl-replication.ts). */
  enableTokenReplication?: boolean;
}

export interface AgentConfig {
  dev: boolean;
  server: boolean;
  bootstrapExpect: number;
  /**
   * `-non-voter` / `non_voting_server` (issue #14): this server joins as a Raft learner — it receives
   * the log and serves reads but never votes, stands for election or counts toward a quorum, until
   * promoted (`registry operator raft promote`).
   */
  nonVoter: boolean;
  nodeName: string;
  /** `node_id`: this agent's node ID instead of the one generated and kept in the data dir (config/node-identity.ts). */
  nodeId?: string;
  /** `node_meta`: metadata on this agent's own catalog node. */
  nodeMeta: Record<string, string>;
  datacenter: string;
  /**
   * `primary_datacenter` (deprecated alias `acl_datacenter`): the datacenter authoritative for ACLs,
   * where policies and global tokens are written and from which the others replicate them
   * (docs/acl.md "Several datacenters"). Undefined: this agent's own datacenter.
   */
  primaryDatacenter?: string;
  /** Undefined only in dev mode: a temporary folder is used. */
  dataDir: string | undefined;
  /** Address the server RPC/Raft port listens on. */
  bind: string;
  /** Address other servers use to reach this one (defaults to bind, or loopback for 0.0.0.0). */
  advertise: string | undefined;
  /** Address the HTTP API listens on. */
  client: string;
  /** `addresses.http = "unix:///path"`: the HTTP API listens on this unix socket instead of client:httpPort. */
  httpUnixSocket?: string;
  httpPort: number;
  serverPort: number;
  /** DNS port, UDP and TCP (`ports.dns`, `-dns-port`; 8600; -1 disables; docs/dns.md). */
  dnsPort: number;
  /** Whether dnsPort was configured: the default port is skipped with a warning when taken, a configured one must bind. */
  dnsPortSet: boolean;
  /** The DNS interface (`domain`, `dns_config`). */
  dns: DnsConfig;
  retryJoin: string[];
  logLevel: string;
  logJson: boolean;
  acl: AclConfig;
  connect: {
    enabled: boolean;
    /** Leaf signings per second on the leader (Consul's csr_max_per_second); 0 = unlimited. */
    csrMaxPerSecond: number;
    /** Leaf signings in flight on the leader; 0 = unlimited. */
    csrMaxConcurrent: number;
    proxy: { allowManagedApiRegistration: boolean };
    /** `connect.ca_config`: the CA's settings (and cluster_id) when the cluster's CA is first made. */
    caConfig?: CaBootstrapConfig;
    /** `ports.proxy_min_port`..`proxy_max_port`: ports given to managed proxies. */
    proxyPorts?: PortRange;
    /** `ports.sidecar_min_port`..`sidecar_max_port`: ports given to sidecar services. */
    sidecarPorts?: PortRange;
  };
  translateWanAddrs: boolean;
  /**
   * Consul wire compatibility (`http_config.consul_compat`, flag `-consul-compat`; docs/clients.md):
   * X-Consul-Token is read, every X-Registry-* response header is also sent as X-Consul-*, intention
   * SourceType `consul` and node-meta `consul-network-segment` are accepted. Off by default.
   */
  consulCompat: boolean;
  /** Raft timing, in ms (tests may shorten them). */
  raft: { tickMs: number; electionTicks: number; snapshotThreshold: number; snapshotIntervalMs: number; trailingLogs: number; walSegmentBytes: number; logStore: 'leveldb' | 'wal' };
  /** Smallest session TTL in ms: 10 s, lowered only by the test knob `session_ttl_min` (with -dev). */
  sessionTtlMinMs: number;
  /** Services and checks defined in config files (`service`, `services`, `check`, `checks`). */
  definitions: AgentDefinitions;
  /** Watches from config files (`watches`, lists appended across files; docs/watches.md). */
  watches: WatchDefinition[];
  /** `watch_handler_timeout`: a watch's script handler is killed after this long; 0 = never (Consul's behaviour). */
  watchHandlerTimeoutMs: number;
  checks: {
    /** Output-only changes reach the catalog at most this often (`check_update_interval`, 5 min). */
    updateIntervalMs: number;
    /** Shortest HTTP/TCP interval: 1 s, lowered only by the test knob `check_interval_min` (with -dev). */
    intervalMinMs: number;
    /** Shortest DeregisterCriticalServiceAfter: 1 min, lowered only by the test knob `check_deregister_min` (with -dev). */
    deregisterMinMs: number;
    /** `enable_script_checks`: script and Docker checks may be registered, through the HTTP API too. */
    enableScriptChecks: boolean;
    /** `enable_local_script_checks`: the same from config files only; unset → enableScriptChecks (Consul). */
    enableLocalScriptChecks?: boolean;
  };
  /** Bounds on the HTTP port (docs/http.md "Bounded resources"). */
  http: HttpLimitsConfig;
  /** Bounds on the server port's accepted connections (`limits.rpc_*`, docs/operations.md "Limits"). */
  rpc: RpcLimitsConfig;
  /** Metrics (`telemetry`: disable_hostname, prometheus_retention_time; docs/operations.md, Monitoring). */
  telemetry: TelemetryConfig;
  /** HTTPS and TLS on the server port (config/tls-config.ts, docs/operations.md "TLS"). */
  tls: TlsConfig;
  /** The web UI at /ui/ (`ui`, `-ui`; docs/ui.md). Undefined until buildConfig: then on in -dev, off otherwise, as Consul. */
  ui?: boolean;
  /** `ui_dir`: serve this folder at /ui/ instead of the built-in UI (implies `ui`). */
  uiDir?: string;
  /** Client agents: the servers' heartbeat timeout; every agent's anti-entropy interval (config/client-config.ts). */
  clients: ClientsConfig;
  /** Backups: the largest archive a restore takes (config/snapshot-config.ts). */
  snapshot: SnapshotConfig;
}

export interface HttpLimitsConfig {
  /** Longest time to receive a request's headers, from the connection's first byte (`http_config.headers_timeout`); 0 = none. */
  headersTimeoutMs: number;
  /**
   * Longest time to receive a whole request, headers and body (`http_config.request_timeout`); 0 = none.
   * Only receiving is bounded: a blocking query waits after its request is read and is not cut by it.
   */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests (`http_config.idle_timeout`). */
  idleTimeoutMs: number;
  /** Open HTTP connections at most (`limits.http_max_conns`); undefined → derived from the soft RLIMIT_NOFILE. */
  maxConns: number | undefined;
  /** Open HTTP connections from one client address at most (`limits.http_max_conns_per_client`); undefined → half of maxConns, 0 → no per-client bound. */
  maxConnsPerClient: number | undefined;
}

export interface RpcLimitsConfig {
  /** Time from accept to the first valid frame, TLS handshake included (`limits.rpc_handshake_timeout`, Consul's key); 0 = none. */
  handshakeTimeoutMs: number;
  /** Connections open at once, members' links not counted (`limits.rpc_max_conns`); undefined → derived from the soft RLIMIT_NOFILE. */
  maxConns: number | undefined;
  /** The same from one source address (`limits.rpc_max_conns_per_client`, Consul's key and default); 0 = none. */
  maxConnsPerClient: number;
  /** A connection silent this long with no request in flight is closed (`limits.rpc_idle_timeout`); 0 = never. */
  idleTimeoutMs: number;
}

export function defaultConfig(): AgentConfig {
  return {
    dev: false,
    server: true,
    bootstrapExpect: 0,
    nonVoter: false,
    nodeName: hostname(),
    nodeMeta: {},
    datacenter: 'dc1',
    dataDir: undefined,
    bind: '127.0.0.1',
    advertise: undefined,
    client: '127.0.0.1',
    httpPort: 8500,
    serverPort: 8300,
    dnsPort: DEFAULT_DNS_PORT,
    dnsPortSet: false,
    dns: defaultDnsConfig(),
    telemetry: defaultTelemetryConfig(),
    retryJoin: [],
    logLevel: 'info',
    logJson: false,
    acl: { enabled: false, defaultPolicy: 'allow', downPolicy: 'extend-cache', tokenTtlMs: DEFAULT_TOKEN_TTL_MS, tokens: {} },
    connect: { enabled: true, csrMaxPerSecond: 50, csrMaxConcurrent: 16, proxy: { allowManagedApiRegistration: false } },
    translateWanAddrs: false,
    consulCompat: false,
    // snapshotIntervalMs: Consul's raft_snapshot_interval (30 s): snapshots at most every 30–60 s per
    // server, randomised, except when the log reaches its bound (issue #14, docs/raft.md).
    // logStore: where the Raft log lives — 'wal' (the default), the write-ahead log of preallocated
    // segments of walSegmentBytes each (docs/raft.md), or 'leveldb'. The WAL is what makes a write at
    // one client as fast as etcd's (docs/benchmarks/history.md, Latency).
    raft: { tickMs: 50, electionTicks: 10, snapshotThreshold: 8192, snapshotIntervalMs: 30_000, trailingLogs: 10240, walSegmentBytes: 1 << 20, logStore: 'wal' },
    sessionTtlMinMs: 10_000,
    definitions: { services: [], checks: [] },
    watches: [],
    watchHandlerTimeoutMs: 10 * 60_000,
    checks: { updateIntervalMs: 300_000, intervalMinMs: 1_000, deregisterMinMs: 60_000, enableScriptChecks: false },
    // 65 s idle: longer than the usual 60 s of load balancers, so they close first.
    http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 65_000, maxConns: undefined, maxConnsPerClient: undefined },
    rpc: { handshakeTimeoutMs: 5_000, maxConns: undefined, maxConnsPerClient: 100, idleTimeoutMs: 150_000 },
    tls: defaultTlsConfig(),
    clients: defaultClientsConfig(),
    snapshot: defaultSnapshotConfig(),
  };
}

/** Flags as the CLI parsed them (camelCase of the single-dash flags). */
export interface AgentFlags {
  dev?: boolean;
  server?: boolean;
  bootstrapExpect?: number;
  nonVoter?: boolean;
  node?: string;
  datacenter?: string;
  dataDir?: string;
  bind?: string;
  advertise?: string;
  client?: string;
  httpPort?: number;
  serverPort?: number;
  dnsPort?: number;
  retryJoin?: string[];
  configFile?: string[];
  configDir?: string[];
  /**
   * `-config-file` and `-config-dir` in the order given on the command line (Consul loads them in
   * that order); when absent, configFile then configDir.
   */
  configSources?: ConfigSource[];
  logLevel?: string;
  logJson?: boolean;
  consulCompat?: boolean;
  /** `-enable-script-checks`, `-enable-local-script-checks` (the config keys' flags, as Consul's). */
  enableScriptChecks?: boolean;
  enableLocalScriptChecks?: boolean;
  /** `-ui`: serve the web UI at /ui/. */
  ui?: boolean;
}

type Json = Record<string, any>;

/** Apply one JSON config file's keys (snake_case, as the flags) onto `cfg`. */
export function applyConfigFile(cfg: AgentConfig, file: Json, source = 'config'): AgentConfig {
  const out: AgentConfig = structuredClone(cfg);
  const str = (k: string) => {
    if (file[k] === undefined) return undefined;
    if (typeof file[k] !== 'string') throw new Error(`${source}: ${k} must be a string`);
    return file[k] as string;
  };
  const flag = (v: unknown, k: string): boolean => {
    if (typeof v !== 'boolean') throw new Error(`${source}: ${k} must be true or false`);
    return v;
  };
  const num = (k: string) => {
    if (file[k] === undefined) return undefined;
    if (typeof file[k] !== 'number' || !Number.isInteger(file[k])) throw new Error(`${source}: ${k} must be an integer`);
    return file[k] as number;
  };
  if (file.dev !== undefined) out.dev = flag(file.dev, 'dev');
  if (file.server !== undefined) out.server = flag(file.server, 'server');
  out.bootstrapExpect = num('bootstrap_expect') ?? out.bootstrapExpect;
  if (file.non_voting_server !== undefined) out.nonVoter = flag(file.non_voting_server, 'non_voting_server');
  out.nodeName = str('node_name') ?? str('node') ?? out.nodeName;
  out.datacenter = str('datacenter') ?? out.datacenter;
  out.primaryDatacenter = str('primary_datacenter') ?? str('acl_datacenter') ?? out.primaryDatacenter;
  out.nodeMeta ??= {};
  applyNodeIdentity(out, file, source);
  out.dataDir = str('data_dir') ?? out.dataDir;
  out.bind = str('bind_addr') ?? str('bind') ?? out.bind;
  out.advertise = str('advertise_addr') ?? str('advertise') ?? out.advertise;
  out.client = str('client_addr') ?? str('client') ?? out.client;
  const httpAddress = (file.addresses as Json | undefined)?.http;
  if (typeof httpAddress === 'string' && httpAddress !== '') {
    // Consul's addresses.http: an IP for the HTTP API alone, or unix:///path for a unix socket.
    if (httpAddress.startsWith('unix://')) {
      const path = httpAddress.slice('unix://'.length);
      if (!path.startsWith('/')) throw new Error(`${source}: addresses.http must be unix:///absolute/path or an address`);
      out.httpUnixSocket = path;
    } else {
      out.httpUnixSocket = undefined;
      out.client = httpAddress;
    }
  }
  const ports = (file.ports ?? {}) as Json;
  out.httpPort = num('http_port') ?? (typeof ports.http === 'number' ? ports.http : out.httpPort);
  out.serverPort = num('server_port') ?? (typeof ports.server === 'number' ? ports.server : out.serverPort);
  out.connect.proxyPorts = applyPortRange(out.connect.proxyPorts ?? DEFAULT_PROXY_PORTS, ports, 'proxy', source);
  out.connect.sidecarPorts = applyPortRange(out.connect.sidecarPorts ?? DEFAULT_SIDECAR_PORTS, ports, 'sidecar', source);
  if (ports.dns !== undefined) {
    if (typeof ports.dns !== 'number' || !Number.isInteger(ports.dns)) throw new Error(`${source}: ports.dns must be an integer`);
    out.dnsPort = ports.dns;
    out.dnsPortSet = true;
  }
  out.dns = applyDnsConfig(out.dns, file, source);
  out.telemetry = applyTelemetryConfig(out.telemetry, file, source);
  if (file.retry_join !== undefined) {
    if (!Array.isArray(file.retry_join)) throw new Error(`${source}: retry_join must be an array`);
    // Lists append across files, as Consul merges them.
    out.retryJoin = [...new Set([...out.retryJoin, ...file.retry_join.map(String)])];
  }
  out.logLevel = str('log_level') ?? out.logLevel;
  if (file.ui !== undefined) out.ui = flag(file.ui, 'ui');
  out.uiDir = str('ui_dir') ?? out.uiDir;
  if (file.log_json !== undefined) out.logJson = flag(file.log_json, 'log_json');
  if (file.translate_wan_addrs !== undefined) out.translateWanAddrs = flag(file.translate_wan_addrs, 'translate_wan_addrs');
  if (file.connect && typeof file.connect === 'object' && file.connect.enabled !== undefined) {
    out.connect.enabled = flag(file.connect.enabled, 'connect.enabled');
  }
  if (file.connect && typeof file.connect === 'object') {
    const c = file.connect as Json;
    const ca = (c.ca_config ?? {}) as Json;
    for (const [key, field] of [['csr_max_per_second', 'csrMaxPerSecond'], ['csr_max_concurrent', 'csrMaxConcurrent']] as const) {
      const v = c[key] ?? ca[key];
      if (v === undefined) continue;
      if (typeof v !== 'number' || v < 0) throw new Error(`${source}: connect.${key} must be a number ≥ 0`);
      out.connect[field] = v;
    }
    out.connect.caConfig = applyCaConfig(out.connect.caConfig ?? {}, c.ca_config, source);
    if (c.proxy?.allow_managed_api_registration !== undefined) out.connect.proxy.allowManagedApiRegistration = flag(c.proxy.allow_managed_api_registration, 'connect.proxy.allow_managed_api_registration');
  }
  applyLegacyAclTokens(out.acl.tokens, file, source);
  applyAclCacheConfig(out.acl, file, source);
  const acl = file.acl as Json | undefined;
  if (acl) {
    if (acl.enabled !== undefined) out.acl.enabled = flag(acl.enabled, 'acl.enabled');
    if (acl.default_policy !== undefined) {
      if (acl.default_policy !== 'allow' && acl.default_policy !== 'deny') {
        throw new Error(`${source}: acl.default_policy must be "allow" or "deny"`);
      }
      out.acl.defaultPolicy = acl.default_policy;
    }
    const t = (acl.tokens ?? {}) as Json;
    const management = t.initial_management ?? t.master;
    if (management !== undefined) out.acl.tokens.initialManagement = String(management);
    if (t.agent !== undefined) out.acl.tokens.agent = String(t.agent);
    if (t.default !== undefined) out.acl.tokens.default = String(t.default);
    if (t.agent_master !== undefined) out.acl.tokens.agentMaster = String(t.agent_master);
    if (t.replication !== undefined) out.acl.tokens.replication = String(t.replication);
    if (acl.enable_token_persistence !== undefined) out.acl.enableTokenPersistence = flag(acl.enable_token_persistence, 'acl.enable_token_persistence');
    if (acl.enable_token_replication !== undefined) out.acl.enableTokenReplication = flag(acl.enable_token_replication, 'acl.enable_token_replication');
  }
  if (file.session_ttl_min !== undefined) {
    const ms = typeof file.session_ttl_min === 'string' ? parseDuration(file.session_ttl_min) : undefined;
    if (ms === undefined || ms <= 0) throw new Error(`${source}: session_ttl_min must be a positive duration such as "1s"`);
    out.sessionTtlMinMs = ms;
  }
  for (const [key, field, min] of [
    ['check_update_interval', 'updateIntervalMs', 0],
    ['check_interval_min', 'intervalMinMs', 1],
    ['check_deregister_min', 'deregisterMinMs', 1],
  ] as const) {
    if (file[key] === undefined) continue;
    const ms = typeof file[key] === 'string' ? parseDuration(file[key]) : undefined;
    if (ms === undefined || ms < min) throw new Error(`${source}: ${key} must be a duration such as "1s"`);
    out.checks[field] = ms;
  }
  if (file.enable_script_checks !== undefined) out.checks.enableScriptChecks = flag(file.enable_script_checks, 'enable_script_checks');
  if (file.enable_local_script_checks !== undefined) out.checks.enableLocalScriptChecks = flag(file.enable_local_script_checks, 'enable_local_script_checks');
  const defs = agentDefinitionsOf(file, source);
  out.definitions = { services: [...out.definitions.services, ...defs.services], checks: [...out.definitions.checks, ...defs.checks] };
  out.watches = [...(out.watches ?? []), ...watchesOf(file, source)];
  if (file.watch_handler_timeout !== undefined) {
    const ms = typeof file.watch_handler_timeout === 'string' ? parseDuration(file.watch_handler_timeout) : undefined;
    if (ms === undefined || ms < 0) throw new Error(`${source}: watch_handler_timeout must be a duration such as "10m" ("0s" for none)`);
    out.watchHandlerTimeoutMs = Math.round(ms);
  }
  applyHttpLimits(out.http, file, source);
  applyRpcLimits(out.rpc, file, source);
  applyClientsConfig(out.clients, file, source);
  applySnapshotConfig(out.snapshot, file, source);
  out.tls = applyTlsConfig(out.tls, file, source);
  const consulCompat = (file.http_config as Json | undefined)?.consul_compat;
  if (consulCompat !== undefined) {
    if (typeof consulCompat !== 'boolean') throw new Error(`${source}: http_config.consul_compat must be true or false`);
    out.consulCompat = consulCompat;
  }
  const raft = file.raft as Json | undefined;
  if (raft) {
    for (const [k, key] of [
      ['tick_ms', 'tickMs'],
      ['election_ticks', 'electionTicks'],
      ['snapshot_threshold', 'snapshotThreshold'],
      ['snapshot_interval_ms', 'snapshotIntervalMs'],
      ['trailing_logs', 'trailingLogs'],
      ['wal_segment_bytes', 'walSegmentBytes'],
    ] as const) {
      if (typeof raft[k] === 'number') out.raft[key] = raft[k];
    }
    if (raft.log_store === 'leveldb' || raft.log_store === 'wal') out.raft.logStore = raft.log_store;
  }
  return out;
}

/** `http_config.{headers,request,idle}_timeout` (Go durations) and `limits.http_max_conns{,_per_client}`. */
function applyHttpLimits(out: HttpLimitsConfig, file: Json, source: string): void {
  const section = (name: string): Json => {
    const v = file[name];
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${source}: ${name} must be an object`);
    return v as Json;
  };
  const httpConfig = section('http_config');
  for (const [key, field] of [
    ['headers_timeout', 'headersTimeoutMs'],
    ['request_timeout', 'requestTimeoutMs'],
    ['idle_timeout', 'idleTimeoutMs'],
  ] as const) {
    const v = httpConfig[key];
    if (v === undefined) continue;
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined || ms < 0) throw new Error(`${source}: http_config.${key} must be a duration such as "30s" ("0s" for none)`);
    out[field] = Math.round(ms);
  }
  const limits = section('limits');
  for (const [key, field, min] of [
    ['http_max_conns', 'maxConns', 1],
    ['http_max_conns_per_client', 'maxConnsPerClient', 0],
  ] as const) {
    const v = limits[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw new Error(`${source}: limits.${key} must be an integer ≥ ${min}`);
    out[field] = v;
  }
}

/** `limits.rpc_*`: the server port's bounds (raft/src/transport/inbound-limits.ts). */
function applyRpcLimits(out: RpcLimitsConfig, file: Json, source: string): void {
  const limits = file.limits;
  if (limits === undefined || limits === null || typeof limits !== 'object' || Array.isArray(limits)) return; // applyHttpLimits reported a bad section
  const l = limits as Json;
  for (const [key, field] of [
    ['rpc_handshake_timeout', 'handshakeTimeoutMs'],
    ['rpc_idle_timeout', 'idleTimeoutMs'],
  ] as const) {
    const v = l[key];
    if (v === undefined) continue;
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined || ms < 0) throw new Error(`${source}: limits.${key} must be a duration such as "5s" ("0s" for none)`);
    out[field] = Math.round(ms);
  }
  if (l.rpc_max_conns !== undefined) {
    const v = l.rpc_max_conns;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new Error(`${source}: limits.rpc_max_conns must be an integer ≥ 1`);
    out.maxConns = v;
  }
  if (l.rpc_max_conns_per_client !== undefined) {
    const v = l.rpc_max_conns_per_client;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`${source}: limits.rpc_max_conns_per_client must be an integer ≥ 0`);
    out.maxConnsPerClient = v;
  }
}

/** The config files the flags name, in load order. */
export function configSourcesOf(flags: AgentFlags): ConfigSource[] {
  return (
    flags.configSources ?? [
      ...(flags.configFile ?? []).map((path): ConfigSource => ({ kind: 'file', path })),
      ...(flags.configDir ?? []).map((path): ConfigSource => ({ kind: 'dir', path })),
    ]
  );
}

/**
 * Defaults → config files (in order) → flags: the agent's effective configuration. Throws a
 * ConfigError listing every problem found (each naming its file).
 */
export function buildConfig(flags: AgentFlags): AgentConfig {
  const { files, errors } = readConfigSources(configSourcesOf(flags));
  // Without -server (flag, config file or -dev) an agent is a client, as in Consul.
  let cfg: AgentConfig = { ...defaultConfig(), server: false };
  for (const { path, content } of files) {
    try {
      cfg = applyConfigFile(cfg, content, path);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (errors.length > 0) throw new ConfigError(errors);
  if (flags.dev) {
    cfg.dev = true;
    cfg.server = true;
    if (!flags.bootstrapExpect) cfg.bootstrapExpect = 1;
  }
  if (flags.server !== undefined) cfg.server = flags.server;
  if (flags.bootstrapExpect !== undefined) cfg.bootstrapExpect = flags.bootstrapExpect;
  if (flags.nonVoter) cfg.nonVoter = true;
  if (flags.node) cfg.nodeName = flags.node;
  if (flags.datacenter) cfg.datacenter = flags.datacenter;
  if (flags.dataDir) cfg.dataDir = flags.dataDir;
  if (flags.bind) cfg.bind = flags.bind;
  if (flags.advertise) cfg.advertise = flags.advertise;
  if (flags.client) cfg.client = flags.client;
  if (flags.httpPort !== undefined) cfg.httpPort = flags.httpPort;
  if (flags.serverPort !== undefined) cfg.serverPort = flags.serverPort;
  if (flags.dnsPort !== undefined) {
    cfg.dnsPort = flags.dnsPort;
    cfg.dnsPortSet = true;
  }
  if (flags.retryJoin && flags.retryJoin.length > 0) cfg.retryJoin = [...new Set([...cfg.retryJoin, ...flags.retryJoin])];
  if (flags.logLevel) cfg.logLevel = flags.logLevel;
  if (flags.logJson) cfg.logJson = true;
  if (flags.consulCompat) cfg.consulCompat = true;
  if (flags.enableScriptChecks) cfg.checks.enableScriptChecks = true;
  if (flags.enableLocalScriptChecks) cfg.checks.enableLocalScriptChecks = true;
  if (flags.ui) cfg.ui = true;
  // Consul's -dev turns the UI on unless a config file said otherwise; ui_dir implies it.
  cfg.ui = cfg.ui ?? (cfg.dev || cfg.uiDir !== undefined);
  try {
    validateConfig(cfg);
  } catch (err) {
    throw err instanceof ConfigError ? err : new ConfigError([(err as Error).message]);
  }
  return cfg;
}

/** Config-file script and Docker checks need enable_(local_)script_checks: Consul does not start without. */
function scriptChecksAllowed(cfg: AgentConfig): void {
  const settings = { remote: cfg.checks.enableScriptChecks, local: cfg.checks.enableLocalScriptChecks ?? cfg.checks.enableScriptChecks };
  for (const s of cfg.definitions.services) {
    const sidecar = s.Connect?.SidecarService;
    const refusal = scriptChecksRefusal([s.Check, ...(s.Checks ?? []), sidecar?.Check, ...(sidecar?.Checks ?? [])].filter((c) => c != null), 'local', settings);
    if (refusal) throw new Error(`Failed to register service ${JSON.stringify(s.Name ?? '')}: ${refusal}`);
  }
  for (const c of cfg.definitions.checks) {
    const refusal = scriptChecksRefusal([c], 'local', settings);
    if (refusal) throw new Error(`Failed to register check ${JSON.stringify(c.Name ?? '')}: ${refusal}`);
  }
}

export function validateConfig(cfg: AgentConfig): void {
  if (!cfg.dev && !cfg.dataDir) throw new Error('-data-dir is required unless -dev is given');
  if (!pinoLevel(cfg.logLevel)) throw new Error(invalidLogLevel(cfg.logLevel));
  if (!cfg.server && cfg.bootstrapExpect > 0) throw new Error('-bootstrap-expect is for servers: pass -server');
  if (!/^[a-zA-Z0-9_-]+$/.test(cfg.datacenter)) throw new Error(`invalid datacenter name "${cfg.datacenter}"`);
  if (cfg.primaryDatacenter !== undefined && !/^[a-zA-Z0-9_-]+$/.test(cfg.primaryDatacenter)) {
    throw new Error(`invalid primary_datacenter name "${cfg.primaryDatacenter}"`);
  }
  if (!cfg.nodeName) throw new Error('node name must not be empty');
  for (const [name, port] of [['http-port', cfg.httpPort], ['server-port', cfg.serverPort]] as const) {
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid -${name} ${port}`);
  }
  if (!Number.isInteger(cfg.dnsPort) || cfg.dnsPort < -1 || cfg.dnsPort > 65535) throw new Error(`invalid -dns-port ${cfg.dnsPort} (-1 disables DNS)`);
  if (cfg.bootstrapExpect < 0) throw new Error('-bootstrap-expect must be ≥ 0');
  if (cfg.nonVoter && !cfg.server) throw new Error('-non-voter is for servers: pass -server');
  if (cfg.nonVoter && (cfg.bootstrapExpect > 0 || cfg.dev)) throw new Error('a -non-voter server cannot bootstrap a cluster: drop -bootstrap-expect (and -dev) and give -retry-join');
  if (cfg.nonVoter && cfg.retryJoin.length === 0) throw new Error('a -non-voter server needs -retry-join <server host:port> to join the voters');
  if (cfg.sessionTtlMinMs !== 10_000 && !cfg.dev) throw new Error('session_ttl_min is a test knob: it is accepted only with -dev');
  const floors = defaultConfig().checks;
  if (!cfg.dev && (cfg.checks.intervalMinMs !== floors.intervalMinMs || cfg.checks.deregisterMinMs !== floors.deregisterMinMs)) {
    throw new Error('check_interval_min and check_deregister_min are test knobs: they are accepted only with -dev');
  }
  validateTlsConfig(cfg.tls);
  for (const [range, prefix] of [[cfg.connect.proxyPorts, 'proxy'], [cfg.connect.sidecarPorts, 'sidecar']] as const) {
    const problem = range && portRangeProblem(range, prefix);
    if (problem) throw new Error(problem);
  }
  scriptChecksAllowed(cfg);
  const h = cfg.http;
  if (h.requestTimeoutMs > 0 && h.headersTimeoutMs > h.requestTimeoutMs) {
    throw new Error('http_config.headers_timeout must not exceed http_config.request_timeout (the headers are part of the request)');
  }
}
