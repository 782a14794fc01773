// How the RPC layer reaches another datacenter (rpc.ts calls this for any `dc` other than its own;
// areas/wan-links.ts implements it, so the RPC layer never imports the areas).
// The agent binds the area links (LateRemoteDatacenters); until then, and for a datacenter no area reaches, the answer
// is Consul's 500 `No path to datacenter`.
import type { Command } from '@registry/store';
import { NO_PATH_TO_DC, serverError } from '../errors';
import type { QueryOptions } from './query-options';
import type { ApplyOptions, ReadReply } from './contract';

export interface RemoteDatacenters {
  apply(datacenter: string, cmd: Command, options: ApplyOptions): Promise<unknown>;
  read<T>(datacenter: string, endpoint: string, args: unknown, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>>;
}

export const noRemoteDatacenters: RemoteDatacenters = {
  apply: async () => {
    throw serverError(NO_PATH_TO_DC);
  },
  read: async () => {
    throw serverError(NO_PATH_TO_DC);
  },
};

/**
 * A late-bound port, and the one place a cycle of construction is broken by binding: the area links
 * (areas/wan-links.ts) serve other datacenters' requests through the Rpc, and the Rpc sends
 * `?dc=` requests to the links, so one of the two must exist first. The Rpc is built with this
 * port; the composition root binds the links to it as soon as they exist, before any request is
 * served (until then a `?dc=` request would get `No path to datacenter`, as with no area).
 */
export class LateRemoteDatacenters implements RemoteDatacenters {
  private to: RemoteDatacenters = noRemoteDatacenters;

  bind(remote: RemoteDatacenters): void {
    this.to = remote;
  }

  apply(datacenter: string, cmd: Command, options: ApplyOptions): Promise<unknown> {
    return this.to.apply(datacenter, cmd, options);
  }

  read<T>(datacenter: string, endpoint: string, args: unknown, opts: QueryOptions, signal?: AbortSignal): Promise<ReadReply<T>> {
    return this.to.read<T>(datacenter, endpoint, args, opts, signal);
  }
}
