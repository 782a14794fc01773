// Three real servers on loopback. Clients write through every server while the leader is killed
// with SIGKILL, round after round: a new leader is elected, writes continue, the killed server
// comes back and catches up, and no acknowledged write is missing from any server.
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(180_000);

let cluster: ClusterHarness;
afterEach(async () => {
  await cluster?.stop();
});


async function nodesOn(c: ClusterHarness, i: number): Promise<Set<string>> {
  const r = await c.http(i, 'GET', '/v1/catalog/nodes?stale', undefined, { timeoutMs: 5_000 });
  return new Set(r.json<{ Node: string }[]>().map((n) => n.Node));
}


test('SIGKILL of the leader, three rounds: writes continue and no acknowledged write is lost', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  await cluster.waitForLeader(15_000);
  // A server that joined the new cluster after its bootstrap votes only once it has caught up: a
  // leader killed before then leaves the two others without a majority (docs/raft.md, "Under load").
  await cluster.waitAllCaughtUp();

  const acked: string[] = [];
  let seq = 0;
  let stop = false;
  const writer = async (server: number) => {
    while (!stop) {
      const node = `w${server}-${seq++}`;
      try {
        const r = await cluster.http(server, 'PUT', '/v1/catalog/register', { Node: node, Address: '10.0.0.1' }, { timeoutMs: 2_000 });
        if (r.status === 200 && r.body === 'true') acked.push(node);
        else await sleep(20);
      } catch {
        await sleep(20); // the server is down or the request timed out: indeterminate, not acknowledged
      }
    }
  };
  const writers = [0, 1, 2].map(writer);

  for (let round = 0; round < 3; round++) {
    await sleep(1_000);
    const leader = await cluster.waitForLeader(10_000);
    const before = acked.length;
    await cluster.kill(leader, 'SIGKILL');
    const killedAt = Date.now();
    // A new leader within 10 s (survivors name the dead one until their election timeout), and
    // writes acknowledged after the kill.
    expect(await eventually(async () => ((await cluster.leader()) ?? leader) !== leader, 10_000)).toBe(true);
    expect(await eventually(async () => acked.length > before + 5, 10_000)).toBe(true);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    await cluster.restart(leader);
  }
  await sleep(500);
  stop = true;
  await Promise.all(writers);
  expect(acked.length).toBeGreaterThan(30);

  // Every server, including each restarted one, holds every acknowledged write.
  for (const i of [0, 1, 2]) {
    const caughtUp = await eventually(async () => {
      const nodes = await nodesOn(cluster, i);
      return acked.every((n) => nodes.has(n));
    }, 20_000);
    if (!caughtUp) {
      const nodes = await nodesOn(cluster, i);
      throw new Error(`server ${i} is missing ${acked.filter((n) => !nodes.has(n)).slice(0, 10).join(', ')}\n${cluster.diagnostics()}`);
    }
  }
});

test('SIGTERM of the leader hands leadership over before it exits', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  // A settled cluster: a write through the leader has reached every server, so each is a caught-up
  // transfer target (a SIGTERM in the leader's first milliseconds may find none yet).
  const settle = await cluster.http(leader, 'PUT', '/v1/catalog/register', { Node: 'before-term', Address: '10.0.0.1' });
  expect(settle.status).toBe(200);
  expect(await eventually(async () => (await Promise.all([0, 1, 2].map((i) => nodesOn(cluster, i)))).every((n) => n.has('before-term')), 10_000)).toBe(true);
  await cluster.kill(leader, 'SIGTERM');
  expect(cluster.logs(leader)).toMatch(/leadership transferred before shutdown/);
  expect(await eventually(async () => ((await cluster.leader()) ?? leader) !== leader, 5_000)).toBe(true);
  const next = (await cluster.leader())!;
  const w = await cluster.http(next, 'PUT', '/v1/catalog/register', { Node: 'after-term', Address: '10.0.0.2' });
  expect(w.body).toBe('true');
});

test('servers register themselves; a dead server turns critical and passing again when back', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  const victim = (leader + 1) % 3;
  const node = `s${victim}`;
  const serf = async () =>
    (await cluster.http(leader, 'GET', `/v1/health/node/${node}`)).json<{ CheckID: string; Status: string }[]>().find((c) => c.CheckID === 'serfHealth')?.Status;
  expect(await eventually(async () => (await serf()) === 'passing', 10_000)).toBe(true);
  const svc = await cluster.http(leader, 'GET', '/v1/catalog/service/registry');
  expect(svc.json<unknown[]>()).toHaveLength(3);
  await cluster.kill(victim, 'SIGKILL');
  expect(await eventually(async () => (await serf()) === 'critical', 10_000)).toBe(true);
  const members = (await cluster.http(leader, 'GET', '/v1/agent/members')).json<{ Name: string; Status: number }[]>();
  expect(members.find((m) => m.Name === node)?.Status).toBe(4);
  await cluster.restart(victim);
  expect(await eventually(async () => (await serf()) === 'passing', 15_000)).toBe(true);
});
