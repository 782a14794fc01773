// ACLs on (default deny) for what only these areas decide: a prepared query's stored Token is shown
// as <hidden> except to management and is used for executing the query; KV prefix reads leave out
// keys the token may not read while a single unreadable key is 403; a read-only transaction needs
// key:read on every key.
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';

let a: AclAgent;
let webReader: string;
let queryReader: string;
let appKeys: string;

beforeAll(async () => {
  a = await startAclAgent({ defaultPolicy: 'deny' });
  await a.as(MASTER, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1', Service: { Service: 'web', Port: 80 } });
  webReader = (await tokenWithRules(a, 'web-reader', 'service "web" { policy = "read" }\nnode_prefix "" { policy = "read" }')).secret;
  queryReader = (await tokenWithRules(a, 'query-reader', 'query_prefix "" { policy = "read" }')).secret;
  appKeys = (await tokenWithRules(a, 'app-keys', 'key_prefix "app/" { policy = "read" }')).secret;
  for (const k of ['app/a', 'app/b', 'secret/x']) await a.as(MASTER, 'PUT', `/v1/kv/${k}`, 'v');
});
afterAll(async () => {
  await a.stop();
});

describe('prepared queries', () => {
  test('the stored Token is <hidden> to a query reader and shown to management', async () => {
    const id = (await a.as(MASTER, 'POST', '/v1/query', { Name: 'tok', Token: webReader, Service: { Service: 'web' } })).json.ID;
    expect((await a.as(queryReader, 'GET', `/v1/query/${id}`)).json[0].Token).toBe('<hidden>');
    expect((await a.as(queryReader, 'GET', '/v1/query')).json.find((q: any) => q.ID === id).Token).toBe('<hidden>');
    expect((await a.as(queryReader, 'GET', '/v1/query/tok/explain')).json.Query.Token).toBe('<hidden>');
    expect((await a.as(MASTER, 'GET', `/v1/query/${id}`)).json[0].Token).toBe(webReader);
  });

  test('execute filters with the query\'s Token when it has one, else with the caller\'s', async () => {
    await a.as(MASTER, 'POST', '/v1/query', { Name: 'with-token', Token: webReader, Service: { Service: 'web' } });
    await a.as(MASTER, 'POST', '/v1/query', { Name: 'without-token', Service: { Service: 'web' } });
    const nodes = async (name: string, token?: string) => (await a.as(token, 'GET', `/v1/query/${name}/execute`)).json.Nodes.length;
    expect(await nodes('with-token')).toBe(1);
    expect(await nodes('without-token')).toBe(0);
    expect(await nodes('without-token', webReader)).toBe(1);
  });

  test('writing a query needs query:write on its name', async () => {
    expect((await a.as(queryReader, 'POST', '/v1/query', { Name: 'nope', Service: { Service: 'web' } })).status).toBe(403);
  });
});

describe('KV', () => {
  test('a prefix read leaves out unreadable keys; an unreadable single key is 403', async () => {
    expect((await a.as(appKeys, 'GET', '/v1/kv/?recurse')).json.map((e: any) => e.Key)).toEqual(['app/a', 'app/b']);
    expect((await a.as(appKeys, 'GET', '/v1/kv/?keys')).json).toEqual(['app/a', 'app/b']);
    expect((await a.as(appKeys, 'GET', '/v1/kv/secret/x')).status).toBe(403);
    expect((await a.as(appKeys, 'PUT', '/v1/kv/app/a', 'w')).status).toBe(403);
  });

  test('a transaction needs the right on every key', async () => {
    expect((await a.as(appKeys, 'PUT', '/v1/txn', [{ KV: { Verb: 'get', Key: 'app/a' } }])).status).toBe(200);
    expect((await a.as(appKeys, 'PUT', '/v1/txn', [{ KV: { Verb: 'get', Key: 'app/a' } }, { KV: { Verb: 'get', Key: 'secret/x' } }])).status).toBe(403);
    expect((await a.as(appKeys, 'PUT', '/v1/txn', [{ KV: { Verb: 'set', Key: 'app/a', Value: '' } }])).status).toBe(403);
  });
});
