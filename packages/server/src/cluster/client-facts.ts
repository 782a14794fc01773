// What a client agent tells the servers about itself, and what they answer: the messages of the
// client ↔ server link (client/ sends them, cluster/client-gateway.ts serves them).
import type { Command } from '@registry/store';
import type { QueryOptions } from '../rpc/query-options';

/** A client agent's identity, sent with every heartbeat. */
export interface ClientFacts {
  id: string;
  node: string;
  /** The host other agents reach it on (its catalog node Address). */
  address: string;
  /** Its HTTP port (shown as the member's port). */
  port: number;
  nodeMeta: Record<string, string>;
}

export interface HeartbeatReply {
  /** Server RPC addresses of the Raft configuration: where to send requests when this one fails. */
  servers: string[];
  /** The leader's RPC address, '' when none is known. */
  leader: string;
  /** How often the client should heartbeat (a fraction of the servers' timeout). */
  intervalMs: number;
  /** The log's time on this server (Store.logTimeNow; 0 unknown): a client stamps its writes' copies with it. Absent from older servers. */
  logTimeMs?: number;
}

/** A client agent as `members` lists it. */
export interface ClientMember {
  id: string;
  node: string;
  address: string;
  port: number;
  status: 'alive' | 'failed' | 'left';
}

/** A write a client forwards: the request id is fixed on the client, so a re-send to another server is deduplicated. */
export interface ClientApply {
  cmd: Command;
  token: string | undefined;
  internal: boolean;
  requestId: string;
  /**
   * The ms left of the write's budget when the client agent sent it (client/server-link.ts): the
   * server forwards or proposes it only within that. Absent from client agents of older versions.
   */
  budgetMs?: number;
  /**
   * The log's time when this copy was sent, as the client agent could tell it (client/server-link.ts);
   * the server takes the difference to its own as the copy's time on its way. Absent when unknown.
   */
  sentAtLogMs?: number;
}

export interface ClientRead {
  endpoint: string;
  args: unknown;
  opts: QueryOptions;
}

/**
 * A leader call a client forwards. `token` is the request's (or, for the client's own calls, its
 * agent token): with ACLs on the server checks the method's rule against it before running it.
 */
export interface ClientLeaderCall {
  method: string;
  args: unknown;
  token: string | undefined;
}

/** The node-level check the servers keep for every agent (Consul's serf health check). */
export const CLIENT_ALIVE = 'Agent alive and reachable';
export const CLIENT_DEAD = 'Agent not live or unreachable';
