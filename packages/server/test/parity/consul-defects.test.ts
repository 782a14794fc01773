// Issue #29's defects seen from outside, each answered as Consul 1.4.5 answers it: the snapshot's
// leader headers and an unknown ?dc=, DebugConfig's LAN address, the Go client's
// autopilot configuration (null durations, a CAS index above 2^53), remove-peer's wording for an
// unknown address, non-canonical paths redirected (Go's ServeMux), and a KV read under default-deny
// that does not tell an anonymous caller whether the key exists.
import { startDevAgent, http, type TestAgent } from '../support/dev-agent';
import { startAclAgent, MASTER, type AclAgent } from '../acl/acl-agent';

describe('a dev agent', () => {
  let a: TestAgent;
  beforeAll(async () => (a = await startDevAgent()));
  afterAll(() => a.stop());

  test("the Go client's autopilot configuration: null durations are zero, as Consul reads a nil ReadableDuration", async () => {
    const body = { CleanupDeadServers: true, LastContactThreshold: null, MaxTrailingLogs: 250, ServerStabilizationTime: null, RedundancyZoneTag: '', DisableUpgradeMigration: false, UpgradeVersionTag: '', CreateIndex: 0, ModifyIndex: 0 };
    const put = await http(a.url, 'PUT', '/v1/operator/autopilot/configuration', body);
    expect(`${put.status} ${put.text}`).toBe('200 true');
    const got = (await http(a.url, 'GET', '/v1/operator/autopilot/configuration')).json;
    expect(got).toMatchObject({ CleanupDeadServers: true, LastContactThreshold: '0s', ServerStabilizationTime: '0s', MaxTrailingLogs: 250 });
  });

  test('a CAS index above 2^53 is a uint64 like any other: it matches nothing, so the write answers false', async () => {
    const huge = '18446744073709551615';
    const ap = await http(a.url, 'PUT', `/v1/operator/autopilot/configuration?cas=${huge}`, { CleanupDeadServers: false });
    expect(`${ap.status} ${ap.text}`).toBe('200 false');
    const kv = await http(a.url, 'PUT', '/v1/kv/cas-huge?cas=9007199254740993', 'v');
    expect(`${kv.status} ${kv.text}`).toBe('200 false');
    expect((await http(a.url, 'GET', '/v1/kv/cas-huge')).status).toBe(404);
    // Still refused when it is no uint64 at all.
    expect((await http(a.url, 'PUT', `/v1/kv/cas-huge?cas=${huge}0`, 'v')).status).toBe(400);
  });

  test("remove-peer of an address not in the configuration says so in Consul's words", async () => {
    const r = await http(a.url, 'DELETE', '/v1/operator/raft/peer?address=10.9.9.9:8300');
    expect(`${r.status} ${r.text}`).toBe('400 address "10.9.9.9:8300" was not found in the Raft configuration');
    const byId = await http(a.url, 'DELETE', '/v1/operator/raft/peer?id=no-such-id');
    expect(`${byId.status} ${byId.text}`).toBe('400 id "no-such-id" was not found in the Raft configuration');
  });

  test("GET /v1/snapshot says when it last heard from the leader (Go's client reads KnownLeader from it); an unknown ?dc= is Consul's error", async () => {
    const r = await fetch(`${a.url}/v1/snapshot`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-registry-knownleader')).toBe('true');
    expect(r.headers.get('x-registry-lastcontact')).toBe('0');
    await r.arrayBuffer();
    const stale = await fetch(`${a.url}/v1/snapshot?stale`);
    expect(stale.headers.get('x-registry-lastcontact')).toMatch(/^\d+$/);
    await stale.arrayBuffer();
    const elsewhere = await http(a.url, 'GET', '/v1/snapshot?dc=nowhere');
    expect(`${elsewhere.status} ${elsewhere.text.trim()}`).toBe('500 No path to datacenter');
    const restore = await http(a.url, 'PUT', '/v1/snapshot?dc=nowhere', 'not an archive');
    expect(`${restore.status} ${restore.text.trim()}`).toBe('500 No path to datacenter');
  });

  test("/v1/agent/self's DebugConfig names the LAN address to join the agent by, as Consul's (tcp://host:port)", async () => {
    const self = (await http(a.url, 'GET', '/v1/agent/self')).json;
    const lan = self.DebugConfig.SerfAdvertiseAddrLAN as string;
    const member = ((await http(a.url, 'GET', '/v1/agent/members')).json as { Addr: string; Port: number }[])[0]!;
    expect(lan).toBe(`tcp://${member.Addr}:${member.Port}`);
    // What Go's API test does with it: join the agent to itself by that address.
    const join = await http(a.url, 'PUT', `/v1/agent/join/${lan.replace('tcp://', '')}`);
    expect(join.status).toBe(200);
  });

  test('a path with a doubled slash or dot segments is redirected to the clean one, whatever the method', async () => {
    expect((await http(a.url, 'PUT', '/v1/kv/app/x', 'stored')).text).toBe('true');
    const redirect = await fetch(`${a.url}/v1/kv//app/./x?raw`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/v1/kv/app/x?raw');
    // A client that follows it reads the key.
    expect(await (await fetch(`${a.url}/v1/kv//app/x?raw`)).text()).toBe('stored');
    // A write to `//y` is never a key `/y`.
    const put = await fetch(`${a.url}/v1/kv//y`, { method: 'PUT', body: 'v', redirect: 'manual' });
    expect(put.status).toBe(301);
    expect(put.headers.get('location')).toBe('/v1/kv/y');
    const keys = (await http(a.url, 'GET', '/v1/kv/?keys')).json as string[];
    expect(keys.filter((k) => k.startsWith('/'))).toEqual([]);
    // A trailing slash is kept (a "folder" key), as net/http's cleanPath keeps it.
    const folder = await fetch(`${a.url}/v1/kv//dir/`, { method: 'PUT', redirect: 'manual' });
    expect(folder.headers.get('location')).toBe('/v1/kv/dir/');
  });
});

describe('ACLs on, default deny', () => {
  let a: AclAgent;
  beforeAll(async () => (a = await startAclAgent({ defaultPolicy: 'deny' })));
  afterAll(() => a.stop());

  test('an anonymous read of a key answers 403 whether or not the key exists', async () => {
    expect((await a.as(MASTER, 'PUT', '/v1/kv/secret/present', 'v')).status).toBe(200);
    const present = await a.as(undefined, 'GET', '/v1/kv/secret/present');
    const missing = await a.as(undefined, 'GET', '/v1/kv/secret/missing');
    expect([present.status, missing.status]).toEqual([403, 403]);
    expect(missing.text).toBe(present.text);
    // With the right to read, a missing key is still a 404.
    expect((await a.as(MASTER, 'GET', '/v1/kv/secret/missing')).status).toBe(404);
  });
});

describe('under consul_compat, what Consul tools read from the agent', () => {
  let a: TestAgent;
  beforeAll(async () => (a = await startDevAgent((c) => (c.consulCompat = true))));
  afterAll(() => a.stop());

  test("/v1/agent/self reports the Consul version implemented, and Stats as Consul's map of strings", async () => {
    const self = (await http(a.url, 'GET', '/v1/agent/self')).json;
    expect(self.Config).toMatchObject({ Version: '1.4.5', Revision: expect.stringMatching(/^registry-/) });
    for (const [section, values] of Object.entries(self.Stats as Record<string, Record<string, unknown>>)) {
      for (const [k, v] of Object.entries(values)) expect({ section, k, type: typeof v }).toEqual({ section, k, type: 'string' });
    }
    expect(self.Stats.build.version).toBe('1.4.5');
    expect(self.Member.Tags.role).toBe('consul');
  });

  test("members: a server's role tag is consul, which `consul members` shows as a server", async () => {
    const members = (await http(a.url, 'GET', '/v1/agent/members')).json as { Tags: { role: string } }[];
    expect(members.map((m) => m.Tags.role)).toEqual(['consul']);
  });
});

describe('without consul_compat', () => {
  let a: TestAgent;
  beforeAll(async () => (a = await startDevAgent()));
  afterAll(() => a.stop());

  test("registry names itself: role registry, its own version, Stats as they are", async () => {
    const self = (await http(a.url, 'GET', '/v1/agent/self')).json;
    expect(self.Config.Version).not.toBe('1.4.5');
    expect(self.Member.Tags.role).toBe('registry');
    expect(typeof self.Stats.raft.term).toBe('number');
  });
});
