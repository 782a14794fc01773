// What the DNS interface reads, through the RPC layer like every other read (so forwarding to the
// leader or another datacenter, consistency and ACLs apply): a service's instances
// ('health.service'), a node ('catalog.node') and a prepared query's execution ('query.execute',
// the same endpoint, ACL filtering and failover as /v1/query/:id/execute). DNS carries no token:
// the agent's default token is used, as Consul does. With allow_stale the reads are stale, and
// an answer older than max_stale is read again from the leader (Consul's lookupServiceNodes).
import type { Authorizer } from '@registry/acl';
import { parseDurationMs, type CatalogNodeOut, type CheckServiceNodeOut } from '@registry/store';
import type { ExecuteArgs, ExecuteCandidates } from '../endpoints/query-reads';
import { executionAnswer, noRemoteDatacenters, type RemoteDatacenterExecutor } from '../queries/failover';
import { defaultQueryOptions } from '../rpc/query-options';
import type { ReadArgs, ReadName, ReadValue } from '../rpc/contract';
import type { RpcApi } from '../rpc/rpc-api';
import { serviceTtlS, type DnsConfig } from './config';

/** The part of the RPC layer DNS uses (rpc/rpc.ts). */
export interface DnsRpc {
  read: RpcApi['read'];
  readonly aclResolver: { resolve(secret: string | undefined): Authorizer };
}

export interface LookupDeps {
  rpc: DnsRpc;
  config: DnsConfig;
  /** This agent's datacenter and node (the `_agent` of a prepared query's Near). */
  datacenter: string;
  nodeName: string;
  /** The agent's default token (read per query: it can change at run time). */
  token: () => string | undefined;
  /** Prepared-query failover to other datacenters (areas/remote-query.ts). */
  remoteQueries?: RemoteDatacenterExecutor;
  onFailoverError?: (dc: string, err: unknown) => void;
}

export interface QueryAnswer {
  nodes: CheckServiceNodeOut[];
  /** The query's DNS.TTL when set, else the service's TTL, in seconds. */
  ttlS: number;
  /** The datacenter that supplied the nodes (another one after failover). */
  datacenter: string;
}

export class Lookups {
  constructor(private d: LookupDeps) {}

  /** A reload's `dns_config` (through DnsHandler.reload). */
  reload(config: DnsConfig): void {
    this.d = { ...this.d, config };
  }

  /** Instances of `service` (with `tag`, when not empty) in `dc`, checks included, unfiltered by health. */
  async serviceNodes(service: string, tag: string, dc: string): Promise<CheckServiceNodeOut[]> {
    const args = { service, tags: tag ? [tag] : [], nodeMeta: undefined, passing: this.d.config.onlyPassing, connect: false };
    return this.read('health.service', args, dc);
  }

  /** A node and its services, or null when it does not exist or the token may not see it. */
  async node(node: string, dc: string): Promise<CatalogNodeOut | null> {
    return this.read('catalog.node', { node }, dc);
  }

  /** Execute prepared query `idOrName` in `dc`; `sourceIp` is the `_ip` of its Near. Throws NotFound for an unknown query. */
  async preparedQuery(idOrName: string, dc: string, sourceIp: string): Promise<QueryAnswer> {
    const token = this.d.token();
    const args: ExecuteArgs = { idOrName, agentNode: this.d.nodeName, agentSegment: '', near: '', ip: sourceIp, connect: false };
    const { query, nodes } = await this.read('query.execute', args, dc);
    // As the HTTP execute: the query's own token, when it has one, decides what may be shown.
    const authz = this.d.rpc.aclResolver.resolve(query.Token || token);
    const { nodes: shown, datacenter } = await executionAnswer(query, nodes, dc, authz, 0, this.d.remoteQueries ?? noRemoteDatacenters, this.d.onFailoverError, token);
    const ttlMs = query.DNS?.TTL ? parseDurationMs(query.DNS.TTL) : undefined;
    const ttlS = ttlMs !== undefined && ttlMs >= 0 ? Math.floor(ttlMs / 1000) : serviceTtlS(this.d.config, query.Service.Service);
    return { nodes: shown, ttlS, datacenter };
  }

  private async read<K extends ReadName>(name: K, args: ReadArgs<K>, dc: string): Promise<ReadValue<K>> {
    const cfg = this.d.config;
    const opts = defaultQueryOptions(dc, this.d.token() || undefined, { consistency: cfg.allowStale ? 'stale' : 'default' });
    let reply = await this.d.rpc.read(name, args, opts);
    if (cfg.allowStale && reply.meta.lastContactMs > cfg.maxStaleMs) {
      reply = await this.d.rpc.read(name, args, { ...opts, consistency: 'default' });
    }
    return reply.result.value;
  }
}
