// Logs (issue 11): at debug level with JSON output, each HTTP request is logged (method, path,
// status, duration) with Consul's @level/@message/@module/@timestamp keys, and no token sent in a
// header, a query string or a body ever appears in any line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/wait';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(60_000);

const ROOT = 'c0ffee00-0000-4000-8000-0000000105e1';
// Tokens the agent is never configured with: only redaction keeps them out of the log.
const MINTED = '5ec2e700-1111-4222-8333-444455556666';
const QUERY_ONLY = 'q0ery-t0ken-aaaa-bbbb-cccc-dddd';
const BOGUS = 'b0gus-t0ken-eeee-ffff-0000-1111';

let dir: string;
let agent: AgentProc;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-logsec-'));
  const config = join(dir, 'acl.json');
  writeFileSync(config, JSON.stringify({ log_level: 'debug', log_json: true, acl: { enabled: true, default_policy: 'deny', tokens: { initial_management: ROOT } } }));
  agent = await startAgentProc(['-dev', '-node', 'logsec', '-config-file', config], join(dir, 'agent.log'));
  await whenReady(agent, 'logsec', ROOT);
});

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('tokens in headers, query strings and bodies never reach the log; requests are logged at debug', async () => {
  const u = agent.url;
  // Body: a token created with a chosen SecretID, and a KV value and a policy mentioning nothing secret.
  const made = await fetch(`${u}/v1/acl/token`, {
    method: 'PUT',
    headers: { 'X-Registry-Token': ROOT },
    body: JSON.stringify({ SecretID: MINTED, Description: 'log test', Policies: [] }),
  });
  expect(made.status).toBe(200);
  // Header (both spellings), query string, Authorization bearer.
  expect((await fetch(`${u}/v1/agent/self`, { headers: { 'X-Registry-Token': MINTED } })).status).toBe(403);
  expect((await fetch(`${u}/v1/agent/self`, { headers: { Authorization: `Bearer ${ROOT}` } })).status).toBe(200);
  expect((await fetch(`${u}/v1/catalog/nodes?token=${QUERY_ONLY}&stale`)).status).toBe(403);
  expect((await fetch(`${u}/v1/kv/x?token=${BOGUS}`, { method: 'PUT', body: 'v' })).status).toBe(403);
  expect((await fetch(`${u}/v1/acl/token/self`, { headers: { 'X-Registry-Token': BOGUS } })).status).toBe(403);
  // A forbidden write whose body holds a token.
  expect((await fetch(`${u}/v1/acl/token`, { method: 'PUT', headers: { 'X-Registry-Token': BOGUS }, body: JSON.stringify({ SecretID: QUERY_ONLY }) })).status).toBe(403);
  // A malformed body carrying a token.
  expect((await fetch(`${u}/v1/acl/token?token=${ROOT}`, { method: 'PUT', body: `{"SecretID": "${MINTED}", ` })).status).toBe(400);

  expect(await eventually(() => agent.log().includes('/v1/acl/token?token=<hidden>'), 10_000)).toBe(true);
  const log = agent.log();
  for (const secret of [ROOT, MINTED, QUERY_ONLY, BOGUS]) expect(log).not.toContain(secret);

  const lines = log.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const line of lines) {
    expect(Object.keys(line).slice(0, 4)).toEqual(['@level', '@message', '@module', '@timestamp']);
    expect(new Date(line['@timestamp'] as string).toISOString()).toBe(line['@timestamp']);
  }
  const requests = lines.filter((l) => l['@module'] === 'agent.http' && l['@level'] === 'debug' && /^Request /.test(l['@message'] as string));
  expect(requests).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ method: 'GET', path: '/v1/catalog/nodes?token=<hidden>&stale', status: 403, duration: expect.stringMatching(/^\d+\.\d+ms$/) }),
      expect.objectContaining({ method: 'PUT', path: '/v1/acl/token', status: 200 }),
    ]),
  );
});
