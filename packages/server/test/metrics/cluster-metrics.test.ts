// Metrics of a real 3-server cluster: a follower counts what it forwards to the leader (writes,
// reads, leader calls) and the forwards that got no answer; the leader reports when each follower
// last answered it and counts the leaf certificates it signs.
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { valueOf, type Families } from './scrape';

jest.setTimeout(120_000);

let cluster: ClusterHarness;
let leader: number;
let follower: number;

beforeAll(async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  leader = await cluster.waitForLeader(15_000);
  follower = (leader + 1) % 3;
  const ready = await eventually(async () => (await cluster.http(follower, 'PUT', '/v1/kv/ready', 'x')).status === 200, 20_000);
  expect(ready).toBe(true);
});

afterAll(async () => {
  await cluster?.stop();
});

async function metricsOf(i: number): Promise<Families> {
  const res = await cluster.http(i, 'GET', '/v1/agent/metrics?format=prometheus');
  expect(res.status).toBe(200);
  return parsePrometheusTextFormat(res.body);
}

const forwarded = (f: Families, kind: string) => valueOf(f, 'registry_rpc_forwarded_total', { kind })!;

test('the leader reports when each follower last answered; followers report none', async () => {
  const f = await metricsOf(leader);
  expect(valueOf(f, 'registry_server_is_leader')).toBe(1);
  const contacts = f.find((x) => x.name === 'registry_raft_leader_last_contact_seconds')!.metrics;
  expect(contacts).toHaveLength(2);
  for (const c of contacts) {
    expect(c.labels?.peer).toBeTruthy();
    expect(c.labels?.address).toMatch(/^127\.0\.0\.1:\d+$/);
    // Heartbeats go out every tick (50 ms): a generous bound.
    expect(Number(c.value)).toBeLessThan(5);
  }
  const g = await metricsOf(follower);
  expect(valueOf(g, 'registry_server_is_leader')).toBe(0);
  expect(g.find((x) => x.name === 'registry_raft_leader_last_contact_seconds')!.metrics).toEqual([]);
});

test('a follower counts the writes, default reads and leader calls it forwards', async () => {
  await eventually(async () => (await cluster.http(follower, 'GET', '/v1/connect/ca/roots')).status === 200, 15_000);
  const before = await metricsOf(follower);
  const signedBefore = valueOf(await metricsOf(leader), 'registry_ca_leaf_signed_total')!;
  for (let i = 0; i < 3; i++) expect((await cluster.http(follower, 'PUT', `/v1/kv/fwd-${i}`, 'v')).status).toBe(200);
  expect((await cluster.http(follower, 'GET', '/v1/kv/fwd-0')).status).toBe(200);
  expect((await cluster.http(follower, 'GET', '/v1/agent/connect/ca/leaf/fwd-web')).status).toBe(200);
  const after = await metricsOf(follower);
  expect(forwarded(after, 'write') - forwarded(before, 'write')).toBeGreaterThanOrEqual(3);
  // A default read on a follower asks the leader for its commit index (issue #14), or is forwarded whole.
  const reads = (f: Families) => forwarded(f, 'read') + forwarded(f, 'commit-index');
  expect(reads(after) - reads(before)).toBeGreaterThanOrEqual(1);
  expect(forwarded(after, 'leader-call') - forwarded(before, 'leader-call')).toBeGreaterThanOrEqual(1);
  // The leaf was signed on the leader, and counted there.
  expect(valueOf(await metricsOf(leader), 'registry_ca_leaf_signed_total')! - signedBefore).toBe(1);
  // The follower's state machine applied the writes too.
  expect(valueOf(after, 'registry_state_kv_entries')).toBeGreaterThanOrEqual(4);
});

test('a write forwarded to a leader that just died counts a forwarding error, then succeeds through the next leader', async () => {
  const before = await metricsOf(follower);
  await cluster.kill(leader, 'SIGKILL');
  const put = await cluster.http(follower, 'PUT', '/v1/kv/after-leader-died', 'v', { timeoutMs: 15_000 });
  expect(put.status).toBe(200);
  const after = await metricsOf(follower);
  const errors = (f: Families) => valueOf(f, 'registry_rpc_forward_errors_total', { kind: 'write' })!;
  expect(errors(after) - errors(before)).toBeGreaterThanOrEqual(1);
  expect(valueOf(after, 'registry_raft_leader_changes_total')! - valueOf(before, 'registry_raft_leader_changes_total')!).toBeGreaterThanOrEqual(1);
});
