// Issue #29 item 15: a restarted agent, server or client, lists its saved services and checks in its
// very first answer. Consul loads them before it listens; an agent that listened first answered
// `{}` for 30–400 ms (longer while no leader was known). Real `registry agent` processes restarted on
// their data dirs, with a config-file service too; the HTTP port is polled from the moment it
// accepts connections, and every answer must list everything.
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentProc, whenReady, type AgentProc } from '../lifecycle/agent-process';
import { freePort } from '../support/processes';

jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-first-answer-'));
const running: AgentProc[] = [];
afterAll(async () => {
  for (const a of running) await a.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** GET on a fresh connection: the body, or null when the port does not accept connections yet. */
function get(port: number, path: string): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' ? resolve(null) : reject(err)));
    req.end();
  });
}

interface Seen {
  answers: number;
  /** The answers that lacked something, as read. */
  incomplete: string[];
}

/**
 * From the agent's first accepted connection on: `rounds` pairs of /v1/agent/services and
 * /v1/agent/checks. The wait for the port is a tight loop, bounded in time.
 */
async function pollFromFirstConnection(a: AgentProc, services: string[], checks: string[], rounds = 15): Promise<Seen> {
  const deadline = Date.now() + 45_000;
  let first = await get(a.httpPort, '/v1/agent/services');
  while (first === null) {
    if (Date.now() > deadline || a.child.exitCode !== null) throw new Error(`the agent never listened:\n${a.log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 1));
    first = await get(a.httpPort, '/v1/agent/services');
  }
  const seen: Seen = { answers: 0, incomplete: [] };
  const judge = (answer: { status: number; body: string } | null, want: string[]) => {
    seen.answers++;
    const keys = answer?.status === 200 ? Object.keys(JSON.parse(answer.body) as object) : [];
    if (!want.every((k) => keys.includes(k))) seen.incomplete.push(`${answer?.status} ${answer?.body}`);
  };
  judge(first, services);
  judge(await get(a.httpPort, '/v1/agent/checks'), checks);
  for (let i = 1; i < rounds; i++) {
    judge(await get(a.httpPort, '/v1/agent/services'), services);
    judge(await get(a.httpPort, '/v1/agent/checks'), checks);
  }
  return seen;
}

const put = async (a: AgentProc, path: string, body: unknown) => (await fetch(`${a.url}${path}`, { method: 'PUT', body: JSON.stringify(body) })).status;

async function registerSaved(a: AgentProc, service: string): Promise<void> {
  expect(await put(a, '/v1/agent/service/register', { Name: service, Port: 8080, Check: { TTL: '1h' } })).toBe(200);
  expect(await put(a, '/v1/agent/check/register', { Name: `${service}-disk`, TTL: '1h' })).toBe(200);
}

function configFile(name: string, service: string): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ service: { name: service, port: 80, check: { ttl: '1h' } } }));
  return file;
}

async function start(args: string[], name: string): Promise<AgentProc> {
  const a = await startAgentProc(args, join(dir, `${name}.log`));
  running.push(a);
  return a;
}

async function stop(a: AgentProc): Promise<void> {
  await a.stop();
  running.splice(running.indexOf(a), 1);
}

test('a restarted server and a restarted client agent list their saved and config-file services and checks in their first answers', async () => {
  // One server port across the restart: the client reaches the server by the address in its Raft configuration.
  const serverPort = await freePort();
  const serverArgs = ['-server-port', String(serverPort), '-server', '-bootstrap-expect', '1', '-node', 's1', '-data-dir', join(dir, 's1'), '-config-file', configFile('s1', 'front')];
  let server = await start(serverArgs, 's1');
  await whenReady(server, 's1');
  await registerSaved(server, 'api');
  await stop(server);

  server = await start(serverArgs, 's1');
  const fromServer = await pollFromFirstConnection(server, ['api', 'front'], ['service:api', 'api-disk', 'service:front']);
  expect(fromServer.incomplete).toEqual([]);
  expect(fromServer.answers).toBe(30);
  await whenReady(server, 's1');

  const clientArgs = () => ['-retry-join', `127.0.0.1:${serverPort}`, '-node', 'c1', '-data-dir', join(dir, 'c1'), '-config-file', configFile('c1', 'edge')];
  let client = await start(clientArgs(), 'c1');
  await whenReady(client, 'c1');
  await registerSaved(client, 'web');
  await stop(client);

  client = await start(clientArgs(), 'c1');
  const fromClient = await pollFromFirstConnection(client, ['web', 'edge'], ['service:web', 'web-disk', 'service:edge']);
  expect(fromClient.incomplete).toEqual([]);
  expect(fromClient.answers).toBe(30);
  // And the catalog has them once the client is back with the servers.
  await whenReady(client, 'c1');
  const deadline = Date.now() + 20_000;
  let listed: string[] = [];
  while (Date.now() < deadline) {
    const node = (await (await fetch(`${server.url}/v1/catalog/node/c1`)).json()) as { Services?: Record<string, unknown> } | null;
    listed = Object.keys(node?.Services ?? {}).sort();
    if (listed.includes('web') && listed.includes('edge')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(listed).toEqual(['edge', 'web']);
});
