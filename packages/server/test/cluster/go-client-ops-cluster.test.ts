// What Consul's Go client sends, on three real servers (issue 15): a KV put with a uint64 flag and
// a /v1/txn mixing catalog and KV ops, each sent through a follower. The follower's answer is the
// leader's, and every server then holds and reads back the exact same values — the flag's 64 bits
// included (compared as JSON text: a float would lose them). The servers also run with `node_meta`,
// which each server's catalog node carries (a follower's reaches the leader with its ping reply).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness;
let leader: number;
let follower: number;
const dir = mkdtempSync(join(tmpdir(), 'registry-go-ops-'));
beforeAll(async () => {
  const config = join(dir, 'meta.json');
  writeFileSync(config, JSON.stringify({ node_meta: { role: 'registry-server', zone: 'z1' } }));
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-config-file', config] });
  leader = await cluster.waitForLeader(20_000);
  follower = [0, 1, 2].find((i) => i !== leader)!;
});
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Retries `read` until `ok` holds (a stale read on a follower may lag a little), then returns it. */
async function eventually<T>(read: () => Promise<T>, ok: (t: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const t = await read();
    if (ok(t) || Date.now() > deadline) return t;
    await sleep(100);
  }
}

// The Go client's lock flag (api.LockFlagValue) and the largest uint64: both above 2^53.
const LOCK_FLAG = '3304740253564472344';
const MAX_UINT64 = '18446744073709551615';

test('a KV put with a uint64 flag through a follower: every server reads the exact 64-bit value', async () => {
  const put = await cluster.http(follower, 'PUT', `/v1/kv/go/lock?flags=${LOCK_FLAG}`, 'held', { timeoutMs: 10_000 });
  expect(put.status).toBe(200);
  expect(put.body.trim()).toBe('true');
  const viaLeader = await cluster.http(leader, 'GET', '/v1/kv/go/lock');
  expect(viaLeader.status).toBe(200);
  expect(viaLeader.body).toContain(`"Flags":${LOCK_FLAG}`);
  for (const s of [0, 1, 2]) {
    const r = await eventually(() => cluster.http(s, 'GET', '/v1/kv/go/lock?stale'), (r) => r.status === 200);
    expect(r.body).toContain(`"Flags":${LOCK_FLAG}`);
    // Same row everywhere: same indexes, same value.
    const [row] = r.json<{ ModifyIndex: number; Value: string }[]>();
    const [leaderRow] = viaLeader.json<{ ModifyIndex: number; Value: string }[]>();
    expect(row!.ModifyIndex).toBe(leaderRow!.ModifyIndex);
    expect(row!.Value).toBe(b64('held'));
  }
});

test('a catalog txn with a uint64-flag KV op through a follower answers as the leader would, and every server reads it', async () => {
  // Written as text: the flag has no exact JavaScript number.
  const ops = `[
    {"Node": {"Verb": "set", "Node": {"Node": "go-node", "Address": "10.20.0.1", "Meta": {"rack": "r7"}}}},
    {"Service": {"Verb": "set", "Node": "go-node", "Service": {"ID": "redis-1", "Service": "redis", "Port": 6379, "Tags": ["primary"]}}},
    {"Check": {"Verb": "set", "Check": {"Node": "go-node", "CheckID": "redis-alive", "Name": "alive", "Status": "passing", "ServiceID": "redis-1"}}},
    {"KV": {"Verb": "set", "Key": "go/semaphore", "Value": "${b64('1')}", "Flags": ${MAX_UINT64}}}
  ]`;
  const write = await cluster.http(follower, 'PUT', '/v1/txn', ops, { timeoutMs: 10_000 });
  expect(write.status).toBe(200);
  const written = write.json<{ Results: Record<string, { ModifyIndex: number }>[]; Errors: null }>();
  expect(written.Errors).toBeNull();
  const index = written.Results[0]!.Node!.ModifyIndex;
  for (const r of written.Results) expect(Object.values(r)[0]!.ModifyIndex).toBe(index);
  expect(write.body).toContain(`"Flags":${MAX_UINT64}`);

  // The same rows read back with a read-only txn: from the leader, and from every server's own
  // store (?stale) once it has applied the write — one answer, text for text.
  const reads = JSON.stringify([
    { Node: { Verb: 'get', Node: { Node: 'go-node' } } },
    { Service: { Verb: 'get', Node: 'go-node', Service: { ID: 'redis-1' } } },
    { Check: { Verb: 'get', Check: { Node: 'go-node', CheckID: 'redis-alive' } } },
    { KV: { Verb: 'get', Key: 'go/semaphore' } },
  ]);
  const viaLeader = await cluster.http(leader, 'PUT', '/v1/txn', reads);
  expect(viaLeader.status).toBe(200);
  expect(viaLeader.body).toContain(`"Flags":${MAX_UINT64}`);
  const viaFollower = await cluster.http(follower, 'PUT', '/v1/txn', reads);
  expect(viaFollower.body).toBe(viaLeader.body);
  for (const s of [0, 1, 2]) {
    const r = await eventually(() => cluster.http(s, 'PUT', '/v1/txn?stale', reads), (r) => r.status === 200);
    expect(r.body).toBe(viaLeader.body);
  }
  // And through the ordinary endpoints of every server.
  for (const s of [0, 1, 2]) {
    const health = await eventually(() => cluster.http(s, 'GET', '/v1/health/service/redis?passing&stale'), (r) => r.json<unknown[]>().length === 1);
    const [entry] = health.json<{ Node: { Node: string; Meta: Record<string, string> }; Service: { ID: string; Tags: string[] } }[]>();
    expect(entry!.Node).toMatchObject({ Node: 'go-node', Meta: { rack: 'r7' } });
    expect(entry!.Service).toMatchObject({ ID: 'redis-1', Tags: ['primary'] });
    const kv = await cluster.http(s, 'GET', '/v1/kv/go/semaphore?stale');
    expect(kv.body).toContain(`"Flags":${MAX_UINT64}`);
  }
});

test('every server’s catalog node carries its node_meta', async () => {
  for (const s of [0, 1, 2]) {
    const node = await eventually(
      () => cluster.http(leader, 'GET', `/v1/catalog/node/s${s}`),
      (r) => r.json<{ Node: { Meta: Record<string, string> } } | null>()?.Node.Meta.zone === 'z1',
    );
    expect(node.json<{ Node: { Meta: Record<string, string> } }>().Node.Meta).toEqual({ role: 'registry-server', zone: 'z1', 'registry-network-segment': '' });
  }
  const filtered = await cluster.http(follower, 'GET', '/v1/catalog/nodes?node-meta=zone:z1');
  expect(filtered.json<{ Node: string }[]>().map((n) => n.Node).sort()).toEqual(['s0', 's1', 's2']);
});
