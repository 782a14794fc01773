// A server that starts with no Raft state stays out of elections until it has caught up with a
// leader (issue #16; node/catch-up.ts): a member whose data dir was wiped and which restarts with the
// same id may have acknowledged entries and cast votes it no longer remembers.
import { rmSync, mkdirSync } from 'node:fs';
import { Cluster, bytes, waitFor, write } from './cluster-harness';

jest.setTimeout(60_000);

let cluster: Cluster;
afterEach(async () => {
  await cluster?.shutdown();
});

test('the servers of a new cluster take part in elections at once (bootstrap)', async () => {
  cluster = await Cluster.start(3, { tickMs: 20 });
  await cluster.leader();
  for (const m of cluster.members) expect(m.node.catchingUp()).toBe(false);
});

test('a wiped follower restarted with the same id catches up before it may vote again', async () => {
  cluster = await Cluster.start(3, { tickMs: 20, snapshotThreshold: 50, trailingLogs: 10 });
  await cluster.leader();
  for (let i = 0; i < 200; i++) await write(cluster, `before-${i}`);
  const leader = await cluster.leader();
  const victim = cluster.members.find((m) => m !== leader)!;
  await cluster.stop(victim);
  rmSync(victim.dir, { recursive: true, force: true });
  mkdirSync(victim.dir, { recursive: true });

  const logged: string[] = [];
  const writes = (async () => {
    for (let i = 0; i < 100; i++) await write(cluster, `during-${i}`);
  })();
  await cluster.restart(victim);
  // It reports that it is catching up, and announces the end once.
  expect(victim.node.catchingUp()).toBe(true);
  victim.node.on('caught-up', (info: { appliedIndex: number }) => logged.push(`caught up at ${info.appliedIndex}`));
  await waitFor(() => !victim.node.catchingUp(), 20_000, 'catch-up');
  await writes;
  expect(logged).toHaveLength(1);
  // Everything committed before it caught up is there, and what follows arrives too.
  await waitFor(() => victim.fsm.items.length === leader.fsm.items.length, 10_000, 'same state');
  expect(victim.fsm.items).toEqual(leader.fsm.items);
  expect(victim.fsm.items.filter((x) => x.startsWith('before-'))).toHaveLength(200);
  expect((victim.node.stats() as { catchingUp: boolean }).catchingUp).toBe(false);

  // Once caught up it is an ordinary voter: with the leader gone, the two others elect one.
  const current = await cluster.leader();
  await cluster.stop(current);
  const next = await cluster.leader(15_000);
  expect(next).not.toBe(current);
});

test('while catching up it gives no vote: with the only other healthy voter, no leader is elected', async () => {
  cluster = await Cluster.start(3, { tickMs: 20 });
  const leader = await cluster.leader();
  await leader.node.propose(bytes('x'));
  const [a, b] = cluster.members.filter((m) => m !== leader);
  // b is wiped and restarted while the leader is down: it hears from no leader, so it cannot catch
  // up, and a alone (one vote of three) cannot win without it.
  await cluster.stop(leader);
  await cluster.stop(b);
  rmSync(b.dir, { recursive: true, force: true });
  mkdirSync(b.dir, { recursive: true });
  await cluster.restart(b);
  await new Promise((r) => setTimeout(r, 2_000)); // ~100 ticks: several election timeouts
  expect(a.node.isLeader() || b.node.isLeader()).toBe(false);
  expect(b.node.catchingUp()).toBe(true);
  // The old leader returns: a leader is elected among it and a, and b catches up from it.
  await cluster.restart(leader);
  await cluster.leader(15_000);
  await waitFor(() => !b.node.catchingUp(), 15_000, 'catch-up');
  await waitFor(() => b.fsm.items.includes('x'), 5_000, 'the entry');
});
