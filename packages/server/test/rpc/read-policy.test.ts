// Each read endpoint declares its own forwarding, blocking and sharing (`read({ forward, blocking,
// reuse, run })` in endpoints/<area>-reads.ts); rpc/ carries the policy out without naming any
// endpoint. Pinned here: what each policy does to a request's options, that the table says what the
// spec asks of the endpoints whose policy is not the ordinary read's, and that it shows over HTTP.
import { RegistryError } from '../../src/errors';
import { applyReadPolicy, ORDINARY_READ, read } from '../../src/rpc/read-endpoint';
import type { QueryOptions } from '../../src/rpc/query-options';
import { readEndpoints } from '../../src/endpoints';
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

const asked: QueryOptions = {
  datacenter: 'dc1',
  token: 't',
  consistency: 'consistent',
  cached: false,
  minIndex: 42,
  waitMs: 5_000,
  cacheControl: { mustRevalidate: false },
};

describe('applyReadPolicy', () => {
  test('the ordinary read runs as the request asks (same options, untouched)', () => {
    expect(applyReadPolicy(ORDINARY_READ, 'x.y', asked, 'dc1')).toBe(asked);
    expect(applyReadPolicy(ORDINARY_READ, 'x.y', { ...asked, datacenter: 'dc2' }, 'dc1').datacenter).toBe('dc2');
  });

  test('a non-blocking read ignores ?index, nothing else', () => {
    const opts = applyReadPolicy({ ...ORDINARY_READ, blocking: false }, 'x.y', asked, 'dc1');
    expect(opts).toEqual({ ...asked, minIndex: 0 });
    expect(asked.minIndex).toBe(42);
  });

  test.each(['stale', 'consistent', 'default'] as const)('a leader read asked %s runs in default mode (the leader’s freshness)', (consistency) => {
    expect(applyReadPolicy({ ...ORDINARY_READ, forward: 'leader' }, 'x.y', { ...asked, consistency }, 'dc1').consistency).toBe('default');
  });

  test('a local read is served stale from this server and refuses another datacenter with a 400 kind', () => {
    expect(applyReadPolicy({ ...ORDINARY_READ, forward: 'local' }, 'x.y', asked, 'dc1').consistency).toBe('stale');
    let err: unknown;
    try {
      applyReadPolicy({ ...ORDINARY_READ, forward: 'local' }, 'event.list', { ...asked, datacenter: 'dc2' }, 'dc1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).kind).toBe('BadRequest');
    expect((err as RegistryError).message).toBe('event.list is local to the agent: dc is not supported');
  });
});

describe('read()', () => {
  test('the ordinary read unless told otherwise, frozen', () => {
    const run = () => ({ index: 1, value: 'v', keys: [] });
    const plain = read({ run });
    expect({ ...plain }).toEqual({ run, ...ORDINARY_READ });
    expect(Object.isFrozen(plain)).toBe(true);
    const special = read({ run, forward: 'leader', blocking: false, reuse: true });
    expect([special.forward, special.blocking, special.reuse]).toEqual(['leader', false, true]);
  });
});

describe('the endpoint table', () => {
  const policy = (name: string) => {
    const e = readEndpoints[name];
    return { forward: e.forward, blocking: e.blocking, reuse: e.reuse };
  };

  test('every endpoint has a closure and a known policy', () => {
    for (const [name, e] of Object.entries(readEndpoints)) {
      expect([name, typeof e.run]).toEqual([name, 'function']);
      expect(['by-consistency', 'leader', 'local']).toContain(e.forward);
      expect(typeof e.blocking).toBe('boolean');
      expect(typeof e.reuse).toBe('boolean');
    }
  });

  test('session renew is the leader’s and never blocks; the event ring is the agent’s own', () => {
    expect(policy('session.renew')).toEqual({ forward: 'leader', blocking: false, reuse: false });
    expect(policy('event.list')).toEqual({ forward: 'local', blocking: true, reuse: false });
  });

  test('prepared-query and transaction reads answer at once (spec: not blocking)', () => {
    for (const name of ['query.list', 'query.get', 'query.explain', 'query.execute', 'query.execute-remote', 'txn.read', 'kv.txn-read']) {
      expect([name, readEndpoints[name].blocking]).toEqual([name, false]);
    }
  });

  test('only the catalog and health reads share results', () => {
    const shared = Object.keys(readEndpoints).filter((n) => readEndpoints[n].reuse).sort();
    expect(shared).toEqual([
      'catalog.node', 'catalog.nodes', 'catalog.service', 'catalog.services',
      'health.checks', 'health.node', 'health.service', 'health.state',
    ]);
  });
});

describe('the policies over HTTP', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startDevAgent();
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A request that would block for its 5 s wait if its endpoint were blocking. */
  async function timed(method: string, path: string, body?: unknown) {
    const started = Date.now();
    const r = await http(t.url, method, path, body);
    return { r, ms: Date.now() - started };
  }

  test('a prepared-query list, get and execute with ?index answer at once', async () => {
    const id = (await http(t.url, 'POST', '/v1/query', { Name: 'policy-q', Service: { Service: 'web' } })).json.ID;
    const index = Number((await http(t.url, 'GET', '/v1/catalog/nodes')).headers.get('x-registry-index'));
    for (const path of ['/v1/query', `/v1/query/${id}`, `/v1/query/${id}/execute`, `/v1/query/${id}/explain`]) {
      const { r, ms } = await timed('GET', `${path}?index=${index}&wait=5s`);
      expect([path, r.status]).toEqual([path, 200]);
      expect(ms).toBeLessThan(3_000);
    }
  });

  test('an ordinary read with ?index still blocks for its wait', async () => {
    const index = Number((await http(t.url, 'GET', '/v1/catalog/nodes')).headers.get('x-registry-index'));
    const { r, ms } = await timed('GET', `/v1/kv/policy-never-written?index=${index}&wait=1s`);
    expect(r.status).toBe(404);
    expect(ms).toBeGreaterThanOrEqual(900);
  });

  test('the event list is this agent’s: ?dc is a 400 with its reason, any consistency is served', async () => {
    await http(t.url, 'PUT', '/v1/event/fire/policy-ev', 'x');
    const other = await http(t.url, 'GET', '/v1/event/list?dc=elsewhere');
    expect(other.status).toBe(400);
    expect(other.text).toContain('dc is not supported');
    for (const mode of ['', '?consistent', '?stale']) {
      const r = await http(t.url, 'GET', `/v1/event/list${mode}`);
      expect([mode, r.status]).toEqual([mode, 200]);
      expect(r.json.map((e: { Name: string }) => e.Name)).toContain('policy-ev');
    }
  });

  test('a session renew asked ?stale or ?index is still checked and answered at once', async () => {
    const id = (await http(t.url, 'PUT', '/v1/session/create', { TTL: '30s' })).json.ID;
    const index = Number((await http(t.url, 'GET', '/v1/session/list')).headers.get('x-registry-index'));
    const { r, ms } = await timed('PUT', `/v1/session/renew/${id}?stale&index=${index}&wait=5s`);
    expect(r.status).toBe(200);
    expect(r.json[0].ID).toBe(id);
    expect(ms).toBeLessThan(3_000);
    expect((await http(t.url, 'PUT', '/v1/session/renew/00000000-0000-0000-0000-000000000000?stale')).status).toBe(404);
  });
});
