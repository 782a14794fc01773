// /v1/txn, two more of Consul's rules (issue 15):
// - a session invalidated by an earlier catalog op of the same transaction (its check turned
//   critical, its node deleted) is gone for the later ops: a lock with it fails "invalid session",
//   the locks it held read as released — and the failure rolls the whole transaction back;
// - a transaction of read ops only (KV read verbs, catalog `get`) is served as a read: no Raft
//   entry, and the consistency flags apply.
import { http, startDevAgent, waitFor, type TestAgent } from '../support/dev-agent';
import { countOf, scrape } from '../metrics/scrape';

jest.setTimeout(30_000);

let t: TestAgent;
const txn = (ops: unknown, query = '') => http(t.url, 'PUT', `/v1/txn${query}`, ops);
const b64 = (s: string) => Buffer.from(s).toString('base64');
/**
 * Transactions the state machine has applied (its registry_fsm_apply_seconds by type). Counted by
 * type, not by Raft index: the agent's own writes (its node, coordinates, …) may land meanwhile.
 */
const txnsApplied = async (): Promise<number> => {
  const s = await scrape(t.url);
  return countOf(s, 'registry_fsm_apply_seconds', { type: 'txn' }) + countOf(s, 'registry_fsm_apply_seconds', { type: 'kv.txn' });
};

let session = '';
const check = (status: string) => ({ Check: { Verb: 'set', Check: { Node: 'sn', CheckID: 'sn-alive', Name: 'alive', Status: status } } });
const lock = (key: string) => ({ KV: { Verb: 'lock', Key: key, Value: b64('me'), Session: session } });

beforeAll(async () => {
  t = await startDevAgent();
  const reg = await http(t.url, 'PUT', '/v1/catalog/register', {
    Node: 'sn', Address: '10.9.0.1', Check: { CheckID: 'sn-alive', Name: 'alive', Status: 'passing' },
  });
  expect(reg.status).toBe(200);
  const s = await http(t.url, 'PUT', '/v1/session/create', { Node: 'sn', Checks: ['sn-alive'], LockDelay: '15s' });
  expect(s.status).toBe(200);
  session = s.json.ID;
  expect((await http(t.url, 'PUT', `/v1/kv/held?acquire=${session}`, 'x')).json).toBe(true);
});
afterAll(() => t.stop());

async function sessionAlive(): Promise<boolean> {
  return (await http(t.url, 'GET', `/v1/session/info/${session}`)).json?.length === 1;
}

test('a check turned critical earlier in the transaction ends its sessions for the later ops: the lock fails and nothing is written', async () => {
  const r = await txn([check('critical'), lock('later')]);
  expect(r.status).toBe(409);
  expect(r.json).toEqual({ Results: null, Errors: [{ OpIndex: 1, What: `invalid session "${session}"` }] });
  // Rolled back: the check, the session, its lock and the key are as they were.
  const checks = (await http(t.url, 'GET', '/v1/health/node/sn')).json;
  expect(checks.find((c: { CheckID: string }) => c.CheckID === 'sn-alive').Status).toBe('passing');
  expect(await sessionAlive()).toBe(true);
  expect((await http(t.url, 'GET', '/v1/kv/held')).json[0].Session).toBe(session);
  expect((await http(t.url, 'GET', '/v1/kv/later')).status).toBe(404);
});

test('the locks of a session ended earlier in the transaction read as released to later ops', async () => {
  const r = await txn([check('critical'), { KV: { Verb: 'check-session', Key: 'held', Session: session } }]);
  expect(r.status).toBe(409);
  expect(r.json.Errors).toEqual([{ OpIndex: 1, What: `current session "" != "${session}"` }]);
  expect((await http(t.url, 'GET', '/v1/kv/held')).json[0].Session).toBe(session);
});

test('deleting the session’s node earlier in the transaction ends it too', async () => {
  const r = await txn([{ Node: { Verb: 'delete', Node: { Node: 'sn' } } }, lock('later')]);
  expect(r.status).toBe(409);
  expect(r.json.Errors).toEqual([{ OpIndex: 1, What: `invalid session "${session}"` }]);
  expect((await http(t.url, 'GET', '/v1/catalog/node/sn')).json).not.toBeNull();
  expect(await sessionAlive()).toBe(true);
});

test('ops before the invalidation still see the session; the commit then ends it and releases its locks with their lock-delay', async () => {
  const r = await txn([lock('early'), check('critical')]);
  expect(r.status).toBe(200);
  expect(r.json.Results[0].KV).toMatchObject({ Key: 'early', Session: session, LockIndex: 1 });
  expect(await sessionAlive()).toBe(false);
  for (const key of ['early', 'held']) {
    const e = (await http(t.url, 'GET', `/v1/kv/${key}`)).json[0];
    expect(e.Session).toBeUndefined();
  }
  // Another session cannot take the released lock within the ended session's lock-delay (15 s).
  const other = (await http(t.url, 'PUT', '/v1/session/create', {})).json.ID;
  expect((await http(t.url, 'PUT', `/v1/kv/early?acquire=${other}`, 'y')).json).toBe(false);
});

describe('a transaction of read ops only', () => {
  beforeAll(async () => {
    const w = await txn([
      { Node: { Verb: 'set', Node: { Node: 'rn', Address: '10.9.0.2' } } },
      { Service: { Verb: 'set', Node: 'rn', Service: { ID: 'api-1', Service: 'api', Port: 8080 } } },
      { Check: { Verb: 'set', Check: { Node: 'rn', CheckID: 'api-up', Name: 'up', Status: 'passing', ServiceID: 'api-1' } } },
      { KV: { Verb: 'set', Key: 'ro/a', Value: b64('1') } },
    ]);
    expect(w.status).toBe(200);
  });

  const reads = () => [
    { KV: { Verb: 'get', Key: 'ro/a' } },
    { KV: { Verb: 'get-tree', Key: 'ro/' } },
    { Node: { Verb: 'get', Node: { Node: 'rn' } } },
    { Service: { Verb: 'get', Node: 'rn', Service: { ID: 'api-1' } } },
    { Check: { Verb: 'get', Check: { Node: 'rn', CheckID: 'api-up' } } },
  ];

  test('is answered with the rows and read headers, and writes no Raft entry', async () => {
    const before = await txnsApplied();
    expect(before).toBeGreaterThan(0); // the transactions of the tests above
    for (let i = 0; i < 5; i++) {
      const r = await txn(reads());
      expect(r.status).toBe(200);
      expect(r.json.Errors).toBeNull();
      expect(r.json.Results.map((x: object) => Object.keys(x)[0])).toEqual(['KV', 'KV', 'Node', 'Service', 'Check']);
      expect(r.json.Results[0].KV).toMatchObject({ Key: 'ro/a', Value: b64('1') });
      expect(r.json.Results[2].Node).toMatchObject({ Node: 'rn', Address: '10.9.0.2' });
      expect(r.json.Results[3].Service).toMatchObject({ ID: 'api-1', Service: 'api', Port: 8080 });
      expect(r.json.Results[4].Check).toMatchObject({ CheckID: 'api-up', Status: 'passing', ServiceName: 'api' });
      expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThan(0);
      expect(r.headers.get('x-registry-knownleader')).toBe('true');
    }
    expect(await txnsApplied()).toBe(before);
    // A single catalog write among them makes it a write again: one entry.
    const w = await txn([...reads(), { Node: { Verb: 'set', Node: { Node: 'rn', Address: '10.9.0.3' } } }]);
    expect(w.status).toBe(200);
    expect(await txnsApplied()).toBe(before + 1);
  });

  test('honours ?stale and ?consistent, and refuses both at once', async () => {
    const stale = await txn(reads(), '?stale');
    expect(stale.status).toBe(200);
    expect(stale.headers.get('x-registry-lastcontact')).not.toBeNull();
    expect((await txn(reads(), '?consistent')).status).toBe(200);
    const both = await txn(reads(), '?stale&consistent');
    expect(both.status).toBe(400);
  });

  test('a missing row fails it with Consul’s text (409), a malformed op is 400', async () => {
    const r = await txn([{ Node: { Verb: 'get', Node: { Node: 'nope' } } }, { KV: { Verb: 'get', Key: 'ro/a' } }]);
    expect(r.status).toBe(409);
    expect(r.json.Errors).toEqual([{ OpIndex: 0, What: 'node "nope" doesn\'t exist' }]);
    const bad = await txn([{ Node: { Verb: 'get', Node: {} } }]);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/Must provide node/);
  });
});
