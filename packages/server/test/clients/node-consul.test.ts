// Acceptance: the stock node-consul client (npm `consul@2.0.1`) against a dev agent with ACLs on
// (default deny). Every call goes through the client; the only adaptation is client-side — the
// token in an `x-registry-token` default header and an onResponse hook aliasing X-Registry-*
// response headers to X-Consul-* (registry-consul.ts, shown in docs/clients.md).
import Consul from 'consul';
import { startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { queryMeta, registryConsul, withResponse } from './registry-consul';

const ROOT = 'c0ffee00-0000-4000-8000-00000000c11e';

let t: TestAgent;
let consul: Consul;
/** node-consul's typings omit the common query options (index, wait, ctx); the calls accept them. */
let call: any;

/**
 * kv.set's own answer, `true` or `false`. A plain `kv.set` resolves `false` to `undefined` (papi
 * treats a falsy result as "no result"), so a refused write is read with the response attached.
 */
async function setAnswer(options: Record<string, unknown>): Promise<unknown> {
  const [, answer] = await call.kv.set({ ...options, ctx: withResponse() });
  return answer;
}

beforeAll(async () => {
  t = await startDevAgent((c) => {
    c.acl.enabled = true;
    c.acl.defaultPolicy = 'deny';
    c.acl.tokens.initialManagement = ROOT;
  });
  consul = registryConsul('127.0.0.1', t.agent.httpPort, ROOT);
  call = consul;
  // The management token exists once the leader has bootstrapped ACLs.
  await waitFor(async () => (await consul.agent.self()) !== undefined, 10_000);
});
afterAll(async () => {
  consul?.destroy();
  await t?.stop();
});

test('without the x-registry-token header the same client is refused (the header carries the token)', async () => {
  const anonymous = registryConsul('127.0.0.1', t.agent.httpPort);
  try {
    await expect(anonymous.kv.set('denied', 'x')).rejects.toMatchObject({ statusCode: 403 });
  } finally {
    anonymous.destroy();
  }
});

describe('kv', () => {
  test('set, get, keys and del, including keys with "/" (node-consul sends them as %2F)', async () => {
    expect(await consul.kv.set('plain', 'one')).toBe(true);
    expect(await consul.kv.set('app/db/url', 'postgres://db')).toBe(true);
    expect(await consul.kv.set({ key: 'app/db/pool', value: '8', flags: 3 })).toBe(true);
    expect(await consul.kv.set('app/name', 'shop')).toBe(true);

    expect(await consul.kv.get('plain')).toMatchObject({ Key: 'plain', Value: 'one', Flags: 0, LockIndex: 0 });
    expect(await consul.kv.get('app/db/pool')).toMatchObject({ Key: 'app/db/pool', Value: '8', Flags: 3 });
    expect(await consul.kv.get('absent')).toBeUndefined();

    expect(await consul.kv.get({ key: 'app/', recurse: true })).toEqual([
      expect.objectContaining({ Key: 'app/db/pool', Value: '8' }),
      expect.objectContaining({ Key: 'app/db/url', Value: 'postgres://db' }),
      expect.objectContaining({ Key: 'app/name', Value: 'shop' }),
    ]);
    expect(await consul.kv.keys('app/')).toEqual(['app/db/pool', 'app/db/url', 'app/name']);
    expect(await consul.kv.keys({ key: 'app/', separator: '/' })).toEqual(['app/db/', 'app/name']);

    expect(await consul.kv.del('app/db/url')).toBe(true);
    expect(await consul.kv.get('app/db/url')).toBeUndefined();
    expect(await consul.kv.del({ key: 'app/', recurse: true })).toBe(true);
    expect(await consul.kv.keys('app/').catch((e: { statusCode?: number }) => e.statusCode)).toBe(404);
  });

  test('check-and-set: a stale cas index is refused, the current one accepted', async () => {
    await consul.kv.set('cas/key', 'v1');
    const entry = (await consul.kv.get('cas/key'))!;
    expect(await setAnswer({ key: 'cas/key', value: 'v2', cas: entry.ModifyIndex - 1 })).toBe(false);
    expect((await consul.kv.get('cas/key'))!.Value).toBe('v1');
    expect(await consul.kv.set({ key: 'cas/key', value: 'v2', cas: entry.ModifyIndex })).toBe(true);
    expect((await consul.kv.get('cas/key'))!.Value).toBe('v2');
  });
});

describe('catalog and health', () => {
  beforeAll(async () => {
    await consul.catalog.register({
      node: 'web-1',
      address: '10.0.0.1',
      service: { id: 'web-a', service: 'web', port: 80, tags: ['v1'] },
      check: { checkid: 'web-alive', name: 'alive', serviceid: 'web-a', status: 'passing' },
    });
    await consul.catalog.register({
      node: 'web-2',
      address: '10.0.0.2',
      service: { id: 'web-b', service: 'web', port: 81 },
      check: { checkid: 'web-alive', name: 'alive', serviceid: 'web-b', status: 'critical' },
    });
  });

  test('nodes lists the registered nodes beside the agent', async () => {
    const nodes = await consul.catalog.nodes({});
    expect(nodes.map((n: { Node: string }) => n.Node).sort()).toEqual(['test-agent', 'web-1', 'web-2']);
    expect(nodes.find((n: { Node: string }) => n.Node === 'web-1')).toMatchObject({ Address: '10.0.0.1' });
  });

  test('services maps names to tags; service nodes lists the instances', async () => {
    expect(await consul.catalog.services()).toMatchObject({ web: ['v1'] });
    const instances = await consul.catalog.service.nodes('web');
    expect(instances.map((s: { ServiceID: string; ServicePort: number }) => [s.ServiceID, s.ServicePort]).sort()).toEqual([
      ['web-a', 80],
      ['web-b', 81],
    ]);
    expect(await consul.catalog.service.nodes({ service: 'web', tag: 'v1' })).toEqual([expect.objectContaining({ Node: 'web-1' })]);
  });

  test('health service with passing keeps only instances whose checks all pass', async () => {
    expect(await consul.health.service('web')).toHaveLength(2);
    const passing = await consul.health.service({ service: 'web', passing: true });
    expect(passing).toHaveLength(1);
    expect(passing[0]).toMatchObject({ Node: { Node: 'web-1' }, Service: { ID: 'web-a', Port: 80 } });
    expect(passing[0].Checks.map((c: { CheckID: string; Status: string }) => [c.CheckID, c.Status])).toContainEqual(['web-alive', 'passing']);
  });
});

describe('agent and status', () => {
  test('members lists this agent alive; self describes it', async () => {
    const members = await consul.agent.members();
    expect(members).toEqual([expect.objectContaining({ Name: 'test-agent', Addr: '127.0.0.1', Status: 1 })]);
    const self = await consul.agent.self();
    expect(self).toMatchObject({ Config: expect.objectContaining({ NodeName: 'test-agent', Datacenter: 'dc1' }) });
    expect(self).toHaveProperty('Member.Name', 'test-agent');
  });

  test('leader is this server and peers holds only it', async () => {
    const leader = await consul.status.leader();
    expect(leader).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await consul.status.peers()).toEqual([leader]);
  });
});

describe('sessions and locks', () => {
  test('create, info and destroy a session', async () => {
    const { ID } = await consul.session.create({ name: 'worker', ttl: '30s', behavior: 'release' });
    expect(ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await consul.session.info(ID)).toMatchObject({ ID, Name: 'worker', Node: 'test-agent', TTL: '30s', Behavior: 'release' });
    // node-consul discards destroy's body and resolves with nothing; the session is gone after it.
    await consul.session.destroy(ID);
    expect(await consul.session.info(ID)).toBeUndefined();
    expect((await consul.session.list()).map((s) => s.ID)).not.toContain(ID);
  });

  test('a lock is acquired via kv set with acquire, refused to a second session, then released', async () => {
    const a = (await consul.session.create({ name: 'a', lockdelay: '0s' })).ID;
    const b = (await consul.session.create({ name: 'b', lockdelay: '0s' })).ID;
    try {
      expect(await consul.kv.set({ key: 'locks/leader', value: 'a', acquire: a })).toBe(true);
      expect(await consul.kv.get('locks/leader')).toMatchObject({ Value: 'a', LockIndex: 1, Session: a });
      expect(await setAnswer({ key: 'locks/leader', value: 'b', acquire: b })).toBe(false);
      expect(await consul.kv.get('locks/leader')).toMatchObject({ Value: 'a', Session: a });

      expect(await consul.kv.set({ key: 'locks/leader', value: 'a', release: a })).toBe(true);
      const released = await consul.kv.get('locks/leader');
      expect(released).not.toHaveProperty('Session');
      expect(await consul.kv.set({ key: 'locks/leader', value: 'b', acquire: b })).toBe(true);
      expect(await consul.kv.get('locks/leader')).toMatchObject({ Value: 'b', LockIndex: 2, Session: b });
    } finally {
      await consul.session.destroy(a);
      await consul.session.destroy(b);
    }
  });
});

describe('blocking reads and watches (need the aliased index header)', () => {
  test('a blocking kv.get with index and wait returns once the key is written, with a higher index', async () => {
    await consul.kv.set('block/key', 'before');
    const [first] = await call.kv.get({ key: 'block/key', ctx: withResponse() });
    const meta = queryMeta(first);
    expect(meta).toMatchObject({ KnownLeader: true, LastContact: 0 });
    const index = BigInt(meta.LastIndex!);
    expect(index).toBeGreaterThan(0n);

    const started = Date.now();
    const blocked = call.kv.get({ key: 'block/key', index: index.toString(), wait: '10s', ctx: withResponse() });
    await new Promise((r) => setTimeout(r, 300));
    await consul.kv.set('block/key', 'after');
    const [res, entry] = await blocked;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(entry).toMatchObject({ Value: 'after' });
    expect(BigInt(queryMeta(res).LastIndex!)).toBeGreaterThan(index);
  });

  test('a blocking kv.get with nothing written returns after wait with the same index', async () => {
    await consul.kv.set('block/quiet', 'x');
    const [first] = await call.kv.get({ key: 'block/quiet', ctx: withResponse() });
    const index = queryMeta(first).LastIndex;
    const started = Date.now();
    const [res, entry] = await call.kv.get({ key: 'block/quiet', index, wait: '400ms', ctx: withResponse() });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(entry).toMatchObject({ Value: 'x' });
    expect(queryMeta(res).LastIndex).toBe(index);
  });

  test('consul.watch on a key not written yet emits "absent" (a 404 that still carries an index), then the value', async () => {
    const seen: Array<string | undefined> = [];
    const errors: unknown[] = [];
    const watch = consul.watch({ method: consul.kv.get, options: { key: 'watched/later', wait: '2s' } });
    watch.on('change', (data: { Value: string } | undefined) => seen.push(data?.Value));
    watch.on('error', (err: unknown) => errors.push(err));
    try {
      await waitFor(() => seen.length === 1, 5_000);
      await consul.kv.set('watched/later', 'here');
      await waitFor(() => seen.length === 2, 5_000);
    } finally {
      watch.end();
    }
    expect(seen).toEqual([undefined, 'here']);
    expect(errors).toEqual([]);
  });

  test('consul.watch on health.service (passing) fires when an instance starts passing', async () => {
    const register = (status: 'passing' | 'critical') =>
      consul.catalog.register({
        node: 'api-1',
        address: '10.0.1.1',
        service: { id: 'api-1', service: 'api', port: 9000 },
        check: { checkid: 'api-alive', name: 'alive', serviceid: 'api-1', status },
      });
    await register('critical');
    const seen: number[] = [];
    const errors: unknown[] = [];
    const watch = consul.watch({ method: consul.health.service, options: { service: 'api', passing: 'true', wait: '2s' } });
    watch.on('change', (data: unknown[]) => seen.push(data.length));
    watch.on('error', (err: unknown) => errors.push(err));
    try {
      await waitFor(() => seen.length === 1, 5_000);
      await register('passing');
      await waitFor(() => seen.length === 2, 5_000);
    } finally {
      watch.end();
    }
    expect(seen).toEqual([0, 1]);
    expect(errors).toEqual([]);
  });

  test('consul.watch on a key emits the current value, then each change, and stops when ended', async () => {
    await consul.kv.set('watched/key', 'v1');
    const seen: string[] = [];
    const errors: unknown[] = [];
    const watch = consul.watch({ method: consul.kv.get, options: { key: 'watched/key', wait: '2s' } });
    watch.on('change', (data: { Value: string } | undefined) => seen.push(data?.Value ?? '<none>'));
    watch.on('error', (err: unknown) => errors.push(err));
    try {
      await waitFor(() => seen.length === 1, 5_000);
      await consul.kv.set('watched/key', 'v2');
      await waitFor(() => seen.length === 2, 5_000);
      await consul.kv.set('watched/key', 'v3');
      await waitFor(() => seen.length === 3, 5_000);
    } finally {
      watch.end();
    }
    expect(seen).toEqual(['v1', 'v2', 'v3']);
    expect(errors).toEqual([]);
    expect(watch.isRunning()).toBe(false);
    // A write after end() is not observed.
    await consul.kv.set('watched/key', 'v4');
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual(['v1', 'v2', 'v3']);
  });
});
