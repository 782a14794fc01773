// Prepared-query failover to linked datacenters (consul-behaviour §4.5 step 8): the datacenters
// come nearest first from the area links, and a query runs in another datacenter as the read
// `query.execute-remote` forwarded there, carrying the rendered query (the remote datacenter does
// not have it). The remote filters what it returns with the query's own Token: the failover
// interface (queries/failover.ts) does not carry the caller's token, so a query without a Token
// shows there what the anonymous token may read.
import type { QueryDefinition } from '@registry/store';
import { defaultQueryOptions } from '../rpc/query-options';
import type { RemoteDatacenterExecutor, RemoteResult } from '../queries/failover';
import type { Rpc } from '../rpc/rpc';
import type { WanLinks } from './wan-links';

export interface RemoteExecuteArgs {
  query: QueryDefinition;
  limit: number;
}

export class RemoteQueryExecutor implements RemoteDatacenterExecutor {
  constructor(
    private readonly links: WanLinks,
    private readonly rpc: Rpc,
  ) {}

  datacentersByDistance(): string[] {
    return this.links.datacenters().filter((dc) => dc !== this.links.datacenter);
  }

  async execute(dc: string, query: QueryDefinition, limit: number, callerToken?: string): Promise<RemoteResult> {
    // As locally: the query's own token when it has one, else the caller's.
    const opts = defaultQueryOptions(dc, query.Token || callerToken || undefined);
    const args: RemoteExecuteArgs = { query, limit };
    const reply = await this.rpc.read('query.execute-remote', args, opts);
    return reply.result.value;
  }
}
