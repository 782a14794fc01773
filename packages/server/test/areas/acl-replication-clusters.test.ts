// Issue #28 with real processes: two datacenters of three servers each, joined as docs/areas.md says
// (a WAN join from the primary). dc2 replicates dc1's policies and global tokens; requests enter
// through followers (forwarded to the leader of their datacenter, or across); dc2's leader is killed
// and the new one takes replication over.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { waitFor } from '../support/dev-agent';

jest.setTimeout(240_000);

const ROOT = 'c0ffee00-0000-4000-8000-0000000dc001';
const auth = (token: string) => ({ headers: { 'X-Registry-Token': token } });
/** Bound for a change in dc1 to be in dc2's tables on every dc2 server (measured and printed). */
const BOUND_MS = 15_000;

let dir: string;
let dc1: ClusterHarness;
let dc2: ClusterHarness;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-acl-dcs-'));
  const primary = join(dir, 'dc1.json');
  const secondary = join(dir, 'dc2.json');
  writeFileSync(primary, JSON.stringify({ acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } }));
  writeFileSync(
    secondary,
    JSON.stringify({ primary_datacenter: 'dc1', acl: { enabled: true, default_policy: 'deny', enable_token_replication: true, tokens: { replication: ROOT } } }),
  );
  [dc1, dc2] = await Promise.all([
    ClusterHarness.start({ size: 3, extraArgs: ['-datacenter', 'dc1', '-config-file', primary] }),
    ClusterHarness.start({ size: 3, extraArgs: ['-datacenter', 'dc2', '-config-file', secondary] }),
  ]);
  await Promise.all([dc1.waitForLeader(30_000), dc2.waitForLeader(30_000)]);
  await waitFor(async () => (await dc1.http(0, 'GET', '/v1/acl/token/self', undefined, auth(ROOT))).status === 200, 30_000);
  const joined = await dc1.http(0, 'PUT', `/v1/agent/join/${dc2.servers[0]!.serverAddress}?wan=1`, undefined, auth(ROOT));
  if (joined.status !== 200) throw new Error(`WAN join: ${joined.status} ${joined.body}`);
  // The primary's management token reaches every dc2 server by replication.
  await waitFor(async () => {
    for (const i of [0, 1, 2]) if ((await dc2.http(i, 'GET', '/v1/acl/token/self', undefined, auth(ROOT))).status !== 200) return false;
    return true;
  }, 60_000);
});

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function followerOf(c: ClusterHarness): Promise<number> {
  const leader = await c.waitForLeader(30_000);
  return [0, 1, 2].find((i) => i !== leader && c.running(i))!;
}

/** Wait until token `accessor` is in the tables of every running dc2 server; answers the ms it took. */
function inDc2Tables(accessor: string, present = true): Promise<number> {
  return rowInDc2Tables(`/v1/acl/token/${accessor}`, present);
}

async function rowInDc2Tables(path: string, present = true): Promise<number> {
  const started = Date.now();
  await waitFor(async () => {
    for (const i of [0, 1, 2]) {
      if (!dc2.running(i)) continue;
      const r = await dc2.http(i, 'GET', `${path}?stale`, undefined, auth(ROOT));
      if ((r.status === 200) !== present) return false;
    }
    return true;
  }, BOUND_MS, 50);
  return Date.now() - started;
}

test('a policy and a global token made through a dc1 follower work on every dc2 server and across ?dc=', async () => {
  const f1 = await followerOf(dc1);
  const p = await dc1.http(f1, 'PUT', '/v1/acl/policy', { Name: 'svc-web', Rules: 'service_prefix "web" { policy = "write" }\nnode_prefix "" { policy = "write" }' }, auth(ROOT));
  expect(p.status).toBe(200);
  const t = await dc1.http(f1, 'PUT', '/v1/acl/token', { Description: 'web', Policies: [{ ID: p.json<{ ID: string }>().ID }] }, auth(ROOT));
  const { SecretID: secret, AccessorID: accessor } = t.json<{ SecretID: string; AccessorID: string }>();
  const took = await inDc2Tables(accessor);
  console.log(`three-server datacenters: global token on every dc2 server ${took} ms after its creation`);
  const policyTook = await rowInDc2Tables(`/v1/acl/policy/${p.json<{ ID: string }>().ID}`);
  console.log(`three-server datacenters: its policy on every dc2 server ${policyTook} ms later`);
  const reg = { Node: 'web-node', Address: '10.0.0.9', Service: { Service: 'web', Port: 80 } };
  for (const i of [0, 1, 2]) {
    expect((await dc2.http(i, 'PUT', '/v1/catalog/register', reg, auth(secret))).status).toBe(200);
    expect((await dc2.http(i, 'PUT', '/v1/catalog/register', { ...reg, Service: { Service: 'db' } }, auth(secret))).status).toBe(403);
  }
  expect((await dc1.http(f1, 'PUT', '/v1/catalog/register?dc=dc2', reg, auth(secret))).status).toBe(200);
  const f2 = await followerOf(dc2);
  expect((await dc2.http(f2, 'PUT', '/v1/catalog/register?dc=dc1', reg, auth(secret))).status).toBe(200);
  // Every dc2 server reports the leader's replication.
  for (const i of [0, 1, 2]) {
    const r = (await dc2.http(i, 'GET', '/v1/acl/replication')).json<Record<string, unknown>>();
    expect(r).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1', ReplicationType: 'tokens' });
    expect(r.ReplicatedTokenIndex as number).toBeGreaterThan(0);
  }
});

test('a Local token made through a dc2 follower works on every dc2 server and not in dc1', async () => {
  const f2 = await followerOf(dc2);
  const p = await dc1.http(0, 'PUT', '/v1/acl/policy', { Name: 'kv-local', Rules: 'key_prefix "loc/" { policy = "write" }' }, auth(ROOT));
  expect(p.status).toBe(200);
  const id = p.json<{ ID: string }>().ID;
  await waitFor(async () => (await dc2.http(f2, 'GET', `/v1/acl/policy/${id}?stale`, undefined, auth(ROOT))).status === 200, BOUND_MS);
  const t = await dc2.http(f2, 'PUT', '/v1/acl/token', { Description: 'local', Local: true, Policies: [{ ID: id }] }, auth(ROOT));
  expect(t.status).toBe(200);
  const secret = t.json<{ SecretID: string }>().SecretID;
  for (const i of [0, 1, 2]) expect((await dc2.http(i, 'PUT', `/v1/kv/loc/${i}`, 'v', auth(secret))).status).toBe(200);
  for (const i of [0, 1, 2]) expect((await dc1.http(i, 'PUT', '/v1/kv/loc/x', 'v', auth(secret))).status).toBe(403);
});

test("dc2's leader killed: the new leader goes on replicating, deletions included", async () => {
  const old = await dc2.waitForLeader(30_000);
  await dc2.kill(old);
  const t = await dc1.http(0, 'PUT', '/v1/acl/token', { Description: 'after failover' }, auth(ROOT));
  const accessor = t.json<{ AccessorID: string }>().AccessorID;
  const took = await inDc2Tables(accessor);
  console.log(`after dc2's leader was killed: replicated in ${took} ms`);
  const leader = await dc2.waitForLeader(30_000);
  expect(leader).not.toBe(old);
  expect((await dc2.http(leader, 'GET', '/v1/acl/replication')).json<Record<string, unknown>>()).toMatchObject({ Running: true, SourceDatacenter: 'dc1' });
  expect((await dc1.http(0, 'DELETE', `/v1/acl/token/${accessor}`, undefined, auth(ROOT))).status).toBe(200);
  await inDc2Tables(accessor, false);
});

test("a policy with Datacenters: ['dc1'] grants nothing on any dc2 server", async () => {
  const p = await dc1.http(0, 'PUT', '/v1/acl/policy', { Name: 'only-dc1', Rules: 'key_prefix "scoped/" { policy = "write" }', Datacenters: ['dc1'] }, auth(ROOT));
  const t = await dc1.http(0, 'PUT', '/v1/acl/token', { Description: 'scoped', Policies: [{ ID: p.json<{ ID: string }>().ID }] }, auth(ROOT));
  const { SecretID: secret, AccessorID: accessor } = t.json<{ SecretID: string; AccessorID: string }>();
  expect((await dc1.http(0, 'PUT', '/v1/kv/scoped/a', 'v', auth(secret))).status).toBe(200);
  await inDc2Tables(accessor);
  for (const i of [0, 1, 2]) if (dc2.running(i)) expect((await dc2.http(i, 'PUT', '/v1/kv/scoped/a', 'v', auth(secret))).status).toBe(403);
  expect((await dc1.http(0, 'PUT', '/v1/kv/scoped/b?dc=dc2', 'v', auth(secret))).status).toBe(403);
});

// Last: it stops the primary for good.
test('the primary down: every dc2 server, all restarted, still resolves the replicated tokens', async () => {
  const p = await dc1.http(0, 'PUT', '/v1/acl/policy', { Name: 'survivor', Rules: 'key_prefix "survive/" { policy = "write" }' }, auth(ROOT));
  expect(p.status).toBe(200);
  const t = await dc1.http(0, 'PUT', '/v1/acl/token', { Description: 'survivor', Policies: [{ ID: p.json<{ ID: string }>().ID }] }, auth(ROOT));
  const { SecretID: secret, AccessorID: accessor } = t.json<{ SecretID: string; AccessorID: string }>();
  // The token and its policy (two replication loops) are here before the primary goes.
  await inDc2Tables(accessor);
  await rowInDc2Tables(`/v1/acl/policy/${p.json<{ ID: string }>().ID}`);
  await Promise.all([0, 1, 2].map((i) => dc1.kill(i)));
  await Promise.all([0, 1, 2].map((i) => dc2.kill(i)));
  for (const i of [0, 1, 2]) await dc2.restart(i);
  await dc2.waitForLeader(60_000);
  for (const i of [0, 1, 2]) {
    await waitFor(async () => (await dc2.http(i, 'PUT', `/v1/kv/survive/${i}`, 'v', auth(secret))).status === 200, 30_000);
    expect((await dc2.http(i, 'PUT', '/v1/kv/elsewhere', 'v', auth(secret))).status).toBe(403);
  }
  const status = (await dc2.http(0, 'GET', '/v1/acl/replication')).json<Record<string, unknown>>();
  expect(status).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1' });
});
