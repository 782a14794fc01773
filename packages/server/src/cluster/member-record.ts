// A member in Consul's /v1/agent/members shape (serf.Member as the agent prints it: Status 1 alive,
// 3 left, 4 failed; a server's role tag is "consul" — here "registry" — and a client's "node"),
// written here once for the three lists that give it: this datacenter's servers
// (agent/agent.ts), its client agents (cluster/client-members.ts) and the WAN members of the
// network areas (agent/agent-lifecycle.ts).

export type MemberStatus = 1 | 3 | 4;

export interface MemberRecord {
  Name: string;
  Addr: string;
  Port: number;
  Tags: Record<string, string>;
  Status: MemberStatus;
  ProtocolMin: 1;
  ProtocolMax: 5;
  ProtocolCur: 2;
  DelegateMin: 2;
  DelegateMax: 5;
  DelegateCur: 4;
}

/** The record, with the protocol versions a Consul 1.4 agent reports. */
export function memberRecord(name: string, addr: string, port: number, tags: Record<string, string>, status: MemberStatus): MemberRecord {
  return { Name: name, Addr: addr, Port: port, Tags: tags, Status: status, ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4 };
}

/** A server: its address is `host:port` (the server port), also given as its `port` tag. */
export function serverMember(server: { name: string; address: string; datacenter: string; id: string; build: string }, status: MemberStatus): MemberRecord {
  const i = server.address.lastIndexOf(':');
  const port = server.address.slice(i + 1);
  const tags = { role: 'registry', dc: server.datacenter, id: server.id, port, vsn: '2', build: server.build };
  return memberRecord(server.name, server.address.slice(0, i), Number(port), tags, status);
}

/** A client agent: role "node", no port tag. */
export function clientMember(client: { name: string; addr: string; port: number; datacenter: string; id: string; build: string }, status: MemberStatus): MemberRecord {
  return memberRecord(client.name, client.addr, client.port, { role: 'node', dc: client.datacenter, id: client.id, vsn: '2', build: client.build }, status);
}
