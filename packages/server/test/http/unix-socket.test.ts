// addresses.http = "unix:///path" (Consul supports it): the HTTP API listens on a unix socket, reads
// and writes work through it (node's http.request with socketPath), the agent reports the address
// as unix:///path, and a socket file left behind by an agent that did not stop cleanly is reused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, applyConfigFile, buildConfig, createLogger } from '@registry/server';
import { waitFor } from '../support/dev-agent';

const dir = mkdtempSync(join(tmpdir(), 'registry-unix-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function viaSocket(socketPath: string, method: string, path: string, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function startOn(socketPath: string): Promise<Agent> {
  const config = applyConfigFile(buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'unix-agent' }), { addresses: { http: `unix://${socketPath}` } });
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  await waitFor(async () => JSON.parse((await viaSocket(socketPath, 'GET', '/v1/status/leader')).text) !== '', 10_000);
  return agent;
}

test('the HTTP API is served on the unix socket: reads, writes, headers', async () => {
  const socketPath = join(dir, 'http.sock');
  const agent = await startOn(socketPath);
  try {
    expect(agent.httpAddress).toBe(`unix://${socketPath}`);
    expect(agent.httpPort).toBe(0);
    const put = await viaSocket(socketPath, 'PUT', '/v1/kv/over/unix', 'hello');
    expect(put.status).toBe(200);
    expect(put.text).toBe('true');
    const get = await viaSocket(socketPath, 'GET', '/v1/kv/over/unix');
    expect(get.status).toBe(200);
    expect(JSON.parse(get.text)[0].Value).toBe(Buffer.from('hello').toString('base64'));
    expect(get.headers['x-registry-knownleader']).toBe('true');
    expect((await viaSocket(socketPath, 'GET', '/v1/no/such')).status).toBe(404);
  } finally {
    await agent.stop();
  }
});

test('a socket file left behind is replaced; a regular file in the way is an error', async () => {
  const socketPath = join(dir, 'again.sock');
  let agent = await startOn(socketPath);
  await agent.stop();
  // Whether or not stop() removed it, a second agent listens on the same path.
  agent = await startOn(socketPath);
  await agent.stop();

  const blocked = join(dir, 'not-a-socket');
  writeFileSync(blocked, 'x');
  const config = applyConfigFile(buildConfig({ dev: true, httpPort: 0, serverPort: 0, node: 'unix-agent' }), { addresses: { http: `unix://${blocked}` } });
  await expect(Agent.start(config, { logger: createLogger('silent', false) })).rejects.toThrow(/not a socket/);
});

test('addresses.http must be unix:///absolute/path or an address', () => {
  expect(() => applyConfigFile(buildConfig({ dev: true }), { addresses: { http: 'unix://relative.sock' } })).toThrow(/addresses.http/);
  const c = applyConfigFile(buildConfig({ dev: true }), { addresses: { http: '127.0.0.2' } });
  expect(c.client).toBe('127.0.0.2');
  expect(c.httpUnixSocket).toBeUndefined();
});
