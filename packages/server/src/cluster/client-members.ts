// Client agents in Consul's /v1/agent/members shape (cluster/member-record.ts: Status 1 alive,
// 3 left, 4 failed; a client's role tag is "node").
import type { ClientMember } from './client-facts';
import { clientMember, type MemberRecord } from './member-record';

const STATUS = { alive: 1, left: 3, failed: 4 } as const;

export function clientMemberOut(m: ClientMember, datacenter: string, build: string): MemberRecord {
  return clientMember({ name: m.node, addr: m.address, port: m.port, datacenter, id: m.id, build }, STATUS[m.status]);
}
