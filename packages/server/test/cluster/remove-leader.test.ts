// Issue #35, finding 4: removing the leader itself with `DELETE /v1/operator/raft/peer` is
// committed at once, but the leader stepped down in the same Raft Ready that committed it and
// failed every pending proposal before applying that Ready's entries, so the operator was told
// `500 leadership lost while the command was in flight` for a removal that had happened (and
// `Unknown peer` on a retry). Entries committed as leadership moves are answered as applied. The
// removed leader, still alive and not left, is then added back by the new leader (issue #35, as
// Consul's reconciliation does), so the cluster ends with three voters again.
import { eventually } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness | undefined;
afterEach(async () => {
  await cluster?.stop();
});

interface RaftConfiguration {
  Servers: { ID: string; Address: string; Leader: boolean }[];
}

test('removing the leader answers 200; another server leads, and the old leader, alive, is added back as Consul does', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3 }));
  const leader = await c.waitForLeader(60_000);
  // A formed cluster: every server has applied a write of this leader. (Removed within a moment of
  // the first election, before the third server had heard any leader, the two left could not elect:
  // a server with no state takes no part in elections until it has caught up with a leader.)
  expect((await c.http(leader, 'PUT', '/v1/kv/formed', 'yes')).status).toBe(200);
  expect(await eventually(async () => {
    const seen = await Promise.all([0, 1, 2].map((i) => c.http(i, 'GET', '/v1/kv/formed?stale', undefined, { timeoutMs: 2_000 }).then((a) => a.status, () => 0)));
    return seen.every((s) => s === 200);
  }, 30_000, 100)).toBe(true);
  // A formed cluster also has every server's catalog node (registered by the leader's reconciliation
  // within a second or two of the election), so that the removed leader is asked back by the path
  // most removals take (readmission.ts; one with no catalog node: rejoin-removed.test.ts).
  expect(await eventually(async () => {
    const seen = await Promise.all(c.servers.map((s) => c.http(leader, 'GET', `/v1/catalog/node/${s.node}`, undefined, { timeoutMs: 2_000 }).then((a) => a.status, () => 0)));
    return seen.every((s) => s === 200);
  }, 30_000, 100)).toBe(true);
  const address = c.servers[leader].serverAddress;
  const r = await c.http(leader, 'DELETE', `/v1/operator/raft/peer?address=${address}`, undefined, { timeoutMs: 15_000 });
  expect(`${r.status} ${r.body}`).toBe('200 ');
  const others = [0, 1, 2].filter((i) => i !== leader);
  let conf: RaftConfiguration | undefined;
  // Another server leads (the removed one stepped down as its removal committed), and — issue #35 —
  // the new leader's reconciliation adds the removed server back, alive and not left, as a voter.
  const settled = await eventually(async () => {
    for (const i of others) {
      const a = await c.http(i, 'GET', '/v1/operator/raft/configuration', undefined, { timeoutMs: 2_000 });
      if (a.status !== 200) return false;
      conf = a.json<RaftConfiguration>();
      const newLeader = conf.Servers.find((s) => s.Leader);
      if (!newLeader || newLeader.Address === address || conf.Servers.length !== 3 || !conf.Servers.some((s) => s.Address === address)) return false;
    }
    return true;
  }, 30_000);
  if (!settled) throw new Error(`the cluster did not settle: ${JSON.stringify(conf)}\n${c.diagnostics()}`);
  const w = await c.http(others[0], 'PUT', '/v1/kv/after-leader-removed', 'x', { timeoutMs: 10_000 });
  expect(w.body).toBe('true');
});
