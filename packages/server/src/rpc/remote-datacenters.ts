// How the RPC layer reaches another datacenter (rpc.ts calls this for any `dc` other than its own;
// areas/wan-links.ts implements it, so the RPC layer never imports the areas).
// The agent installs the area links; until then, and for a datacenter no area reaches, the answer
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
