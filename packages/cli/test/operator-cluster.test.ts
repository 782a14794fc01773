// `registry operator raft …` as real processes against three real `registry agent` server processes
// (the cluster harness): list-peers through a follower, transfer-leader to a named server and to
// any, and remove-peer of a dead server, after which the two that remain still commit.
import { ClusterHarness } from '../../server/test/cluster/support/cluster-harness';
import { waitFor } from '../../server/test/support/dev-agent';
import { cli } from './support/cli';

jest.setTimeout(180_000);

let cluster: ClusterHarness;
beforeAll(async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

const addr = (i: number) => `-http-addr=127.0.0.1:${cluster.servers[i].httpPort}`;
const raft = (i: number, ...args: string[]) => cli(['operator', 'raft', ...args, addr(i)], { timeoutMs: 30_000 });

interface Peer {
  node: string;
  id: string;
  address: string;
  state: string;
}

/** list-peers' table, parsed back. */
async function peers(i: number, ...flags: string[]): Promise<Peer[]> {
  const r = await raft(i, 'list-peers', ...flags);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  const [head, ...rows] = r.stdout.trim().split('\n');
  expect(head).toMatch(/^Node\s+ID\s+Address\s+State\s+Voter\s+RaftProtocol$/);
  return rows.map((row) => {
    const [node, id, address, state] = row.split(/\s+/);
    return { node, id, address, state };
  });
}

const leaderIndex = async () => {
  const i = await cluster.leader();
  if (i === undefined) throw new Error('no leader');
  return i;
};

test('list-peers through a follower (and with -stale) shows the three servers and the one leader', async () => {
  const leader = await leaderIndex();
  const follower = (leader + 1) % 3;
  for (const flags of [[], ['-stale']]) {
    const list = await peers(follower, ...flags);
    expect(list.map((p) => p.node).sort()).toEqual(['s0', 's1', 's2']);
    expect(list.filter((p) => p.state === 'leader').map((p) => p.address)).toEqual([cluster.servers[leader].serverAddress]);
    expect(list.every((p) => /^[0-9a-f-]{36}$/.test(p.id))).toBe(true);
  }
});

test('transfer-leader -id hands leadership to that server; without -id, to another one', async () => {
  const leader = await leaderIndex();
  const target = (leader + 2) % 3;
  const targetId = (await peers(leader)).find((p) => p.node === `s${target}`)!.id;
  // Asked of a follower, which forwards it to the leader.
  const asked = (leader + 1) % 3;
  expect(await raft(asked, 'transfer-leader', '-id', targetId)).toMatchObject({ code: 0, stdout: 'Success\n' });
  await waitFor(async () => (await cluster.leader()) === target, 15_000);
  expect((await peers(leader)).find((p) => p.state === 'leader')!.node).toBe(`s${target}`);

  expect(await raft(target, 'transfer-leader')).toMatchObject({ code: 0, stdout: 'Success\n' });
  await waitFor(async () => ![undefined, target].includes(await cluster.leader()), 15_000);
});

test('transfer-leader to an ID that is not a server fails with exit 1 and the agent\'s reason', async () => {
  const r = await raft(await leaderIndex(), 'transfer-leader', '-id', '00000000-0000-4000-8000-000000000000');
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^Error transferring leadership: Unexpected response code: \d{3} \(.+\)\n$/);
});

test('remove-peer -id removes a dead server; the two left still commit; an unknown -address fails', async () => {
  const leader = await leaderIndex();
  const victim = (leader + 1) % 3;
  const victimId = (await peers(leader)).find((p) => p.node === `s${victim}`)!.id;
  await cluster.kill(victim, 'SIGKILL');

  const alive = [0, 1, 2].find((i) => i !== victim && i !== leader)!;
  expect(await raft(alive, 'remove-peer', '-id', victimId)).toMatchObject({ code: 0, stdout: `Removed peer with id "${victimId}"\n` });
  await waitFor(async () => (await peers(alive)).length === 2, 15_000);
  expect((await peers(alive)).map((p) => p.node)).not.toContain(`s${victim}`);

  // The two remaining servers are a majority of the new configuration: a write commits.
  const now = await cluster.waitForLeader(15_000);
  expect(await cli(['kv', 'put', addr(now), 'after/remove', 'ok'])).toMatchObject({ code: 0 });
  expect(await cli(['kv', 'get', addr(alive === now ? leader : alive), 'after/remove'])).toMatchObject({ code: 0, stdout: 'ok\n' });

  const unknown = await raft(now, 'remove-peer', '-address', '127.0.0.1:1');
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toMatch(/^Error removing peer: Unexpected response code: \d{3} \(.+\)\n$/);
  expect(await raft(now, 'remove-peer', '-id', victimId, '-address', '127.0.0.1:1')).toMatchObject({ code: 1, stderr: expect.stringMatching(/Must specify only one of -id or -address/) });
});
