// What route handlers may use: the RPC layer and facts about this agent. Routes never touch Raft
// or the store directly.
import type { ReadArgs, ReadName, ReadValue } from '../../rpc/contract';
import type { RpcApi } from '../../rpc/rpc-api';
import type { RouteContext } from '../route';
import type { AgentConnect } from '../../connect/agent-connect';
import type { SessionRenewer } from '../../sessions/session-ttl';
import type { LocalState } from '../../local/local-state';
import type { Metrics } from '../../metrics/metrics';
import type { AgentTokens } from '../../acl/agent-tokens';
import type { Maintenance } from '../../local/maintenance';
import type { Snapshots } from '../../snapshot/snapshots';

export interface AgentFacts {
  nodeName: string;
  nodeId: string;
  datacenter: string;
  /** `primary_datacenter`: where ACL policies and global tokens are written (undefined: `datacenter`). */
  primaryDatacenter?: string;
  /**
   * Whether this datacenter holds tokens of its own (Consul's LocalTokensEnabled: the primary, or a
   * secondary replicating tokens with a replication token). Where it does not, token reads, clones
   * and deletions go to the primary. Undefined (client agents): true.
   */
  localAclTokens?: () => boolean;
  /** `http_config.consul_compat`: Consul's spellings accepted where registry renamed them (docs/clients.md). */
  consulCompat?: boolean;
}

/** Cluster operations the status, operator and agent routes need (implemented by the agent). */
export interface ClusterOps {
  /** The leader's server address, or '' when none is known. */
  leaderAddress(): string;
  peers(): string[];
  raftConfiguration(): Promise<unknown>;
  /** `token` is the request's: a client agent sends it with the leader call for the server to check. */
  removePeer(by: { id?: string; address?: string }, token?: string): Promise<void>;
  transferLeader(id: string | undefined, token?: string): Promise<void>;
  /** Make a non-voting server (Raft learner) a voter; servers only (absent on a client agent). */
  promotePeer?(by: { id?: string; address?: string }): Promise<void>;
  members(): Promise<unknown[]>;
  join(address: string): Promise<void>;
  leave(): Promise<void>;
  self(): unknown;
}

/** This agent's lifecycle endpoints (implemented by agent/agent-lifecycle.ts; docs/agent-lifecycle.md). */
export interface AgentLifecycle {
  /** The agent's ACL tokens, settable at run time (PUT /v1/agent/token/:kind). */
  tokens: AgentTokens;
  /** Node and service maintenance mode. */
  maintenance: Maintenance;
  /** Pass each log line at `minRank` or above to `listener` until the returned function is called. */
  monitor(minRank: number, listener: (line: string) => void): () => void;
  /** Facts about the host (GET /v1/agent/host). */
  host(): Promise<unknown>;
  /** Remove a failed server from the cluster (it stays in members as left); false when no member has that name. */
  forceLeave(node: string, token?: string): Promise<boolean>;
  /** Every server this agent knows in every datacenter, names `<node>.<dc>` (members?wan=1). */
  wanMembers(): unknown[];
  /** Link this datacenter to the one of the server at `address` (join?wan=1: a network area). */
  wanJoin(address: string, token: string | undefined): Promise<void>;
}

export interface RouteDeps {
  /** A server's Rpc or a client agent's ForwardingRpc: routes do not know which (rpc/rpc-api.ts). */
  rpc: RpcApi;
  agent: AgentFacts;
  cluster: ClusterOps;
  /** The Connect side (intention defaults, CA, leaves, the agent cache). */
  connect: AgentConnect;
  /** This agent's own services and checks (local/local-state.ts), on both agent kinds. */
  local: LocalState;
  /** Session TTL renewals (restarted on the leader) and the TTL floor. */
  sessions?: SessionRenewer;
  /** This agent's metrics (GET /v1/agent/metrics). */
  metrics?: Metrics;
  /** Tokens, maintenance, monitor, host, force-leave and the WAN view (set by the agent). */
  lifecycle?: AgentLifecycle;
  /** Re-read and apply the agent's configuration (PUT /v1/agent/reload, SIGHUP); throws ConfigError when invalid. */
  reload?: () => Promise<{ changed: string[]; needRestart: string[] }>;
  /** Backups: save and restore the whole state (GET/PUT /v1/snapshot). */
  snapshots?: Snapshots;
}

/**
 * The abort signal every read a route makes is given: only a blocking read (`?index=`) waits long
 * enough for its client's leaving to matter, and making an AbortSignal costs Node ~3 µs — 8 % of a
 * `?stale` read's server time in a profile (wrk c=64, 10-instance health answers). Streams and
 * hash waits, which always wait, take ctx.signal itself.
 */
export function waitSignal(ctx: RouteContext<any, any, any>): AbortSignal | undefined {
  return ctx.opts.minIndex > 0 ? ctx.signal : undefined;
}

/** Run a read for a route and copy its index and leader headers onto the response. */
export async function readInto<K extends ReadName>(deps: RouteDeps, ctx: RouteContext<any, any, any>, endpoint: K, args: ReadArgs<K>): Promise<ReadValue<K>> {
  const reply = await deps.rpc.read(endpoint, args, ctx.opts, waitSignal(ctx));
  ctx.meta.index = reply.result.index;
  ctx.meta.knownLeader = reply.meta.knownLeader;
  ctx.meta.lastContactMs = reply.meta.lastContactMs;
  return reply.result.value;
}

/** `near=_agent` means this agent's own node. */
export function nearOf(ctx: RouteContext<any, { near?: string }, any>, deps: RouteDeps): string | undefined {
  const near = ctx.query.near;
  if (!near) return undefined;
  return near === '_agent' ? deps.agent.nodeName : near;
}

/** Where a token read, clone or deletion asked in `dc` goes: the primary when this datacenter holds no tokens of its own. */
export function tokenDatacenter(deps: RouteDeps, dc: string): string {
  return dc === deps.agent.datacenter && deps.agent.localAclTokens && !deps.agent.localAclTokens() ? primaryDatacenter(deps) : dc;
}

/** The datacenter authoritative for ACLs (docs/acl.md "Several datacenters"). */
export function primaryDatacenter(deps: RouteDeps): string {
  return deps.agent.primaryDatacenter ?? deps.agent.datacenter;
}
