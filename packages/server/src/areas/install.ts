// Wiring of network areas into an agent: the links (handlers, pings, forwarding), area operations,
// the RetryJoin leader duty, and what the routes and /v1/agent/self need.
import type { RaftNode, Transport } from '@registry/raft';
import type { Coordinate, Store } from '@registry/store';
import type { LeaderDuties } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import type { ServerFacts } from '../cluster/server-info';
import type { Rpc } from '../rpc/rpc';
import { AreaOps } from './area-ops';
import { RemoteQueryExecutor } from './remote-query';
import { AreaRetryJoin } from './retry-join';
import { WanLinks, type SecureLink } from './wan-links';
import type { DatacenterCoordinates, WanRouteDeps } from './wan-route-deps';

export interface AreasDeps {
  self: ServerFacts;
  version: string;
  raft: RaftNode;
  store: Store;
  rpc: Rpc;
  transport: Transport;
  leaderDuties: LeaderDuties;
  translateWanAddrs: boolean;
  logger: Logger;
  /** How links to a peer datacenter's server are dialled (TLS by the area's UseTLS); wan-links.ts. */
  secureLink?: SecureLink;
}

export interface Areas {
  /** The way to other datacenters: agent/ binds the Rpc's RemoteDatacenters port to it. */
  readonly links: WanLinks;
  readonly routes: WanRouteDeps;
  /** This server's LAN coordinate (`Coord` of /v1/agent/self). */
  coordinate(): Coordinate;
  stop(): void;
}

export function installAreas(d: AreasDeps): Areas {
  const links = new WanLinks({ self: d.self, version: d.version, raft: d.raft, store: d.store, rpc: d.rpc, transport: d.transport, logger: d.logger, secureLink: d.secureLink });
  const ops = new AreaOps(links, d.rpc);
  d.leaderDuties.add(new AreaRetryJoin(links, d.store, d.logger));
  links.start();
  return {
    links,
    routes: {
      datacenters: () => links.datacenters(),
      areaJoin: (dc, id, addresses, token) => ops.join(dc, id, addresses, token),
      areaMembers: (dc, id, token) => ops.members(dc, id, token),
      coordinateDatacenters: () => coordinateDatacenters(links, d.store),
      queryExecutor: new RemoteQueryExecutor(links, d.rpc),
      translateWanAddrs: d.translateWanAddrs,
    },
    coordinate: () => links.coordinates.lan.coordinate,
    stop: () => links.stop(),
  };
}

function coordinateDatacenters(links: WanLinks, store: Store): DatacenterCoordinates[] {
  const areaOf = new Map(store.areaList().value.map((a) => [a.PeerDatacenter.toLowerCase(), a.ID]));
  const known = links.coordinates.wanCoordinates();
  return links.datacenters().map((dc) => ({
    Datacenter: dc,
    AreaID: dc === links.datacenter ? 'WAN' : (areaOf.get(dc.toLowerCase()) ?? 'WAN'),
    Coordinates: known
      .filter((c) => c.server.datacenter === dc)
      .map((c) => ({ Node: `${c.server.node}.${c.server.datacenter}`, Coord: c.coord }))
      .sort((a, b) => (a.Node < b.Node ? -1 : a.Node > b.Node ? 1 : 0)),
  }));
}
