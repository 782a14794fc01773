// The 400 reasons of the real routes' query and params schemas, pinned on a dev agent: each is the
// text the route answered with its hand parser before the schemas (issue 13 item 5 keeps them), and
// good values still reach the handler coerced.
import { http, startDevAgent, type TestAgent } from '../support/dev-agent';

let a: TestAgent;
beforeAll(async () => {
  a = await startDevAgent();
});
afterAll(() => a.stop());

test.each([
  ['GET', '/v1/health/service/web?passing=maybe', 'Invalid value for ?passing'],
  ['GET', '/v1/health/state/sleepy', 'Invalid check state "sleepy": must be any, passing, warning or critical'],
  ['GET', '/v1/health/state', 'Missing check state'],
  ['GET', '/v1/catalog/node', 'Missing node name'],
  ['GET', '/v1/query/anything/execute?connect=yes', `Error parsing 'connect' value: strconv.ParseBool: parsing "yes": invalid syntax`],
  ['GET', '/v1/query/anything/execute?limit=1.5', 'Bad limit: strconv.Atoi: parsing "1.5": invalid syntax'],
  ['PUT', '/v1/session/destroy/not-a-uuid', "Invalid session ID 'not-a-uuid': UUID must be 36 characters of the form 8-4-4-4-12 hex digits"],
  ['PUT', '/v1/session/renew', 'Missing session'],
  ['GET', '/v1/agent/health/service/id', 'Missing serviceID'],
  ['GET', '/v1/agent/health/service/name', 'Missing service Name'],
  ['PUT', '/v1/kv/k?cas=x', 'strconv.ParseUint: parsing "x": invalid syntax'],
  ['PUT', '/v1/kv/k?flags=18446744073709551616', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
  ['GET', '/v1/connect/intentions/match?by=source&by=destination&name=web', "required query parameter 'by' not set"],
  ['GET', '/v1/connect/intentions/match?by=sideways&name=web', "'by' parameter must be one of 'source' or 'destination'"],
  ['GET', '/v1/kv/k?index=12x', 'Invalid index'],
])('%s %s → 400 %s', async (method, path, reason) => {
  const r = await http(a.url, method, path);
  expect(r.status).toBe(400);
  expect(r.text).toBe(reason);
});

test('good values arrive coerced: presence flags, case-insensitive ?passing, first of repeated names', async () => {
  expect((await http(a.url, 'PUT', '/v1/catalog/register', { Node: 'n1', Address: '10.0.0.1', Service: { Service: 'web' }, Check: { Name: 'c', Status: 'critical', ServiceID: 'web' } })).status).toBe(200);
  expect((await http(a.url, 'GET', '/v1/health/service/web')).json).toHaveLength(1);
  expect((await http(a.url, 'GET', '/v1/health/service/web?passing=TRUE')).json).toEqual([]);
  expect((await http(a.url, 'GET', '/v1/health/service/web?passing=f')).json).toHaveLength(1);
  expect((await http(a.url, 'PUT', '/v1/kv/dir/a', 'x')).json).toBe(true);
  expect((await http(a.url, 'PUT', '/v1/kv/dir/sub/b', 'y')).json).toBe(true);
  // `?recurse=false` is still a flag that is there (Consul reads presence, not the value).
  expect((await http(a.url, 'GET', '/v1/kv/dir?recurse=false')).json.map((e: { Key: string }) => e.Key)).toEqual(['dir/a', 'dir/sub/b']);
  // Repeated, the first separator counts ('/' folds dir/sub/b into dir/sub/; 'x' would not).
  expect((await http(a.url, 'GET', '/v1/kv/dir/?keys&separator=/&separator=x')).json).toEqual(['dir/a', 'dir/sub/']);
  expect((await http(a.url, 'GET', '/v1/kv/dir/?keys&separator=x&separator=/')).json).toEqual(['dir/a', 'dir/sub/b']);
  expect((await http(a.url, 'GET', '/v1/kv/dir/a?raw')).text).toBe('x');
});
