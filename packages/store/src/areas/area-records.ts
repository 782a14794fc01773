// Network areas (spec "Network area"; consul-behaviour §8): a link from this datacenter to one peer
// datacenter, plus the peer's servers this datacenter has learned through it (by joins and pings).
// The learned servers are replicated so that every server of the datacenter can forward `?dc=`
// requests, and keep knowing them across restarts.

/** Watch key of the areas themselves (area reads block on it). */
export const AREAS = 'areas';
/** Watch key of the learned peer servers: changes here must not move the areas' index. */
export const AREA_SERVERS = 'area-servers';

/** An area as written by the API (the ID is made by the HTTP layer). */
export interface AreaInput {
  ID: string;
  PeerDatacenter: string;
  /** Addresses a leader duty keeps joining until one join succeeds; null when none. */
  RetryJoin: string[] | null;
  UseTLS: boolean;
}

export interface AreaRecord extends AreaInput {
  CreateIndex: number;
  ModifyIndex: number;
}

/** An area as the API shows it (Consul's api.Area: no Raft indexes). */
export interface AreaOut {
  ID: string;
  PeerDatacenter: string;
  RetryJoin: string[] | null;
  UseTLS: boolean;
}

/** A server of the peer datacenter, learned through an area. */
export interface AreaServer {
  /** The server's node ID. */
  ID: string;
  Node: string;
  /** Its server RPC address, "host:port". */
  Address: string;
  Datacenter: string;
  /** Version string it reported. */
  Build: string;
}

/** The servers known through one area. */
export interface AreaServers {
  AreaID: string;
  PeerDatacenter: string;
  Servers: AreaServer[];
}

export function areaOut(a: AreaRecord): AreaOut {
  return { ID: a.ID, PeerDatacenter: a.PeerDatacenter, RetryJoin: a.RetryJoin === null ? null : [...a.RetryJoin], UseTLS: a.UseTLS };
}
