// /v1/txn with Node, Service and Check operations (Consul 1.4's verbs get, set, cas, delete,
// delete-cas) beside KV ops: results in op order, later ops seeing earlier ones, CAS on modify
// indexes, and all-or-nothing — a failing op leaves the catalog and the KV store as they were.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let t: TestAgent;
const txn = (ops: unknown) => http(t.url, 'PUT', '/v1/txn', ops);
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  t = await startDevAgent();
});
afterAll(async () => {
  await t.stop();
});

test('node, service, check and KV sets in one transaction are all written at one index and reported in order', async () => {
  const r = await txn([
    { Node: { Verb: 'set', Node: { Node: 'txn-a', Address: '10.1.0.1', Meta: { rack: 'r1' } } } },
    { Service: { Verb: 'set', Node: 'txn-a', Service: { ID: 'web-1', Service: 'web', Port: 80, Tags: ['v1'] } } },
    { Check: { Verb: 'set', Check: { Node: 'txn-a', CheckID: 'web-alive', Name: 'alive', Status: 'passing', ServiceID: 'web-1' } } },
    { KV: { Verb: 'set', Key: 'txn/config', Value: b64('on') } },
  ]);
  expect(r.status).toBe(200);
  expect(r.json.Errors).toBeNull();
  const [node, service, check, kv] = r.json.Results;
  expect(node.Node).toMatchObject({ Node: 'txn-a', Address: '10.1.0.1', Meta: { rack: 'r1' }, Datacenter: 'dc1' });
  expect(service.Service).toMatchObject({ ID: 'web-1', Service: 'web', Port: 80, Tags: ['v1'] });
  expect(check.Check).toMatchObject({ Node: 'txn-a', CheckID: 'web-alive', Status: 'passing', ServiceID: 'web-1', ServiceName: 'web', ServiceTags: ['v1'] });
  expect(kv.KV).toMatchObject({ Key: 'txn/config', Value: null });
  const index = node.Node.ModifyIndex;
  for (const x of [service.Service, check.Check, kv.KV]) expect(x.ModifyIndex).toBe(index);

  const health = await http(t.url, 'GET', '/v1/health/service/web?passing');
  expect(health.json).toHaveLength(1);
  expect(health.json[0].Node.Node).toBe('txn-a');
  expect((await http(t.url, 'GET', '/v1/kv/txn/config')).json[0].Value).toBe(b64('on'));
});

test('get verbs answer the stored rows; a missing one fails the transaction with Consul\'s text', async () => {
  const r = await txn([
    { Node: { Verb: 'get', Node: { Node: 'txn-a' } } },
    { Service: { Verb: 'get', Node: 'txn-a', Service: { ID: 'web-1' } } },
    { Check: { Verb: 'get', Check: { Node: 'txn-a', CheckID: 'web-alive' } } },
  ]);
  expect(r.status).toBe(200);
  expect(r.json.Results.map((x: any) => Object.keys(x)[0])).toEqual(['Node', 'Service', 'Check']);
  const missing = await txn([
    { Node: { Verb: 'get', Node: { Node: 'nope' } } },
    { Service: { Verb: 'get', Node: 'txn-a', Service: { ID: 'nope' } } },
    { Check: { Verb: 'get', Check: { Node: 'txn-a', CheckID: 'nope' } } },
  ]);
  expect(missing.status).toBe(409);
  expect(missing.json).toEqual({
    Results: null,
    Errors: [
      { OpIndex: 0, What: 'node "nope" doesn\'t exist' },
      { OpIndex: 1, What: 'service "nope" on node "txn-a" doesn\'t exist' },
      { OpIndex: 2, What: 'check "nope" on node "txn-a" doesn\'t exist' },
    ],
  });
});

test('a failing op rolls back every op before it (catalog and KV alike)', async () => {
  const r = await txn([
    { Node: { Verb: 'set', Node: { Node: 'txn-rollback', Address: '10.1.0.9' } } },
    { KV: { Verb: 'set', Key: 'txn/rollback', Value: b64('x') } },
    { Service: { Verb: 'set', Node: 'no-such-node', Service: { Service: 'db', Port: 5432 } } },
  ]);
  expect(r.status).toBe(409);
  expect(r.json.Errors).toEqual([{ OpIndex: 2, What: 'Missing node registration' }]);
  expect((await http(t.url, 'GET', '/v1/catalog/node/txn-rollback')).json).toBeNull();
  expect((await http(t.url, 'GET', '/v1/kv/txn/rollback')).status).toBe(404);
});

test('a check on a service that does not exist is refused; later ops see earlier ones in the same transaction', async () => {
  const r = await txn([{ Check: { Verb: 'set', Check: { Node: 'txn-a', CheckID: 'c', Name: 'c', ServiceID: 'ghost' } } }]);
  expect(r.status).toBe(409);
  expect(r.json.Errors).toEqual([{ OpIndex: 0, What: 'Missing service registration' }]);
  const ok = await txn([
    { Node: { Verb: 'set', Node: { Node: 'txn-b', Address: '10.1.0.2' } } },
    { Service: { Verb: 'set', Node: 'txn-b', Service: { ID: 'cache', Service: 'cache' } } },
    { Check: { Verb: 'set', Check: { Node: 'txn-b', CheckID: 'cache-up', Name: 'up', ServiceID: 'cache' } } },
    { Check: { Verb: 'get', Check: { Node: 'txn-b', CheckID: 'cache-up' } } },
  ]);
  expect(ok.status).toBe(200);
  expect(ok.json.Results[3].Check).toMatchObject({ CheckID: 'cache-up', Status: 'critical', ServiceName: 'cache' });
});

test('cas and delete-cas compare the modify index; a stale index fails with Consul\'s text', async () => {
  const node = (await txn([{ Node: { Verb: 'get', Node: { Node: 'txn-b' } } }])).json.Results[0].Node;
  const stale = await txn([{ Node: { Verb: 'cas', Node: { Node: 'txn-b', Address: '10.9.9.9', ModifyIndex: node.ModifyIndex - 1 } } }]);
  expect(stale.status).toBe(409);
  expect(stale.json.Errors).toEqual([{ OpIndex: 0, What: 'failed to set node "txn-b", index is stale' }]);
  const fresh = await txn([{ Node: { Verb: 'cas', Node: { Node: 'txn-b', Address: '10.9.9.9', ModifyIndex: node.ModifyIndex } } }]);
  expect(fresh.status).toBe(200);
  expect(fresh.json.Results[0].Node.Address).toBe('10.9.9.9');
  // cas with index 0 creates only
  const exists = await txn([{ Service: { Verb: 'cas', Node: 'txn-b', Service: { ID: 'cache', Service: 'cache', Port: 1, ModifyIndex: 0 } } }]);
  expect(exists.json.Errors).toEqual([{ OpIndex: 0, What: 'failed to set service "cache" on node "txn-b", index is stale' }]);

  const svc = (await txn([{ Service: { Verb: 'get', Node: 'txn-b', Service: { ID: 'cache' } } }])).json.Results[0].Service;
  const badDelete = await txn([{ Service: { Verb: 'delete-cas', Node: 'txn-b', Service: { ID: 'cache', ModifyIndex: svc.ModifyIndex + 100 } } }]);
  expect(badDelete.json.Errors).toEqual([{ OpIndex: 0, What: 'failed to delete service "cache" on node "txn-b", index is stale' }]);
  const del = await txn([{ Service: { Verb: 'delete-cas', Node: 'txn-b', Service: { ID: 'cache', ModifyIndex: svc.ModifyIndex } } }]);
  expect(del.status).toBe(200);
  expect(del.json.Results).toEqual([]);
  // Deleting the service took its check with it.
  expect((await http(t.url, 'GET', '/v1/health/node/txn-b')).json).toEqual([]);
});

test('delete removes a node with its services and checks', async () => {
  const r = await txn([{ Node: { Verb: 'delete', Node: { Node: 'txn-a' } } }]);
  expect(r.status).toBe(200);
  expect((await http(t.url, 'GET', '/v1/catalog/node/txn-a')).json).toBeNull();
  expect((await http(t.url, 'GET', '/v1/health/service/web')).json).toEqual([]);
});

test('malformed operations are 400 with a reason and write nothing', async () => {
  const cases: [unknown, RegExp][] = [
    [[{ Node: { Verb: 'frob', Node: { Node: 'x' } } }], /Invalid Node verb "frob" in operation 0/],
    [[{ Service: { Verb: 'set', Node: 'x', Service: { Service: 's' } }, KV: { Verb: 'get', Key: 'k' } }], /more than one/],
    [[{}], /has no KV, Node, Service or Check member/],
    [[{ Node: { Verb: 'set', Node: { Address: '1.2.3.4' } } }], /Must provide node/],
    [[{ Node: { Verb: 'set', Node: { Node: 'x', ID: 'not-a-uuid' } } }], /Bad node ID/],
    [[{ Check: { Verb: 'set', Check: { CheckID: 'c' } } }], /Must provide node/],
  ];
  for (const [body, reason] of cases) {
    const r = await txn(body);
    expect(r.status).toBe(400);
    expect(r.text).toMatch(reason);
  }
  expect((await http(t.url, 'GET', '/v1/catalog/node/x')).json).toBeNull();
});
