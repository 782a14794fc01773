// The agent's metrics: one prom-client Registry per agent and the series registry exposes, with
// small typed hooks for the parts that measure (raft observer, RPC observer, FSM, HTTP, ACL).
// Hooks on hot paths (HTTP requests, Raft commits, FSM applies) use label sets bound once, so a
// call does a map lookup at most and allocates no label object. Gauges are read at scrape time.
// Names: `registry_…` (seconds, `_total` counters) for Prometheus; Consul-like dotted names
// (milliseconds) in the JSON form — docs/operations.md "Monitoring" lists them.
import { collectDefaultMetrics, Registry } from './prom-client-parts';
import type { RaftNode, RaftObserver } from '@registry/raft';
import type { Store } from '@registry/store';
import type { OpenQueries } from '../rpc/blocking';
import type { ForwardKind, RpcObserver } from '../rpc/observer';
import type { DnsObserver, TcpRefusal, TcpTimeout } from '../dns/observer';
import type { TelemetryConfig } from './config';
import { consulSummary, type MetricsSummary } from './consul-json';
import { IntervalClock } from './interval-aggregate';
import { EventLoopDelay } from './runtime';
import type { ListenerCounts, ListenerKind, ProxyMetricsSink } from './proxy-counts';
import { CounterSeries, one, scrapeGauge, TimerSeries, type CounterCell, type JsonCatalog, type SeriesContext, type Timer } from './series';

/** What the metrics read at scrape time. */
export interface MetricsSources {
  raft: RaftNode;
  store: Store;
  blocking: OpenQueries;
  /** Leader: each server's wall clock minus this one's (cluster/clock-offsets.ts). */
  clockOffsets?: () => ReadonlyArray<{ node: string; address: string; ms: number }>;
}

/** The timer of one HTTP route: `done` once per request with its final status. */
export interface RouteTimer {
  done(status: number, ms: number): void;
}

/** A Connect proxy's counters (proxy/connection-stats.ts), by listener kind, with Consul 1.4's labels. */
const PROXY_LABELS: Record<ListenerKind, string[]> = { inbound: ['dst'], upstream: ['src', 'dst_type', 'dst'] };
const PROXY_COUNTERS = [
  ['accepted', 'accepted', 'connections accepted and joined to their other side'],
  ['refused', 'refused', 'connections refused by an intention (or whose authorization failed)'],
  ['errors', 'errors', 'connections that failed: TLS handshake, dial, local connect'],
  ['rx_bytes', 'rx_bytes', "bytes read from the listener's clients"],
  ['tx_bytes', 'tx_bytes', "bytes written to the listener's clients"],
] as const;
type ProxyCounter = (typeof PROXY_COUNTERS)[number][0];

export class Metrics implements ProxyMetricsSink {
  readonly registry = new Registry();
  private readonly clock = new IntervalClock();
  private readonly json: JsonCatalog = { samples: [], counters: [], gauges: [] };
  private readonly ctx: SeriesContext = { registry: this.registry, clock: this.clock, json: this.json };
  private readonly loopDelay = new EventLoopDelay();
  private lastSnapshotBytes = 0;

  // Raft
  private readonly commitTime = new TimerSeries(this.ctx, 'registry.raft.commitTime', { name: 'registry_raft_commit_time_seconds', help: 'Leader: time from a batch of proposals being handed to Raft until it is committed' }).bind();
  private readonly fsmBatch = new TimerSeries(this.ctx, 'registry.raft.fsm.apply', { name: 'registry_raft_apply_time_seconds', help: 'Time to apply a batch of committed entries to the state machine' }).bind();
  private readonly applied = new CounterSeries(this.ctx, 'registry.raft.apply', { name: 'registry_raft_apply_total', help: 'Raft log entries applied to the state machine' }).bind();
  private readonly committedEntries = new CounterSeries(this.ctx, 'registry.raft.commits', { name: 'registry_raft_commits_total', help: 'Leader: proposals committed' }).bind();
  private readonly snapshotTime = new TimerSeries(this.ctx, 'registry.raft.snapshot.persist', { name: 'registry_raft_snapshot_duration_seconds', help: 'Time to take a snapshot and write it to disk' }).bind();
  private readonly leaderChanges = new CounterSeries(this.ctx, 'registry.raft.leader.changes', { name: 'registry_raft_leader_changes_total', help: 'Times this server learnt of a new leader' }).bind();
  private readonly becameLeader = new CounterSeries(this.ctx, 'registry.raft.state.leader', { name: 'registry_raft_state_leader_total', help: 'Times this server became the leader' }).bind();
  private readonly becameCandidate = new CounterSeries(this.ctx, 'registry.raft.state.candidate', { name: 'registry_raft_state_candidate_total', help: 'Times this server started an election' }).bind();

  // FSM, one timer per command type (bound on first use; the set of types is small and fixed).
  private readonly fsmSeries = new TimerSeries(this.ctx, 'registry.fsm.apply', { name: 'registry_fsm_apply_seconds', help: 'Time the state machine took to apply one command, by command type', labelNames: ['type'] });
  private readonly fsmTimers = new Map<string, Timer>();

  // RPC
  private readonly forwardedSeries = new CounterSeries(this.ctx, 'registry.rpc.forwarded', { name: 'registry_rpc_forwarded_total', help: 'Requests sent to the leader, by kind (write, read, leader-call, commit-index)', labelNames: ['kind'] });
  private readonly forwardErrorSeries = new CounterSeries(this.ctx, 'registry.rpc.forward_errors', { name: 'registry_rpc_forward_errors_total', help: 'Requests sent to the leader that got no answer, by kind', labelNames: ['kind'] });
  private readonly forwarded: Record<ForwardKind, CounterCell>;
  private readonly forwardErrors: Record<ForwardKind, CounterCell>;

  // HTTP
  private readonly httpSeries = new TimerSeries(this.ctx, 'registry.http.request', { name: 'registry_http_request_duration_seconds', help: 'HTTP request latency by method, route pattern and status code', labelNames: ['method', 'route', 'code'] });

  // ACL
  private readonly aclResolve = new TimerSeries(this.ctx, 'registry.acl.ResolveToken', { name: 'registry_acl_resolve_token_seconds', help: 'Time to resolve a token to its authorizer' }).bind();
  private readonly aclHits = new CounterSeries(this.ctx, 'registry.acl.token.cache_hit', { name: 'registry_acl_token_cache_hits_total', help: 'Token resolutions answered from the cache' }).bind();
  private readonly aclMisses = new CounterSeries(this.ctx, 'registry.acl.token.cache_miss', { name: 'registry_acl_token_cache_misses_total', help: 'Token resolutions that had to read and compile the token' }).bind();

  // Server port (limits.rpc_*, raft/src/transport/inbound-limits.ts; Raft messages from non-members)
  private readonly serverPortRefusedSeries = new CounterSeries(this.ctx, 'registry.rpc.refused', { name: 'registry_rpc_refused_total', help: 'Server port: connections closed or refused by its limits, frames and Raft messages refused, by reason', labelNames: ['reason'] });

  // CA
  private readonly leafSigned = new CounterSeries(this.ctx, 'registry.ca.leaf.signed', { name: 'registry_ca_leaf_signed_total', help: 'Leader: leaf certificates signed' }).bind();

  // DNS: refusals and shed queries (docs/operations.md "DNS limits")
  private readonly dnsRefusedSeries = new CounterSeries(this.ctx, 'registry.dns.tcp.refused', { name: 'registry_dns_tcp_refused_total', help: 'DNS TCP connections closed at once: limits.dns_max_conns (max_conns) or limits.dns_max_conns_per_client (max_conns_per_client) reached', labelNames: ['reason'] });
  private readonly dnsTimeoutSeries = new CounterSeries(this.ctx, 'registry.dns.tcp.timeouts', { name: 'registry_dns_tcp_timeouts_total', help: 'DNS TCP connections closed for sending no whole query in time (first_query) or being idle (idle)', labelNames: ['reason'] });
  private readonly dnsShed = new CounterSeries(this.ctx, 'registry.dns.udp.shed', { name: 'registry_dns_udp_shed_total', help: 'DNS UDP queries dropped unanswered because limits.dns_udp_max_pending queries were being answered' }).bind();

  // HTTP connections refused at accept (docs/operations.md "Limits").
  private readonly httpRefusedSeries = new CounterSeries(this.ctx, 'registry.http.refused', { name: 'registry_http_refused_total', help: 'HTTP connections refused at accept: limits.http_max_conns (max_conns, 503) or limits.http_max_conns_per_client (max_conns_per_client, 429)', labelNames: ['reason'] });
  // Background runners (runtime/runner-failures.ts): a failure each, by kind of runner.
  private readonly runnerFailureSeries = new CounterSeries(this.ctx, 'registry.runner.failures', { name: 'registry_runner_failures_total', help: 'Failures of background runners (check, managed-proxy, watch, session-ttl, catalog-sync, anti-entropy, timer, restore) and of unawaited promises or uncaught exceptions, by runner', labelNames: ['runner'] });

  // Connect proxies the agent runs (reported over IPC: connect/managed-proxies.ts), or the proxy's
  // own endpoint (proxy/metrics-server.ts). Consul's names: <prefix>.inbound.* {dst}, .upstream.* {src, dst_type, dst}.
  private readonly proxySeries = Object.fromEntries(
    (['inbound', 'upstream'] as const).map((kind) => [
      kind,
      Object.fromEntries(
        PROXY_COUNTERS.filter(([field]) => kind === 'inbound' || field !== 'refused').map(([field, name, help]) => [
          field,
          new CounterSeries(this.ctx, `registry.proxy.${kind}.${name}`, { name: `registry_proxy_${kind}_${name}_total`, help: `Connect proxies, ${kind === 'inbound' ? 'public (mTLS) listener' : 'upstream listeners'}: ${help}`, labelNames: PROXY_LABELS[kind] }),
        ]),
      ),
    ]),
  ) as Record<ListenerKind, Partial<Record<ProxyCounter, CounterSeries>>>;

  readonly raftObserver: RaftObserver;
  readonly rpcObserver: RpcObserver;
  readonly dnsObserver: DnsObserver;

  constructor(private config: TelemetryConfig) {
    const kinds: ForwardKind[] = ['write', 'read', 'leader-call', 'commit-index'];
    this.forwarded = Object.fromEntries(kinds.map((k) => [k, this.forwardedSeries.bind({ kind: k })])) as Record<ForwardKind, CounterCell>;
    this.forwardErrors = Object.fromEntries(kinds.map((k) => [k, this.forwardErrorSeries.bind({ kind: k })])) as Record<ForwardKind, CounterCell>;
    this.raftObserver = {
      committed: (entries, ms) => {
        this.commitTime.observeMs(ms);
        this.committedEntries.inc(entries);
      },
      applied: (entries, ms) => {
        this.fsmBatch.observeMs(ms);
        this.applied.inc(entries);
      },
      snapshotTaken: (ms, bytes) => {
        this.snapshotTime.observeMs(ms);
        this.lastSnapshotBytes = bytes;
      },
    };
    this.rpcObserver = {
      forwarded: (kind) => this.forwarded[kind].inc(),
      forwardFailed: (kind) => this.forwardErrors[kind].inc(),
      leaderCallServed: (method, ok) => {
        if (ok && method === 'Connect.Sign') this.leafSigned.inc();
      },
    };
    const refused = { max_conns: this.dnsRefusedSeries.bind({ reason: 'max_conns' }), max_conns_per_client: this.dnsRefusedSeries.bind({ reason: 'max_conns_per_client' }) } satisfies Record<TcpRefusal, CounterCell>;
    const timeouts = { first_query: this.dnsTimeoutSeries.bind({ reason: 'first_query' }), idle: this.dnsTimeoutSeries.bind({ reason: 'idle' }) } satisfies Record<TcpTimeout, CounterCell>;
    this.dnsObserver = {
      tcpRefused: (reason) => refused[reason].inc(),
      tcpTimedOut: (reason) => timeouts[reason].inc(),
      udpShed: () => this.dnsShed.inc(),
    };
    collectDefaultMetrics(this.registry);
    this.runtimeGauges();
  }

  get prometheusEnabled(): boolean {
    return this.config.prometheusRetentionMs > 0;
  }

  /** A reload's `telemetry` (agent/reload.ts): what the metrics endpoint serves from now on. */
  reload(config: TelemetryConfig): void {
    this.config = config;
  }

  start(): void {
    this.clock.start();
    this.loopDelay.start();
  }

  stop(): void {
    this.clock.stop();
    this.loopDelay.stop();
  }

  /** Gauges over the agent's parts, read at each scrape, and the Raft events that are counted. */
  watch({ raft, store, blocking, clockOffsets }: MetricsSources): void {
    raft.on('leader', (leader: unknown) => {
      if (leader) this.leaderChanges.inc();
    });
    raft.on('role', (role: string) => {
      if (role === 'leader') this.becameLeader.inc();
      else if (role === 'candidate') this.becameCandidate.inc();
    });
    const ctx = this.ctx;
    scrapeGauge(ctx, 'registry.raft.last_index', { name: 'registry_raft_last_index', help: 'Index of the last entry in the Raft log' }, () => one(raft.lastIndex()));
    scrapeGauge(ctx, 'registry.raft.commit_index', { name: 'registry_raft_commit_index', help: 'Highest Raft index known committed' }, () => one(raft.commitIndex()));
    scrapeGauge(ctx, 'registry.raft.applied_index', { name: 'registry_raft_applied_index', help: 'Highest Raft index applied to the state machine' }, () => one(raft.appliedIndex()));
    scrapeGauge(ctx, 'registry.raft.snapshot.size', { name: 'registry_raft_snapshot_size_bytes', help: 'Size of the last snapshot this server took' }, () => one(this.lastSnapshotBytes));
    scrapeGauge(ctx, 'registry.server.isLeader', { name: 'registry_server_is_leader', help: '1 while this server is the Raft leader' }, () => one(raft.isLeader() ? 1 : 0));
    scrapeGauge(
      ctx,
      'registry.raft.leader.lastContact',
      { name: 'registry_raft_leader_last_contact_seconds', help: 'Leader: time since each follower last answered an append or heartbeat', labelNames: ['peer', 'address'], scale: 1 / 1000 },
      () => raft.followerLastContact().filter((f) => Number.isFinite(f.ms)).map((f) => ({ labels: { peer: f.id, address: f.address }, value: f.ms })),
    );
    scrapeGauge(
      ctx,
      'registry.server.clock_offset',
      { name: 'registry_server_clock_offset_seconds', help: "Leader: each server's wall clock minus the leader's, from the leader's pings", labelNames: ['node', 'address'], scale: 1 / 1000 },
      () => (clockOffsets?.() ?? []).map((o) => ({ labels: { node: o.node, address: o.address }, value: o.ms })),
    );
    scrapeGauge(ctx, 'registry.rpc.queries_blocking', { name: 'registry_rpc_queries_blocking', help: 'Blocking queries waiting for a change on this server' }, () => one(blocking.open));
    const table = (key: 'nodes' | 'services' | 'checks' | 'kvEntries' | 'sessions', name: string, help: string) => scrapeGauge(ctx, `registry.state.${name}`, { name: `registry_state_${name}`, help }, () => one(store.tableSizes()[key]));
    table('nodes', 'nodes', 'Nodes in the catalog');
    table('services', 'services', 'Service instances in the catalog');
    table('checks', 'checks', 'Health checks in the catalog');
    table('kvEntries', 'kv_entries', 'Keys in the KV store');
    table('sessions', 'sessions', 'Sessions');
  }

  /** The state machine applied a command of `type` in `ms` (agent/store-fsm.ts). */
  fsmApplied(type: string, ms: number): void {
    let t = this.fsmTimers.get(type);
    if (!t) {
      t = this.fsmSeries.bind({ type });
      this.fsmTimers.set(type, t);
    }
    t.observeMs(ms);
  }

  /** A timer for one HTTP route (its pattern, never the raw path), made when the route table is built. */
  httpRoute(method: string, route: string): RouteTimer {
    const byStatus = new Map<number, Timer>();
    const series = this.httpSeries;
    return {
      done(status, ms) {
        let t = byStatus.get(status);
        if (!t) {
          t = series.bind({ method, route, code: String(status) });
          byStatus.set(status, t);
        }
        t.observeMs(ms);
      },
    };
  }

  /** A background runner of kind `runner` failed (runtime/runner-failures.ts). */
  runnerFailed(runner: string): void {
    // CounterSeries.bind keeps one cell per label set: no cache of our own.
    this.runnerFailureSeries.bind({ runner }).inc();
  }

  /** The HTTP port refused a connection over limits.http_max_conns{,_per_client} (http/connection-limit.ts). */
  httpRefused(reason: string): void {
    this.httpRefusedSeries.bind({ reason }).inc();
  }

  /** The server port closed a connection or refused a frame (agent/server-port-limits.ts); `reason` is one of a fixed set. */
  serverPortRefused(reason: string): void {
    this.serverPortRefusedSeries.bind({ reason }).inc();
  }

  /** Connections the server port counts against its caps (members' links not included), read at each scrape. */
  watchServerPort(open: () => number): void {
    scrapeGauge(this.ctx, 'registry.rpc.connections', { name: 'registry_rpc_connections', help: 'Server port: open connections counted against limits.rpc_max_conns (members\' links not included)' }, () => one(open()));
  }

  /** A Connect proxy's counts grew by `delta` (proxy/proxy-metrics.ts ReportDeltas). */
  proxyCounted(delta: ListenerCounts): void {
    const series = this.proxySeries[delta.kind];
    for (const [field] of PROXY_COUNTERS) series[field]?.bind(delta.labels).inc(delta[field]);
  }

  /** The Connect proxies' open connections, read at each scrape (registered once). */
  watchProxyConns(read: () => ListenerCounts[]): void {
    for (const kind of ['inbound', 'upstream'] as const) {
      scrapeGauge(
        this.ctx,
        `registry.proxy.${kind}.conns`,
        { name: `registry_proxy_${kind}_conns`, help: `Connect proxies, ${kind === 'inbound' ? 'public (mTLS) listener' : 'upstream listeners'}: connections open now`, labelNames: PROXY_LABELS[kind] },
        () => read().filter((l) => l.kind === kind).map((l) => ({ labels: l.labels, value: l.conns })),
      );
    }
  }

  /** A token was resolved in `ms`, from the cache or not. */
  aclResolved(ms: number, cacheHit: boolean): void {
    this.aclResolve.observeMs(ms);
    (cacheHit ? this.aclHits : this.aclMisses).inc();
  }

  /** The Prometheus text exposition (format 0.0.4). */
  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  get prometheusContentType(): string {
    return this.registry.contentType;
  }

  /** The JSON form in Consul's shape. */
  summary(): MetricsSummary {
    // No hostname in gauge names: registry has no push sink (metrics/config.ts, disableHostname).
    return consulSummary(this.json, this.clock, '');
  }

  private runtimeGauges(): void {
    const ctx = this.ctx;
    scrapeGauge(ctx, 'registry.runtime.heap_used_bytes', { name: 'registry_runtime_heap_used_bytes', help: 'V8 heap in use' }, () => one(process.memoryUsage().heapUsed));
    scrapeGauge(ctx, 'registry.runtime.rss_bytes', { name: 'registry_runtime_rss_bytes', help: 'Resident set size of the agent process' }, () => one(process.memoryUsage.rss()));
    // What the resident set holds besides live objects: the heap V8 has reserved (it keeps pages after
    // a collection) and memory outside it (Buffers, native allocations) — Go's sys_bytes, roughly.
    scrapeGauge(ctx, 'registry.runtime.heap_total_bytes', { name: 'registry_runtime_heap_total_bytes', help: 'V8 heap reserved (in use and free)' }, () => one(process.memoryUsage().heapTotal));
    scrapeGauge(ctx, 'registry.runtime.external_bytes', { name: 'registry_runtime_external_bytes', help: 'Memory outside the V8 heap held by JavaScript objects (Buffers included)' }, () => one(process.memoryUsage().external));
    scrapeGauge(
      ctx,
      'registry.runtime.event_loop_delay',
      { name: 'registry_runtime_event_loop_delay_seconds', help: 'Event-loop delay over the last 10 s window (stat: p50, p99, max)', labelNames: ['stat'], scale: 1 / 1000 },
      () => {
        const d = this.loopDelay.current();
        return [
          { labels: { stat: 'p50' }, value: d.p50Ms },
          { labels: { stat: 'p99' }, value: d.p99Ms },
          { labels: { stat: 'max' }, value: d.maxMs },
        ];
      },
    );
  }
}
