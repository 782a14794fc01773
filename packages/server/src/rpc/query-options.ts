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
