// Area join and members, the two area operations that are not Raft reads or writes: run here for
// this datacenter, or by a server of the datacenter named in `?dc=`, with the caller's token
// checked by whichever server runs them (operator:write to join, operator:read for members).
import type { AreaOut } from '@registry/store';
import { forbidden, notFound } from '../errors';
import { defaultQueryOptions } from '../rpc/query-options';
import type { Rpc } from '../rpc/rpc';
import { joinArea, type JoinResult } from './area-join';
import { areaMembers, type AreaMember } from './area-members';
import type { WanLinks } from './wan-links';
import type { RemoteAreaOp } from './wan-protocol';

export const AREA_NOT_FOUND = 'Area not found';

export class AreaOps {
  constructor(
    private readonly links: WanLinks,
    private readonly rpc: Rpc,
  ) {
    links.serveAreaOps((op) => this.run(op));
  }

  join(datacenter: string, id: string, addresses: string[], token: string | undefined): Promise<JoinResult[]> {
    return this.run({ datacenter, op: 'join', id, addresses, token }) as Promise<JoinResult[]>;
  }

  members(datacenter: string, id: string, token: string | undefined): Promise<AreaMember[]> {
    return this.run({ datacenter, op: 'members', id, token }) as Promise<AreaMember[]>;
  }

  /** The area `id` of this datacenter, read on the leader; 404 when unknown. */
  async area(id: string, token: string | undefined): Promise<AreaOut> {
    const reply = await this.rpc.read('area.get', { id }, defaultQueryOptions(this.links.datacenter, token));
    if (!reply.result.value) throw notFound(AREA_NOT_FOUND);
    return reply.result.value;
  }

  private async run(op: RemoteAreaOp): Promise<unknown> {
    if (op.datacenter.toLowerCase() !== this.links.datacenter.toLowerCase()) return this.links.areaOp(op);
    const authz = this.rpc.aclResolver.resolve(op.token);
    if (op.op === 'join') {
      if (!authz.operatorWrite()) throw forbidden();
      return joinArea(this.links, await this.area(op.id, op.token), op.addresses);
    }
    if (!authz.operatorRead()) throw forbidden();
    return this.membersOf(await this.area(op.id, op.token));
  }

  private membersOf(area: AreaOut): AreaMember[] {
    const self = this.links.me();
    const peers = this.links.peerServers().filter((s) => s.areaId === area.ID);
    return areaMembers([
      ...this.links.localServers().map((server) => ({
        server,
        status: server.id === self.id ? ('alive' as const) : this.links.status.state(server.id),
        rttMs: this.links.rttMs(server.id),
      })),
      ...peers.map((server) => ({ server, status: this.links.status.state(server.id), rttMs: this.links.rttMs(server.id) })),
    ]);
  }
}
