// Three real servers (TCP on loopback, LevelDB in temp dirs) in one process.
import { NotLeaderError } from '@registry/raft';
import { bytes, Cluster, waitFor, write } from './cluster-harness';

let cluster: Cluster;
afterEach(async () => {
  await cluster?.shutdown();
});

test('three servers elect exactly one leader and every server knows it', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  await waitFor(() => cluster.members.every((m) => m.node.leader()?.id === leader.id));
  expect(cluster.members.filter((m) => m.node.isLeader())).toHaveLength(1);
  expect(leader.node.leader()).toEqual({ id: leader.id, address: leader.address });
  expect(leader.node.lastContactMs()).toBe(0);
  for (const m of cluster.members) {
    expect(m.node.hasEverHadLeader()).toBe(true);
    expect(m.node.configuration().map((s) => s.id).sort()).toEqual(['n1', 'n2', 'n3']);
    if (m !== leader) expect(m.node.lastContactMs()).toBeLessThan(1000);
  }
});

test('500 proposals from 20 concurrent proposers are applied on every server in the same order', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  const results = await Promise.all(
    Array.from({ length: 20 }, async (_, p) => {
      const out: unknown[] = [];
      for (let i = 0; i < 25; i++) out.push(await leader.node.propose(bytes(`p${p}-${i}`)));
      return out;
    }),
  );
  // The FSM returns the list length after applying: every proposer got a distinct position.
  const positions = results.flat() as number[];
  expect(new Set(positions).size).toBe(500);
  await waitFor(() => cluster.members.every((m) => m.fsm.items.length === 500));
  const order = leader.fsm.items;
  for (const m of cluster.members) expect(m.fsm.items).toEqual(order);
  // Each proposer's commands appear in the order it proposed them.
  for (let p = 0; p < 20; p++) {
    const mine = order.filter((x) => x.startsWith(`p${p}-`));
    expect(mine).toEqual(Array.from({ length: 25 }, (_, i) => `p${p}-${i}`));
  }
  expect(leader.node.appliedIndex()).toBe(leader.node.commitIndex());
});

test('a proposal to a follower is refused with NotLeaderError naming the leader', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  const follower = cluster.members.find((m) => m !== leader)!;
  await waitFor(() => follower.node.leader()?.id === leader.id);
  const refusal = follower.node.propose(bytes('x'));
  await expect(refusal).rejects.toBeInstanceOf(NotLeaderError);
  await expect(refusal).rejects.toMatchObject({ leader: { id: leader.id, address: leader.address } });
});

test('a read barrier on a follower waits until it has applied what the leader had committed', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  const follower = cluster.members.find((m) => m !== leader)!;
  for (let i = 0; i < 50; i++) await leader.node.propose(bytes(`w${i}`));
  await follower.node.readBarrier(2000);
  expect(follower.fsm.items).toHaveLength(50);
  expect(follower.node.appliedIndex()).toBeGreaterThanOrEqual(leader.node.commitIndex());
  await leader.node.readBarrier(2000);
});

test('transferLeadership hands leadership to the named server within 2 s', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  await write(cluster, 'before');
  const target = cluster.members.find((m) => m !== leader)!;
  const started = Date.now();
  await leader.node.transferLeadership(target.id, 2000);
  expect(Date.now() - started).toBeLessThan(2000);
  await waitFor(() => target.node.isLeader(), 2000);
  expect(leader.node.isLeader()).toBe(false);
  await target.node.propose(bytes('after'));
  await waitFor(() => cluster.members.every((m) => m.fsm.items.join() === 'before,after'));
});

test('addServer brings a fresh server in and it catches up; removeServer takes one out', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  for (let i = 0; i < 20; i++) await leader.node.propose(bytes(`a${i}`));
  const fresh = await cluster.add('n4');
  fresh.node.start();
  await leader.node.addServer({ id: 'n4', address: fresh.address });
  expect(leader.node.configuration().map((s) => s.id).sort()).toEqual(['n1', 'n2', 'n3', 'n4']);
  await leader.node.propose(bytes('with four'));
  await waitFor(() => fresh.fsm.items.length === 21);
  expect(fresh.fsm.items).toEqual(leader.fsm.items);
  await waitFor(() => fresh.node.configuration().length === 4);

  const leaving = cluster.members.find((m) => m !== leader && m.id !== 'n4')!;
  await leader.node.removeServer(leaving.id);
  expect(leader.node.configuration().map((s) => s.id)).not.toContain(leaving.id);
  await cluster.stop(leaving);
  // Three voters remain; the cluster still commits.
  await leader.node.propose(bytes('with three'));
  await waitFor(() => fresh.fsm.items.at(-1) === 'with three');
});
