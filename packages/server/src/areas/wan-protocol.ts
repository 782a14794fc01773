// What servers of linked datacenters say to each other over the server RPC port.
import type { Command, Coordinate } from '@registry/store';
import type { QueryOptions } from '../rpc/query-options';

export const WAN_HELLO = 'wan.hello';
export const WAN_PING = 'wan.ping';
export const WAN_APPLY = 'wan.apply';
export const WAN_READ = 'wan.read';
export const WAN_AREA = 'wan.area';

/** A server as other datacenters know it. */
export interface WanServer {
  id: string;
  node: string;
  /** Server RPC address, "host:port". */
  address: string;
  datacenter: string;
  build: string;
}

/** A join: the greeter and the servers of its datacenter, so the peer can link back. */
export interface HelloRequest {
  from: WanServer;
  servers: WanServer[];
  /**
   * A WAN join (`join?wan=1`), not an area join: the greeted datacenter links back even without an
   * area of its own for the greeter's, as Consul's WAN pool is one pool for both sides (its area
   * for the greeter's datacenter is made then). An area join leaves that to each side's operator.
   */
  linkBack?: boolean;
}

export interface HelloReply {
  self: WanServer;
  /** Every server of the answering datacenter (itself included). */
  servers: WanServer[];
}

export interface PingRequest {
  from: WanServer;
}

export interface PingReply {
  self: WanServer;
  servers: WanServer[];
  /** The answering server's coordinate among its own datacenter's servers. */
  lan: Coordinate;
  /** Its coordinate among all servers of linked datacenters. */
  wan: Coordinate;
}

/** A write for another datacenter, run there by whichever of its servers receives it. */
export interface RemoteApply {
  datacenter: string;
  cmd: Command;
  token: string | undefined;
  /** The write's identity, given in the datacenter it entered: a re-send to another server of the
   * remote datacenter is then applied at most once (rpc/request-ids.ts). */
  id: string;
}

/** A read for another datacenter, with the caller's consistency and blocking options. */
export interface RemoteRead {
  datacenter: string;
  endpoint: string;
  args: unknown;
  opts: QueryOptions;
}

/** Area join and members for another datacenter (`?dc=` on those routes): they are not Raft operations. */
export type RemoteAreaOp =
  | { datacenter: string; op: 'join'; id: string; addresses: string[]; token: string | undefined }
  | { datacenter: string; op: 'members'; id: string; token: string | undefined };
