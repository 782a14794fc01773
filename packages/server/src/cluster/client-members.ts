// Client agents in Consul's /v1/agent/members shape (Status 1 alive, 3 left, 4 failed; a client's
// role tag is "node", a server's "consul" — here "registry").
import type { ClientMember } from './client-facts';

const STATUS = { alive: 1, left: 3, failed: 4 } as const;

export function clientMemberOut(m: ClientMember, datacenter: string, build: string): Record<string, unknown> {
  return {
    Name: m.node,
    Addr: m.address,
    Port: m.port,
    Tags: { role: 'node', dc: datacenter, id: m.id, vsn: '2', build },
    Status: STATUS[m.status],
    ProtocolMin: 1,
    ProtocolMax: 5,
    ProtocolCur: 2,
    DelegateMin: 2,
    DelegateMax: 5,
    DelegateCur: 4,
  };
}
