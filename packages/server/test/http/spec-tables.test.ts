// The spec's endpoint tables, row by row: every "Blocking: YES" read sets X-Registry-Index (never
// 0), every "Consistency: all" read accepts ?stale and ?consistent, and every "Cache" read answers
// X-Cache with ?cached. One agent with ACLs on and the management token, so the ACL rows count too.
import { MASTER, startAclAgent, type AclAgent } from '../acl/acl-agent';

let a: AclAgent;
const as = (method: string, path: string, body?: unknown) => a.as(MASTER, method, path, body);
const ids: Record<string, string> = {};

beforeAll(async () => {
  a = await startAclAgent();
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await as(method, path, body);
    if (r.status !== 200) throw new Error(`setup ${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  await must('PUT', '/v1/catalog/register', {
    Node: 'n1',
    Address: '10.0.0.1',
    Service: { Service: 'web', Port: 80 },
    Check: { CheckID: 'web-ok', Name: 'web ok', ServiceID: 'web', Status: 'passing' },
  });
  ids.token = (await must('GET', '/v1/acl/token/self')).AccessorID;
  ids.policy = (await must('PUT', '/v1/acl/policy', { Name: 'tables' })).ID;
  ids.session = (await must('PUT', '/v1/session/create', {})).ID;
  ids.intention = (await must('POST', '/v1/connect/intentions', { SourceName: 'web', DestinationName: 'db', SourceType: 'registry', Action: 'allow' })).ID;
  ids.area = (await must('POST', '/v1/operator/area', { PeerDatacenter: 'dc9' })).ID;
  ids.query = (await must('POST', '/v1/query', { Name: 'web-q', Service: { Service: 'web' } })).ID;
}, 30_000);
afterAll(() => a.stop());

// [path, Cache column]; each is a GET with "Blocking: YES" and "Consistency: all" in the spec.
const blockingReads: [string, 'none' | 'background refresh'][] = [
  ['/v1/acl/token/{token}', 'none'],
  ['/v1/acl/token/self', 'none'],
  ['/v1/acl/tokens', 'none'],
  ['/v1/acl/policy/{policy}', 'none'],
  ['/v1/acl/policies', 'none'],
  ['/v1/session/info/{session}', 'none'],
  ['/v1/session/node/n1', 'none'],
  ['/v1/session/list', 'none'],
  ['/v1/catalog/nodes', 'none'],
  ['/v1/catalog/services', 'none'],
  ['/v1/catalog/service/web', 'background refresh'],
  ['/v1/catalog/connect/web', 'background refresh'],
  ['/v1/catalog/node/n1', 'none'],
  ['/v1/health/node/n1', 'none'],
  ['/v1/health/checks/web', 'none'],
  ['/v1/health/service/web', 'background refresh'],
  ['/v1/health/connect/web', 'background refresh'],
  ['/v1/health/state/any', 'none'],
  ['/v1/operator/area', 'none'],
  ['/v1/operator/area/{area}', 'none'],
  ['/v1/connect/intentions/{intention}', 'none'],
  ['/v1/connect/intentions', 'none'],
  ['/v1/agent/connect/ca/roots', 'background refresh'],
  ['/v1/agent/connect/ca/leaf/web', 'background refresh'],
];

const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_m, k: string) => ids[k]);

describe.each(blockingReads)('GET %s', (path, cache) => {
  test('sets X-Registry-Index (never 0) and accepts ?stale and ?consistent', async () => {
    for (const suffix of ['', '?stale', '?consistent']) {
      const r = await as('GET', fill(path) + suffix);
      expect(`${suffix} ${r.status} ${r.text.slice(0, 80)}`).toBe(`${suffix} 200 ${r.text.slice(0, 80)}`);
      expect(Number(r.headers.get('x-registry-index'))).toBeGreaterThanOrEqual(1);
    }
  });

  if (cache !== 'none') {
    test('?cached answers from the agent cache: MISS, then HIT', async () => {
      // The CA endpoints are always served from the cache, so their first answer may already be a HIT.
      const first = await as('GET', `${fill(path)}?cached`);
      expect(['MISS', 'HIT']).toContain(first.headers.get('x-cache'));
      const second = await as('GET', `${fill(path)}?cached`);
      expect(second.headers.get('x-cache')).toBe('HIT');
      expect(second.headers.get('age')).not.toBeNull();
    });
  }
});

test('prepared query execute ("Cache: simple") answers X-Cache with ?cached', async () => {
  expect((await as('GET', '/v1/query/web-q/execute?cached')).headers.get('x-cache')).toBe('MISS');
  expect((await as('GET', '/v1/query/web-q/execute?cached')).headers.get('x-cache')).toBe('HIT');
});

test('the literal true/false answers: token delete, policy delete, session destroy', async () => {
  const t = await as('PUT', '/v1/acl/token', { Description: 'gone' });
  for (const [method, path] of [
    ['DELETE', `/v1/acl/token/${t.json.AccessorID}`],
    ['DELETE', `/v1/acl/policy/${ids.policy}`],
    ['PUT', `/v1/session/destroy/${ids.session}`],
  ]) {
    const r = await as(method, path);
    expect(`${path} ${r.status} ${r.text}`).toBe(`${path} 200 true`);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  }
});

test('?pretty (with or without a value) indents by 4 spaces with a trailing newline', async () => {
  for (const q of ['?pretty', '?pretty=1']) {
    const r = await as('GET', `/v1/catalog/node/n1${q}`);
    expect(r.text.startsWith('{\n    "Node": {')).toBe(true);
    expect(r.text.endsWith('}\n')).toBe(true);
  }
  expect((await as('GET', '/v1/catalog/node/n1')).text).not.toContain('\n');
});
