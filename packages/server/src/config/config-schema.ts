// The JSON schema of one agent config file (JSON or HCL, snake_case keys, as Consul's). Every key
// the loader reads is declared here and nothing else is allowed, so a typo is an error naming the
// key instead of a silently ignored line; wrong types are errors too (`"enabled": "false"` used to
// turn ACLs on). Values needing more than a type (durations, enums, ranges) are still judged where
// they are applied (config.ts, dns/config.ts), with the file named in the message.
import type { SchemaNode } from '../schemas/canonical-keys';

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const strList = { type: 'array', items: str } as const;
const strMap = { type: 'object', additionalProperties: str } as const;
/** Go durations ("10s"); a few Consul keys also take nanoseconds as a number. */
const duration = { type: ['string', 'number'] } as const;

/** A closed object: only `properties` may appear. */
function section(properties: Record<string, SchemaNode>): SchemaNode {
  return { type: 'object', properties, additionalProperties: false };
}

/** Service and check definitions keep their own validation (local/config-definitions.ts: the HTTP API's schemas). */
const definition = { type: 'object' } as const;

export const configFileSchema: SchemaNode = section({
  dev: bool,
  server: bool,
  bootstrap_expect: int,
  non_voting_server: bool,
  node_name: str,
  node: str,
  node_id: str,
  node_meta: strMap,
  // Script and Docker checks (checks/script-gate.ts).
  enable_script_checks: bool,
  enable_local_script_checks: bool,
  datacenter: str,
  primary_datacenter: str,
  // Consul's deprecated name of primary_datacenter.
  acl_datacenter: str,
  data_dir: str,
  bind_addr: str,
  bind: str,
  advertise_addr: str,
  advertise: str,
  client_addr: str,
  client: str,
  // `addresses.http`: an address for the HTTP API only, or `unix:///path` for a unix socket.
  addresses: section({ http: str, https: str, dns: str }),
  http_port: int,
  server_port: int,
  ports: section({
    http: int,
    https: int,
    server: int,
    dns: int,
    proxy_min_port: int,
    proxy_max_port: int,
    sidecar_min_port: int,
    sidecar_max_port: int,
  }),
  domain: str,
  dns_config: section({
    node_ttl: duration,
    service_ttl: { type: 'object', additionalProperties: duration },
    allow_stale: bool,
    max_stale: duration,
    only_passing: bool,
    udp_answer_limit: int,
    enable_truncate: bool,
    soa: section({ refresh: int, retry: int, expire: int, min_ttl: int }),
  }),
  retry_join: strList,
  log_level: str,
  // The web UI (docs/ui.md).
  ui: bool,
  ui_dir: str,
  log_json: bool,
  translate_wan_addrs: bool,
  connect: section({
    enabled: bool,
    csr_max_per_second: num,
    csr_max_concurrent: num,
    ca_provider: str,
    // Provider settings are a free map in Consul (`private_key`, `root_cert`, `leaf_cert_ttl`, …).
    ca_config: { type: 'object' },
    proxy: section({ allow_managed_api_registration: bool, allow_managed_root: bool }),
    proxy_defaults: { type: 'object' },
  }),
  acl_token: str,
  // Consul 1.4 still reads these pre-1.4 token keys (config/legacy-acl-tokens.ts).
  acl_agent_token: str,
  acl_agent_master_token: str,
  acl_replication_token: str,
  acl_ttl: duration,
  acl: section({
    enabled: bool,
    default_policy: str,
    down_policy: str,
    token_ttl: duration,
    policy_ttl: duration,
    enable_token_persistence: bool,
    enable_token_replication: bool,
    tokens: section({ initial_management: str, master: str, agent: str, agent_master: str, default: str, replication: str }),
  }),
  session_ttl_min: duration,
  // Client agents (config/client-config.ts).
  client_heartbeat_timeout: duration,
  anti_entropy_interval: duration,
  // Backups (config/snapshot-config.ts).
  snapshot_restore_max_bytes: int,
  check_update_interval: duration,
  check_interval_min: duration,
  check_deregister_min: duration,
  service: definition,
  services: { type: 'array', items: definition },
  check: definition,
  checks: { type: 'array', items: definition },
  // Watches (watches/watch-definition.ts judges each with Consul's reasons; only the nested handler
  // config is declared here, so HCL's blocks fold into one object like JSON's).
  watches: {
    type: 'array',
    items: { type: 'object', properties: { http_handler_config: { type: 'object', properties: { header: { type: 'object', additionalProperties: strList } } } } },
  },
  // How long a watch's script handler may run before it is killed (docs/watches.md); "0s": no limit.
  watch_handler_timeout: duration,
  http_config: section({
    headers_timeout: duration,
    request_timeout: duration,
    idle_timeout: duration,
    consul_compat: bool,
    response_headers: strMap,
  }),
  limits: section({
    http_max_conns: int,
    http_max_conns_per_client: int,
    // DNS (dns/config.ts)
    dns_max_conns: int,
    dns_max_conns_per_client: int,
    dns_tcp_idle_timeout: duration,
    dns_tcp_max_in_flight: int,
    dns_udp_max_pending: int,
    // The server port (raft/src/transport/inbound-limits.ts, docs/operations.md "Limits").
    rpc_handshake_timeout: duration,
    rpc_max_conns: int,
    rpc_max_conns_per_client: int,
    rpc_idle_timeout: duration,
  }),
  raft: section({ tick_ms: int, election_ticks: int, snapshot_threshold: int, snapshot_interval_ms: { type: 'integer', minimum: 0 }, trailing_logs: int, wal_segment_bytes: { type: 'integer', minimum: 4096 }, log_store: { type: 'string', enum: ['leveldb', 'wal'] } }),
  // TLS (issue 11, TLS section).
  cert_file: str,
  key_file: str,
  ca_file: str,
  ca_path: str,
  server_name: str,
  tls_min_version: str,
  verify_incoming: bool,
  verify_incoming_rpc: bool,
  verify_incoming_https: bool,
  verify_outgoing: bool,
  verify_server_hostname: bool,
  // Metrics (issue 11, Metrics section): Consul's telemetry stanza.
  telemetry: section({
    disable_hostname: bool,
    metrics_prefix: str,
    prometheus_retention_time: duration,
    filter_default: bool,
    prefix_filter: strList,
    statsd_address: str,
    statsite_address: str,
    dogstatsd_addr: str,
    dogstatsd_tags: strList,
  }),
});
