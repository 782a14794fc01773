// /v1/agent/metrics needs agent:read (Consul's AgentMetrics), and token resolution is measured:
// its latency, and whether the cache answered.
import { MASTER, startAclAgent, tokenWithRules, type AclAgent } from '../acl/acl-agent';
import { countOf, scrape, valueOf } from './scrape';

jest.setTimeout(60_000);

let a: AclAgent;
let reader: string;
let noAgent: string;

beforeAll(async () => {
  a = await startAclAgent({ defaultPolicy: 'deny' });
  reader = (await tokenWithRules(a, 'metrics-reader', 'agent "acl-agent" { policy = "read" }')).secret;
  noAgent = (await tokenWithRules(a, 'metrics-no-agent', 'key_prefix "" { policy = "write" }\nnode_prefix "" { policy = "read" }')).secret;
});
afterAll(() => a.stop());

test.each([
  ['a token without agent:read', () => noAgent],
  ['the anonymous token', () => undefined],
])('%s is refused with 403, in both forms', async (_what, token) => {
  const json = await a.as(token(), 'GET', '/v1/agent/metrics');
  expect([json.status, json.text]).toEqual([403, 'Permission denied']);
  expect((await scrape(a.url, token())).status).toBe(403);
});

test('a token with agent:read, or the management token, may read them', async () => {
  expect((await a.as(reader, 'GET', '/v1/agent/metrics')).status).toBe(200);
  expect((await scrape(a.url, reader)).status).toBe(200);
  expect((await scrape(a.url, MASTER)).status).toBe(200);
});

test('token resolution is timed, and counted as a cache hit or a miss', async () => {
  const s0 = await scrape(a.url, MASTER);
  // A new token misses the cache once, then hits it.
  const fresh = (await tokenWithRules(a, 'metrics-fresh', 'key_prefix "" { policy = "read" }')).secret;
  for (let i = 0; i < 3; i++) expect((await a.as(fresh, 'GET', '/v1/kv/anything')).status).toBe(404);
  const s1 = await scrape(a.url, MASTER);
  const delta = (name: string) => valueOf(s1.families, name)! - valueOf(s0.families, name)!;
  expect(delta('registry_acl_token_cache_misses_total')).toBeGreaterThanOrEqual(1);
  expect(delta('registry_acl_token_cache_hits_total')).toBeGreaterThanOrEqual(2);
  expect(countOf(s1, 'registry_acl_resolve_token_seconds') - countOf(s0, 'registry_acl_resolve_token_seconds')).toBeGreaterThanOrEqual(3);
});
