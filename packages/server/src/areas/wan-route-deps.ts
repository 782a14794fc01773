// What the HTTP routes need from the area links: the datacenters this one reaches, area join and
// members, WAN coordinates, the failover executor for prepared queries, and whether to translate
// other datacenters' addresses.
import type { Coordinate } from '@registry/store';
import type { RemoteDatacenterExecutor } from '../queries/failover';
import { noRemoteDatacenters } from '../queries/failover';
import { NO_PATH_TO_DC, serverError } from '../errors';
import type { JoinResult } from './area-join';
import type { AreaMember } from './area-members';

export interface DatacenterCoordinates {
  Datacenter: string;
  /** `WAN` for this datacenter's own servers; the area's ID for a peer datacenter. */
  AreaID: string;
  Coordinates: { Node: string; Coord: Coordinate }[];
}

export interface WanRouteDeps {
  /** This datacenter and every one reachable through an area, nearest first. */
  datacenters(): string[];
  areaJoin(datacenter: string, id: string, addresses: string[], token: string | undefined): Promise<JoinResult[]>;
  areaMembers(datacenter: string, id: string, token: string | undefined): Promise<AreaMember[]>;
  coordinateDatacenters(): DatacenterCoordinates[];
  queryExecutor: RemoteDatacenterExecutor;
  translateWanAddrs: boolean;
}

/** A server with no area links (routes built without an agent, e.g. to list them). */
export function localDatacenterOnly(datacenter: () => string): WanRouteDeps {
  const noPath = async (): Promise<never> => {
    throw serverError(NO_PATH_TO_DC);
  };
  return {
    datacenters: () => [datacenter()],
    areaJoin: noPath,
    areaMembers: noPath,
    coordinateDatacenters: () => [],
    queryExecutor: noRemoteDatacenters,
    translateWanAddrs: false,
  };
}
