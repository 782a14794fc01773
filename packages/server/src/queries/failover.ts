// Failover to other datacenters (consul-behaviour §4.5 step 8): when no instance is left locally,
// ask up to NearestN datacenters by round-trip time, then the listed ones, each at most once and
// unknown ones skipped, stopping at the first that answers with instances. Linked datacenters (network
// areas) are not built yet: the agent's executor knows no remote datacenter, so Failovers stays 0;
// the code path is exercised with a fake executor.
import type { Authorizer } from '@registry/acl';
import type { CheckServiceNodeOut, QueryDefinition } from '@registry/store';

export interface RemoteResult {
  Nodes: CheckServiceNodeOut[];
  DNS: { TTL: string };
}

export interface RemoteDatacenterExecutor {
  /** Other datacenters ordered by round-trip time from this one (nearest first). */
  datacentersByDistance(): string[];
  /** Run the (rendered) query in datacenter `dc`, filtered for the query's Token, else `callerToken`. */
  execute(dc: string, query: QueryDefinition, limit: number, callerToken?: string): Promise<RemoteResult>;
}

/** No linked datacenters (until network areas exist). */
export const noRemoteDatacenters: RemoteDatacenterExecutor = {
  datacentersByDistance: () => [],
  execute: async (dc) => {
    throw new Error(`No path to datacenter ${dc}`);
  },
};

export interface FailoverOutcome {
  nodes: CheckServiceNodeOut[];
  datacenter: string | undefined;
  failovers: number;
}

export async function failover(
  query: QueryDefinition,
  limit: number,
  executor: RemoteDatacenterExecutor,
  onError: (dc: string, err: unknown) => void = () => undefined,
  callerToken?: string,
): Promise<FailoverOutcome> {
  const known = executor.datacentersByDistance();
  const order: string[] = [];
  const seen = new Set<string>();
  for (const dc of known.slice(0, Math.max(0, query.Service.Failover.NearestN))) {
    if (!seen.has(dc)) order.push(dc), seen.add(dc);
  }
  for (const dc of query.Service.Failover.Datacenters ?? []) {
    if (!seen.has(dc) && known.includes(dc)) order.push(dc), seen.add(dc);
  }
  let failovers = 0;
  for (const dc of order) {
    failovers++;
    try {
      const r = await executor.execute(dc, query, limit, callerToken);
      if (r.Nodes.length > 0) return { nodes: r.Nodes, datacenter: dc, failovers };
    } catch (err) {
      onError(dc, err);
    }
  }
  return { nodes: [], datacenter: undefined, failovers };
}

/**
 * What an executed prepared query answers (HTTP execute and DNS alike): the local candidates that
 * `authz` — the query's own token when it has one, else the caller's — may see, at most `limit`
 * (0: all); when none is left, the first datacenter failover finds.
 */
export async function executionAnswer(
  query: QueryDefinition,
  candidates: readonly CheckServiceNodeOut[],
  localDatacenter: string,
  authz: Authorizer,
  limit: number,
  executor: RemoteDatacenterExecutor,
  onError: ((dc: string, err: unknown) => void) | undefined,
  callerToken: string | undefined,
): Promise<{ nodes: CheckServiceNodeOut[]; datacenter: string; failovers: number }> {
  let nodes = candidates.filter((n) => authz.nodeRead(n.Node.Node) && authz.serviceRead(n.Service.Service));
  if (limit > 0) nodes = nodes.slice(0, limit);
  if (nodes.length > 0) return { nodes, datacenter: localDatacenter, failovers: 0 };
  const f = await failover(query, limit, executor, onError, callerToken);
  return f.datacenter ? { nodes: f.nodes, datacenter: f.datacenter, failovers: f.failovers } : { nodes, datacenter: localDatacenter, failovers: f.failovers };
}
