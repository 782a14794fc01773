// The `registry` command as a user runs it: the built bin, Go-style single-dash flags, talking HTTP
// to a running agent.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startDevAgent, type TestAgent } from '../../server/test/support/dev-agent';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'registry.js');

let t: TestAgent;
let addr: string;
beforeAll(async () => {
  t = await startDevAgent();
  addr = `127.0.0.1:${t.agent.httpPort}`;
  await fetch(`${t.url}/v1/catalog/register`, {
    method: 'PUT',
    body: JSON.stringify({ Node: 'cli-node', Address: '10.9.0.1', Service: { Service: 'cli-web', Port: 80 } }),
  });
});
afterAll(async () => {
  await t.stop();
});

const registry = (...args: string[]) => run(process.execPath, [BIN, ...args], { timeout: 20_000 });

test('members lists the server as alive (Go-style -http-addr flag)', async () => {
  const { stdout } = await registry('members', '-http-addr', addr);
  expect(stdout).toMatch(/^Node\s+Address\s+Status\s+Type/m);
  expect(stdout).toMatch(/test-agent\s+127\.0\.0\.1:\d+\s+alive\s+server/);
});

test('catalog services, nodes and datacenters read through HTTP', async () => {
  expect((await registry('catalog', 'services', '-http-addr', addr)).stdout.split('\n')).toContain('cli-web');
  expect((await registry('catalog', 'nodes', `-http-addr=${addr}`)).stdout).toMatch(/cli-node\s+\S*\s*10\.9\.0\.1\s+dc1/);
  expect((await registry('catalog', 'datacenters', '-http-addr', addr)).stdout.trim()).toBe('dc1');
});

test('operator raft list-peers shows the leader', async () => {
  const { stdout } = await registry('operator', 'raft', 'list-peers', '-http-addr', addr);
  expect(stdout).toMatch(/test-agent\s+[0-9a-f-]{36}\s+127\.0\.0\.1:\d+\s+leader\s+true/);
});

test('REGISTRY_HTTP_ADDR is the default address', async () => {
  const { stdout } = await run(process.execPath, [BIN, 'catalog', 'datacenters'], {
    env: { ...process.env, REGISTRY_HTTP_ADDR: addr },
    timeout: 20_000,
  });
  expect(stdout.trim()).toBe('dc1');
});

test('an unknown flag or an unreachable agent fails with a message and a non-zero exit', async () => {
  await expect(registry('agent', '-no-such-flag')).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/unknown option/) });
  await expect(registry('members', '-http-addr', '127.0.0.1:1')).rejects.toMatchObject({ code: 1, stderr: 'Error retrieving members: connection refused 127.0.0.1:1\n' });
});

test('an agent flag with a bad value is refused before anything starts', async () => {
  await expect(registry('agent', '-dev', '-http-port', 'eighty')).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/-http-port must be an integer/),
  });
});

describe("Consul's environment variables (issue 15)", () => {
  const ROOT = 'c0ffee00-0000-4000-8000-0000000c11e5';
  let acl: TestAgent;
  beforeAll(async () => {
    acl = await startDevAgent((c) => {
      c.acl.enabled = true;
      c.acl.defaultPolicy = 'deny';
      c.acl.tokens.initialManagement = ROOT;
    });
  });
  afterAll(async () => {
    await acl?.stop();
  });
  const withEnv = (env: Record<string, string>, ...args: string[]) => {
    const base = { ...process.env };
    for (const k of ['REGISTRY_HTTP_ADDR', 'REGISTRY_HTTP_TOKEN', 'CONSUL_HTTP_ADDR', 'CONSUL_HTTP_TOKEN']) delete base[k];
    return run(process.execPath, [BIN, ...args], { env: { ...base, ...env }, timeout: 20_000 });
  };

  test('CONSUL_HTTP_ADDR is the address when REGISTRY_HTTP_ADDR is unset; REGISTRY_HTTP_ADDR wins over it', async () => {
    expect((await withEnv({ CONSUL_HTTP_ADDR: addr }, 'catalog', 'datacenters')).stdout.trim()).toBe('dc1');
    expect((await withEnv({ CONSUL_HTTP_ADDR: '127.0.0.1:1', REGISTRY_HTTP_ADDR: addr }, 'catalog', 'datacenters')).stdout.trim()).toBe('dc1');
  });

  test('CONSUL_HTTP_TOKEN is the token when REGISTRY_HTTP_TOKEN is unset', async () => {
    const aclAddr = `127.0.0.1:${acl.agent.httpPort}`;
    await expect(withEnv({ CONSUL_HTTP_ADDR: aclAddr }, 'operator', 'raft', 'list-peers')).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/403/) });
    const { stdout } = await withEnv({ CONSUL_HTTP_ADDR: aclAddr, CONSUL_HTTP_TOKEN: ROOT }, 'operator', 'raft', 'list-peers');
    expect(stdout).toMatch(/test-agent\s+[0-9a-f-]{36}\s+127\.0\.0\.1:\d+\s+leader\s+true/);
    await expect(withEnv({ CONSUL_HTTP_ADDR: aclAddr, CONSUL_HTTP_TOKEN: ROOT, REGISTRY_HTTP_TOKEN: 'not-a-token' }, 'operator', 'raft', 'list-peers')).rejects.toMatchObject({ code: 1 });
  });
});
