// The options every read carries through the RPC layer (parsed from HTTP by http/query-options.ts).

export type Consistency = 'default' | 'stale' | 'consistent';

export interface QueryOptions {
  datacenter: string;
  token: string | undefined;
  consistency: Consistency;
  cached: boolean;
  /** 0 means "do not block". */
  minIndex: number;
  /** Requested wait in ms (undefined → default); capping and jitter belong to blocking.ts. */
  waitMs: number | undefined;
  cacheControl: { maxAgeS?: number; staleIfErrorS?: number; mustRevalidate: boolean };
}

/**
 * The options of a read the agent makes for itself (DNS, areas, replication, a client's mirror): a
 * default-consistency, uncached, non-blocking read of `datacenter` with `token`, changed where
 * `more` says. The one place those defaults are written, so a field added to QueryOptions gets its
 * default here rather than in each caller.
 */
export function defaultQueryOptions(datacenter: string, token: string | undefined, more: Partial<QueryOptions> = {}): QueryOptions {
  return { datacenter, token, consistency: 'default', cached: false, minIndex: 0, waitMs: undefined, cacheControl: { mustRevalidate: false }, ...more };
}
