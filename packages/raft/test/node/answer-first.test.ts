// Issue #14, one client: when the followers' answers commit an entry, the leader answers the
// proposer before it tells the followers about the commit — the messages of that Ready are held
// until the proposers' answers are queued — and the followers still hear every message, in order.
import { InMemoryNetwork, MemoryStorage, RaftNode, type InMemoryTransport, type Message } from '@registry/raft';
import { bytes, ListFsm, waitFor } from './cluster-harness';

const nodes: RaftNode[] = [];
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.stop();
});

test('the proposer is answered before any message carrying its commit leaves the leader', async () => {
  const net = new InMemoryNetwork();
  const ids = ['a', 'b', 'c'];
  const servers = ids.map((id) => ({ id, address: `${id}:1` }));
  const members = await Promise.all(
    ids.map(async (id) => {
      const transport = net.transport(`${id}:1`);
      const fsm = new ListFsm();
      const node = await RaftNode.create({ id, storage: new MemoryStorage(), transport, fsm, tickMs: 20 });
      nodes.push(node);
      return { id, node, fsm, transport };
    }),
  );
  await Promise.all(members.map((m) => m.node.bootstrap(servers)));
  members.forEach((m) => m.node.start());
  await waitFor(() => members.some((m) => m.node.leaderReady()), 10_000, 'a leader');
  const leader = members.find((m) => m.node.leaderReady())!;

  // Everything the leader sends from now on, and the moment the proposal is answered, in order.
  const log: string[] = [];
  const transport = leader.transport as InMemoryTransport;
  const send = transport.send.bind(transport);
  transport.send = (to, m: Message) => {
    if (m.type === 'append' || m.type === 'heartbeat') log.push(`${m.type} to=${m.to} commit=${m.commit}`);
    send(to, m);
  };
  for (let round = 0; round < 5; round++) {
    log.length = 0;
    let committed = 0;
    await leader.node.propose(bytes(`w${round}`)).then(() => {
      committed = leader.node.commitIndex();
      log.push('answered');
    });
    const answeredAt = log.indexOf('answered');
    const early = log.slice(0, answeredAt).filter((l) => Number(l.split('commit=')[1]) >= committed);
    expect(early).toEqual([]);
    // …and the followers do learn of the commit: they apply the entry.
    await waitFor(() => members.every((m) => m.fsm.items.length === round + 1), 5_000, `round ${round} applied everywhere`);
  }
  for (const m of members) expect(m.fsm.items).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
});
