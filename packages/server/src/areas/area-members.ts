// Area members (spec "Area member"): the peer datacenter's servers known through the area and this
// datacenter's servers, as this server sees them.
import { hostOf, portOf } from '../cluster/server-info';
import type { PeerState } from './peer-status';
import type { WanServer } from './wan-protocol';

export interface AreaMember {
  ID: string;
  /** Node name with the datacenter appended (`node-2.dc1`). */
  Name: string;
  Addr: string;
  Port: number;
  Datacenter: string;
  Role: 'server';
  Build: string;
  Protocol: number;
  Status: PeerState;
  /** Estimated round trip from this server, in nanoseconds (0 when unknown). */
  RTT: number;
}

export const PROTOCOL_VERSION = 2;

export interface MemberView {
  server: WanServer;
  status: PeerState;
  rttMs: number | undefined;
}

export function areaMember(v: MemberView): AreaMember {
  const s = v.server;
  return {
    ID: s.id,
    Name: `${s.node}.${s.datacenter}`,
    Addr: hostOf(s.address),
    Port: portOf(s.address),
    Datacenter: s.datacenter,
    Role: 'server',
    Build: s.build,
    Protocol: PROTOCOL_VERSION,
    Status: v.status,
    RTT: v.rttMs === undefined ? 0 : Math.max(0, Math.round(v.rttMs * 1e6)),
  };
}

/** Members ordered by datacenter, then name. */
export function areaMembers(views: readonly MemberView[]): AreaMember[] {
  return views
    .map(areaMember)
    .sort((a, b) => (a.Datacenter !== b.Datacenter ? (a.Datacenter < b.Datacenter ? -1 : 1) : a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
}
