// Issue #28: one set of ACLs for two datacenters. dc1 is the primary (ACLs on, default deny, its
// management token); dc2 names dc1 as `primary_datacenter` and replicates policies and global
// tokens from it with a replication token, over a network area. Everything through HTTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, waitFor } from '../support/dev-agent';
import { freePort } from '../support/ports';
import type { AgentConfig } from '@registry/server';
import { MASTER, startAclAgent, type AclAgent } from '../acl/acl-agent';
import { ClientAgents } from '../cluster/support/client-agents';

jest.setTimeout(120_000);

/** How long a change in the primary may take to be in force in the secondary (measured: well under 1 s here). */
const REPLICATION_BOUND_MS = 10_000;

let dc1: AclAgent | undefined;
let dc2: AclAgent;
/** Secondaries that replicate policies only, so they ask the primary about tokens: down_policy extend-cache and deny. */
let dc3: AclAgent;
let dc4: AclAgent;
/**
 * A secondary with token replication on whose replication token may only read ACLs: policies
 * arrive, global tokens never do (their batch read needs acl:write), yet it holds tokens of its own
 * (Consul's LocalTokensEnabled) — a global token "not replicated yet" that stays so.
 */
let dc5: AclAgent;
/** How long a secondary keeps the primary's answer about a token (acl.token_ttl), short for the test. */
const TOKEN_TTL_MS = 300;
/** dc2 keeps its state here, to be restarted from it. */
const dc2Dir = mkdtempSync(join(tmpdir(), 'acl-replication-'));
let dc2Port: number;

/**
 * A secondary datacenter `dc` of primary dc1, with no master token of its own, replicating policies
 * with `replicationToken` (and global tokens too unless `patch` says otherwise).
 */
function startSecondaryDc(dc: string, replicationToken: string, patch: (c: AgentConfig) => void = () => undefined, noTokenReads = false): Promise<AclAgent> {
  return startAclAgent({
    defaultPolicy: 'deny',
    master: null,
    noTokenReads,
    patch: (c) => {
      c.datacenter = dc;
      c.nodeName = `secondary-${dc}`;
      c.primaryDatacenter = 'dc1';
      c.acl.tokens.replication = replicationToken;
      c.acl.enableTokenReplication = true;
      patch(c);
    },
  });
}

/** The secondary: dc1 is its primary; it replicates policies and global tokens with the primary's management token. */
function startSecondary(): Promise<AclAgent> {
  // It has no master token of its own (the primary's comes by replication).
  return startSecondaryDc('dc2', MASTER, (c) => {
    c.nodeName = 'secondary-1';
    c.dataDir = dc2Dir;
    c.serverPort = dc2Port;
  });
}

const asToken = (t: string) => ({ 'X-Registry-Token': t });

async function replicated(cond: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  await waitFor(cond, REPLICATION_BOUND_MS, 25);
  return Date.now() - started;
}

beforeAll(async () => {
  dc1 = await startAclAgent({ defaultPolicy: 'deny', patch: (c) => void ((c.datacenter = 'dc1'), (c.nodeName = 'primary-1')) });
  dc2Port = await freePort();
  dc2 = await startSecondary();
  // The secondary has no token yet that could make an area there: the primary WAN-joins it, and the
  // secondary links back on its own (docs/areas.md), then replicates the primary's tokens.
  const joined = await dc1!.as(MASTER, 'PUT', `/v1/agent/join/${dc2.agent.self.address}?wan=1`);
  if (joined.status !== 200) throw new Error(`join failed: ${joined.status} ${joined.text}`);
  await replicated(async () => (await dc2.as(MASTER, 'GET', '/v1/acl/token/self')).status === 200);
  const policiesOnly = (dc: string, downPolicy: 'extend-cache' | 'deny') =>
    startSecondaryDc(
      dc,
      MASTER,
      (c) => {
        c.acl.enableTokenReplication = false;
        c.acl.downPolicy = downPolicy;
        c.acl.tokenTtlMs = TOKEN_TTL_MS;
      },
      true,
    );
  const readOnly = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'acl-read', Rules: 'acl = "read"' });
  const replicator = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'read-only replication', Policies: [{ ID: readOnly.json.ID }] })).json.SecretID;
  const tokensNeverArrive = startSecondaryDc('dc5', replicator);
  [dc3, dc4, dc5] = await Promise.all([policiesOnly('dc3', 'extend-cache'), policiesOnly('dc4', 'deny'), tokensNeverArrive]);
  for (const dc of [dc3, dc4, dc5]) {
    const j = await dc1!.as(MASTER, 'PUT', `/v1/agent/join/${dc.agent.self.address}?wan=1`);
    if (j.status !== 200) throw new Error(`join failed: ${j.status} ${j.text}`);
  }
});

afterAll(async () => {
  await Promise.all([dc1?.stop(), dc2?.stop(), dc3?.stop(), dc4?.stop(), dc5?.stop()]);
  rmSync(dc2Dir, { recursive: true, force: true });
});

test('GET /v1/acl/replication: the secondary replicates from dc1 and reports progress; the primary does not replicate', async () => {
  const primary = await dc1!.as(undefined, 'GET', '/v1/acl/replication');
  expect(primary.status).toBe(200);
  expect(primary.json).toEqual({
    Enabled: false,
    Running: false,
    SourceDatacenter: '',
    ReplicationType: '',
    ReplicatedIndex: 0,
    ReplicatedTokenIndex: 0,
    LastSuccess: '0001-01-01T00:00:00Z',
    LastError: '0001-01-01T00:00:00Z',
  });
  await replicated(async () => (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json.ReplicatedTokenIndex > 0);
  const r = (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json;
  expect(r).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1', ReplicationType: 'tokens' });
  expect(r.ReplicatedIndex).toBeGreaterThan(0);
  expect(Date.parse(r.LastSuccess)).toBeGreaterThan(Date.now() - 60_000);
  // Rounds tried before the area linked the datacenters failed ("No path to datacenter"); the last success is later.
  if (r.LastError !== '0001-01-01T00:00:00Z') expect(Date.parse(r.LastSuccess)).toBeGreaterThan(Date.parse(r.LastError));
});

test('GET /v1/acl/replication?dc= is answered by the leader of that datacenter; an unknown dc as any ?dc= read', async () => {
  await replicated(async () => (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json.ReplicatedTokenIndex > 0);
  const dc2FromDc1 = await dc1!.as(undefined, 'GET', '/v1/acl/replication?dc=dc2');
  expect(dc2FromDc1.status).toBe(200);
  expect(dc2FromDc1.json).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1', ReplicationType: 'tokens' });
  expect(dc2FromDc1.json.ReplicatedTokenIndex).toBeGreaterThan(0);
  expect((await dc1!.as(undefined, 'GET', '/v1/acl/replication?dc=dc3')).json).toMatchObject({ Enabled: true, SourceDatacenter: 'dc1', ReplicationType: 'policies' });
  const dc1FromDc2 = await dc2.as(undefined, 'GET', '/v1/acl/replication?dc=dc1');
  expect(dc1FromDc2.status).toBe(200);
  expect(dc1FromDc2.json).toMatchObject({ Enabled: false, Running: false, SourceDatacenter: '', ReplicationType: '' });
  // No token needed, and one the datacenter does not know is no refusal either (Consul checks none).
  expect((await dc1!.as('deadbeef-0000-4000-8000-00000000d00d', 'GET', '/v1/acl/replication?dc=dc2')).json).toMatchObject({ SourceDatacenter: 'dc1' });
  const unknown = await dc1!.as(undefined, 'GET', '/v1/acl/replication?dc=nowhere');
  const other = await dc1!.as(MASTER, 'GET', '/v1/catalog/nodes?dc=nowhere');
  expect([unknown.status, unknown.text]).toEqual([other.status, other.text]);
  expect([unknown.status, unknown.text]).toEqual([500, 'No path to datacenter']);
});

test('a global token the secondary does not hold: read is local, update and delete go to the primary (Consul TokenRead/TokenSet, 1.7 TokenDelete)', async () => {
  await replicated(async () => (await dc5.as(undefined, 'GET', '/v1/acl/replication')).json.ReplicatedIndex > 0);
  expect((await dc5.as(undefined, 'GET', '/v1/acl/replication')).json).toMatchObject({ ReplicationType: 'tokens', ReplicatedTokenIndex: 0 });
  const t = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'never in dc5' })).json;
  // Read where asked: dc5 holds tokens of its own, so it answers from its tables (Consul's TokenRead).
  const read = await dc5.as(MASTER, 'GET', `/v1/acl/token/${t.AccessorID}`);
  expect([read.status, read.text]).toEqual([403, 'ACL not found']);
  // A global token's update is the primary's (Consul's TokenSet).
  const updated = await dc5.as(MASTER, 'PUT', `/v1/acl/token/${t.AccessorID}`, { Description: 'updated through dc5' });
  expect(updated.status).toBe(200);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/token/${t.AccessorID}`)).json.Description).toBe('updated through dc5');
  // Deleted through dc5: in the primary, so it is gone for good (it used to be a no-op `true` in dc5).
  const deleted = await dc5.as(MASTER, 'DELETE', `/v1/acl/token/${t.AccessorID}`);
  expect([deleted.status, deleted.json]).toEqual([200, true]);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/token/${t.AccessorID}`)).status).toBe(403);
  expect((await dc1!.as(t.SecretID, 'GET', '/v1/kv/x')).text).toBe('ACL not found');
  // The request's own token is refused where the deletion happens (the primary), as Consul's TokenDelete.
  const own = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'own', Policies: [{ Name: 'global-management' }] })).json;
  const self = await dc5.as(own.SecretID, 'DELETE', `/v1/acl/token/${own.AccessorID}`);
  expect([self.status, self.text]).toEqual([400, "Deletion of the request's authorization token is not permitted"]);
  // A Local token is deleted in its own datacenter.
  const local = await dc5.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'dc5 only', Local: true });
  expect(local.status).toBe(200);
  expect((await dc5.as(MASTER, 'GET', `/v1/acl/token/${local.json.AccessorID}`)).status).toBe(200);
  expect((await dc5.as(MASTER, 'DELETE', `/v1/acl/token/${local.json.AccessorID}`)).json).toBe(true);
  expect((await dc5.as(MASTER, 'GET', `/v1/acl/token/${local.json.AccessorID}`)).status).toBe(403);
});

test('a policy and a global token made in the primary work in the secondary, also for ?dc= across', async () => {
  const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'kv-app', Rules: 'key_prefix "app/" { policy = "write" }' });
  const t = await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'app', Policies: [{ ID: p.json.ID }] });
  expect(t.status).toBe(200);
  const secret: string = t.json.SecretID;
  // In force at once (dc2 asks dc1 about a token it does not hold yet) …
  expect((await dc2.as(secret, 'PUT', '/v1/kv/app/x', 'v')).json).toBe(true);
  // … and copied into dc2's own tables by replication within the bound.
  const took = await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status === 200);
  console.log(`global token replicated into dc2 ${took} ms after its creation in dc1`);
  expect((await dc2.as(secret, 'PUT', '/v1/kv/other', 'v')).status).toBe(403);
  // The same token, sent from dc1 with ?dc=dc2 and from dc2 with ?dc=dc1.
  expect((await http(dc1!.url, 'PUT', '/v1/kv/app/y?dc=dc2', 'v', asToken(secret))).json).toBe(true);
  expect((await http(dc2.url, 'PUT', '/v1/kv/app/z?dc=dc1', 'v', asToken(secret))).json).toBe(true);
  // The replicated rows carry the primary's identifiers and hashes.
  const there = (await dc2.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).json;
  expect(there).toMatchObject({ AccessorID: t.json.AccessorID, SecretID: secret, Hash: t.json.Hash, Local: false, Policies: [{ ID: p.json.ID, Name: 'kv-app' }] });
});

test('writes of policies and global tokens in the secondary go to the primary; deletions replicate', async () => {
  const p = await dc2.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'made-in-dc2', Rules: 'key_prefix "dc2made/" { policy = "write" }' });
  expect(p.status).toBe(200);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/policy/${p.json.ID}`)).json.Name).toBe('made-in-dc2');
  const t = await dc2.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'global from dc2', Policies: [{ Name: 'made-in-dc2' }] });
  expect(t.status).toBe(200);
  // It exists in the primary at once, and comes back to dc2 by replication.
  expect((await dc1!.as(t.json.SecretID, 'PUT', '/v1/kv/dc2made/a', 'v')).json).toBe(true);
  await replicated(async () => (await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/dc2made/b', 'v')).status === 200);

  // Deleted (through dc2, so in dc1): gone in both.
  expect((await dc2.as(MASTER, 'DELETE', `/v1/acl/token/${t.json.AccessorID}`)).json).toBe(true);
  expect((await dc1!.as(t.json.SecretID, 'GET', '/v1/kv/dc2made/a')).status).toBe(403);
  await replicated(async () => (await dc2.as(t.json.SecretID, 'GET', '/v1/kv/dc2made/a')).text === 'ACL not found');
  expect((await dc2.as(MASTER, 'DELETE', `/v1/acl/policy/${p.json.ID}`)).json).toBe(true);
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/policy/${p.json.ID}`)).status === 403);
});

test('a Local token made in dc2 stays there: it works in dc2, not in dc1, and replication keeps it', async () => {
  const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'kv-local', Rules: 'key_prefix "local/" { policy = "write" }' });
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/policy/${p.json.ID}`)).status === 200);
  const t = await dc2.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'dc2 only', Local: true, Policies: [{ ID: p.json.ID }] });
  expect(t.status).toBe(200);
  expect(t.json.Local).toBe(true);
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/local/a', 'v')).json).toBe(true);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status).toBe(403);
  const inDc1 = await dc1!.as(t.json.SecretID, 'PUT', '/v1/kv/local/a', 'v');
  expect([inDc1.status, inDc1.text]).toEqual([403, 'ACL not found']);
  // Another replication round (a change in dc1) leaves it alone.
  const before = (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json.ReplicatedTokenIndex;
  await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'nudge' });
  await replicated(async () => (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json.ReplicatedTokenIndex > before);
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/local/b', 'v')).json).toBe(true);
});

test("a policy limited to Datacenters: ['dc1'] grants nothing in dc2", async () => {
  const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'only-dc1', Rules: 'key_prefix "scoped/" { policy = "write" }', Datacenters: ['dc1'] });
  const t = await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'scoped', Policies: [{ ID: p.json.ID }] });
  expect((await dc1!.as(t.json.SecretID, 'PUT', '/v1/kv/scoped/a', 'v')).json).toBe(true);
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status === 200);
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/scoped/a', 'v')).status).toBe(403);
  expect((await http(dc1!.url, 'PUT', '/v1/kv/scoped/b?dc=dc2', 'v', asToken(t.json.SecretID))).status).toBe(403);
});

test('legacy tokens are global: made through dc2, they live in dc1 and replicate', async () => {
  const made = await dc2.as(MASTER, 'PUT', '/v1/acl/create', { Name: 'legacy', Rules: 'key "leg" { policy = "write" }' });
  expect(made.status).toBe(200);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/info/${made.json.ID}`)).json[0]).toMatchObject({ Name: 'legacy', Type: 'client' });
  await replicated(async () => (await dc2.as(made.json.ID, 'PUT', '/v1/kv/legacy/x', 'v')).status === 200);
});

test('a secondary replicating policies only asks the primary about tokens it does not hold', async () => {
  expect((await dc3.as(undefined, 'GET', '/v1/acl/replication')).json).toMatchObject({ Enabled: true, SourceDatacenter: 'dc1', ReplicationType: 'policies' });
  const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'remote-kv', Rules: 'key_prefix "remote/" { policy = "write" }' });
  await replicated(async () => (await dc3.as(MASTER, 'GET', `/v1/acl/policy/${p.json.ID}`)).status === 200);
  const t = await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'remote', Policies: [{ ID: p.json.ID }] });
  // At once: the primary answers for it (it is not copied here).
  expect((await dc3.as(t.json.SecretID, 'PUT', '/v1/kv/remote/a', 'v')).json).toBe(true);
  expect((await dc3.as(t.json.SecretID, 'PUT', '/v1/kv/other', 'v')).status).toBe(403);
  // Token reads there are the primary's (dc3 holds no tokens of its own), as Consul's TokenRead.
  expect((await dc3.as(t.json.SecretID, 'GET', '/v1/acl/token/self')).json).toMatchObject({ AccessorID: t.json.AccessorID, Description: 'remote' });
  expect((await dc3.as(MASTER, 'GET', '/v1/acl/tokens')).json.map((x: { AccessorID: string }) => x.AccessorID)).toContain(t.json.AccessorID);
  const unknown = await dc3.as('deadbeef-0000-4000-8000-00000000dead', 'GET', '/v1/kv/remote/a');
  expect([unknown.status, unknown.text]).toEqual([403, 'ACL not found']);
  // Without token replication a secondary holds no tokens of its own: Local tokens are disabled (Consul).
  const local = await dc3.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'local', Local: true, Policies: [{ ID: p.json.ID }] });
  expect([local.status, local.text]).toEqual([400, 'Local tokens are disabled']);
  // Deleted through dc3 (so in the primary): refused here once the kept answer expires.
  expect((await dc3.as(MASTER, 'DELETE', `/v1/acl/token/${t.json.AccessorID}`)).json).toBe(true);
  expect((await dc1!.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status).toBe(403);
  await replicated(async () => (await dc3.as(t.json.SecretID, 'GET', '/v1/kv/remote/a')).status === 403);
});

test('a client agent of that secondary gets a global token resolved at the primary through its servers', async () => {
  const clientDir = mkdtempSync(join(tmpdir(), 'acl-replication-client-'));
  const clients = new ClientAgents(clientDir, [dc3.agent.self.address], {
    datacenter: 'dc3',
    primary_datacenter: 'dc1',
    acl: { enabled: true, default_policy: 'deny', tokens: { agent: MASTER } },
  });
  try {
    const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'client-kv', Rules: 'key_prefix "client/" { policy = "write" }' });
    await replicated(async () => (await dc3.as(MASTER, 'GET', `/v1/acl/policy/${p.json.ID}`)).status === 200);
    const t = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'client', Policies: [{ ID: p.json.ID }] })).json.SecretID;
    await clients.start(1);
    await waitFor(async () => (await clients.http(0, 'GET', `/v1/agent/self?token=${MASTER}`).catch(() => ({ status: 0 }))).status === 200, 30_000, 100);
    expect((await clients.http(0, 'PUT', `/v1/kv/client/a?token=${t}`, 'v')).status).toBe(200);
    expect((await clients.http(0, 'PUT', `/v1/kv/elsewhere?token=${t}`, 'v')).status).toBe(403);
    const unknown = await clients.http(0, 'GET', '/v1/kv/client/a?token=deadbeef-0000-4000-8000-00000000beef');
    expect([unknown.status, unknown.body]).toEqual([403, 'ACL not found']);
    // The replication status through the client: its datacenter's leader's, or that of ?dc=.
    expect(JSON.parse((await clients.http(0, 'GET', '/v1/acl/replication')).body)).toMatchObject({ Enabled: true, SourceDatacenter: 'dc1', ReplicationType: 'policies' });
    expect(JSON.parse((await clients.http(0, 'GET', '/v1/acl/replication?dc=dc1')).body)).toMatchObject({ Enabled: false, ReplicationType: '' });
  } finally {
    await clients.stop();
    rmSync(clientDir, { recursive: true, force: true });
  }
});

test('more tokens than one batch (128) arrive; a change copies that row only, not the rest again', async () => {
  const made: string[] = [];
  for (let i = 0; i < 300; i++) {
    const t = await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: `bulk-${i}` });
    expect(t.status).toBe(200);
    made.push(t.json.AccessorID);
  }
  type Row = { AccessorID: string; Description: string; ModifyIndex: number };
  const rowsInDc2 = async () => new Map(((await dc2.as(MASTER, 'GET', '/v1/acl/tokens')).json as Row[]).map((r) => [r.AccessorID, r]));
  const took = await replicated(async () => {
    const rows = await rowsInDc2();
    return made.every((id) => rows.has(id));
  });
  console.log(`300 global tokens replicated into dc2 ${took} ms after the last was made`);
  const first = await rowsInDc2();
  await dc1!.as(MASTER, 'PUT', `/v1/acl/token/${made[0]}`, { Description: 'bulk-0 changed' });
  await replicated(async () => (await rowsInDc2()).get(made[0]!)?.Description === 'bulk-0 changed');
  const second = await rowsInDc2();
  expect(second.get(made[0]!)!.ModifyIndex).toBeGreaterThan(first.get(made[0]!)!.ModifyIndex);
  for (const id of made.slice(1)) expect(second.get(id)!.ModifyIndex).toBe(first.get(id)!.ModifyIndex);
});

test('a snapshot of the secondary restored into it: replication brings it back in line with the primary (deleted after the save: deleted again; made after: arrives)', async () => {
  const kept = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'in the snapshot, kept' })).json;
  const gone = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'in the snapshot, deleted later' })).json;
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${gone.AccessorID}`)).status === 200);
  const res = await fetch(`${dc2.url}/v1/snapshot`, { headers: { 'X-Registry-Token': MASTER } });
  expect(res.status).toBe(200);
  const saved = Buffer.from(await res.arrayBuffer());
  // After the save: one token deleted in the primary, one made.
  expect((await dc1!.as(MASTER, 'DELETE', `/v1/acl/token/${gone.AccessorID}`)).json).toBe(true);
  const later = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'made after the snapshot' })).json;
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${gone.AccessorID}`)).status === 403);
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${later.AccessorID}`)).status === 200);
  // Restored into the secondary: its tables are the snapshot's, replicated rows included ...
  const restored = await fetch(`${dc2.url}/v1/snapshot`, { method: 'PUT', headers: { 'X-Registry-Token': MASTER }, body: saved });
  expect(restored.status).toBe(200);
  expect((await dc2.as(MASTER, 'GET', `/v1/acl/token/${kept.AccessorID}?stale`)).json.Description).toBe('in the snapshot, kept');
  // ... and the next round (a change in the primary) deletes what the primary deleted and brings what it made.
  await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'nudge after the restore' });
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${gone.AccessorID}`)).status === 403);
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${later.AccessorID}`)).status === 200);
  expect((await dc2.as(gone.SecretID, 'GET', '/v1/kv/x')).text).toBe('ACL not found');
});

// A secondary that ran a while before it was joined to the primary: its rounds failed with "No path
// to datacenter" meanwhile, and each failure doubled the wait before the next (2, 4, 8 s …), so its
// first round came up to a minute after the join. Nothing is sent while no area reaches the
// primary; such a round is tried again every second, without growing the backoff.
test('a secondary joined to the primary 8 s after it started replicates within seconds of the join', async () => {
  const late = await startSecondaryDc('dc6', MASTER);
  try {
    const t = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'for dc6', Policies: [] })).json;
    await new Promise((r) => setTimeout(r, 8_000));
    const joined = await dc1!.as(MASTER, 'PUT', `/v1/agent/join/${late.agent.self.address}?wan=1`);
    expect(joined.status).toBe(200);
    const started = Date.now();
    await waitFor(async () => (await late.as(MASTER, 'GET', `/v1/acl/token/${t.AccessorID}?stale`)).status === 200, 30_000, 50);
    expect(Date.now() - started).toBeLessThan(4_000);
  } finally {
    await late.stop();
  }
});

test('the primary down: the secondary reports the error, keeps resolving replicated tokens, also after a restart', async () => {
  const p = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'survivor', Rules: 'key_prefix "survive/" { policy = "write" }' });
  const t = await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'survivor', Policies: [{ ID: p.json.ID }] });
  await replicated(async () => (await dc2.as(MASTER, 'GET', `/v1/acl/token/${t.json.AccessorID}`)).status === 200);
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/survive/a', 'v')).json).toBe(true);
  const before = (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json;
  expect(Date.parse(before.LastSuccess)).toBeGreaterThan(Date.parse(before.LastError));

  // Tokens dc3 and dc4 asked the primary about before it went away, and one they never saw.
  const q = await dc1!.as(MASTER, 'PUT', '/v1/acl/policy', { Name: 'down', Rules: 'key_prefix "down/" { policy = "write" }' });
  await replicated(async () => (await dc4.as(MASTER, 'GET', `/v1/acl/policy/${q.json.ID}`)).status === 200 && (await dc3.as(MASTER, 'GET', `/v1/acl/policy/${q.json.ID}`)).status === 200);
  const seen = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'seen', Policies: [{ ID: q.json.ID }] })).json.SecretID;
  const unseen = (await dc1!.as(MASTER, 'PUT', '/v1/acl/token', { Description: 'unseen', Policies: [{ ID: q.json.ID }] })).json.SecretID;
  expect((await dc3.as(seen, 'PUT', '/v1/kv/down/a', 'v')).json).toBe(true);
  expect((await dc4.as(seen, 'PUT', '/v1/kv/down/a', 'v')).json).toBe(true);

  await dc1!.stop();
  dc1 = undefined;
  await new Promise((r) => setTimeout(r, TOKEN_TTL_MS * 2));
  // down_policy extend-cache: the kept answer serves on; a token never seen is refused.
  expect((await dc3.as(seen, 'PUT', '/v1/kv/down/b', 'v')).json).toBe(true);
  expect((await dc3.as(unseen, 'PUT', '/v1/kv/down/b', 'v')).status).toBe(403);
  // down_policy deny: once the kept answer has expired, nothing the primary would have to say is allowed.
  expect((await dc4.as(seen, 'PUT', '/v1/kv/down/b', 'v')).status).toBe(403);
  // Tokens a secondary holds itself are not affected (its anonymous token, under default deny).
  expect((await dc4.as(undefined, 'PUT', '/v1/kv/down/b', 'v')).status).toBe(403);
  await replicated(async () => Date.parse((await dc2.as(undefined, 'GET', '/v1/acl/replication')).json.LastError) > Date.parse(before.LastSuccess));
  const status = (await dc2.as(undefined, 'GET', '/v1/acl/replication')).json;
  expect(status).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: 'dc1' });
  expect(Date.parse(status.LastError)).toBeGreaterThanOrEqual(Date.parse(status.LastSuccess));
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/survive/b', 'v')).json).toBe(true);

  // Restarted from its data dir with the primary still down: the replicated tables are its own.
  await dc2.stop();
  dc2 = await startSecondary();
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/survive/c', 'v')).json).toBe(true);
  expect((await dc2.as(t.json.SecretID, 'PUT', '/v1/kv/elsewhere', 'v')).status).toBe(403);
  expect((await dc2.as(MASTER, 'GET', '/v1/kv/survive/c?raw')).text).toBe('v');
});
