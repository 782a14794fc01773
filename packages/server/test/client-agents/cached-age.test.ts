// A client agent's `?cached` answers once every server is gone (issue #29 item 12): still answered
// from the cache (X-Cache: HIT), with Age counting up from the moment the servers stopped answering
// and LastContact growing with it, as Consul's agent counts from the disconnect. Before, a refresh
// blocked on a dead server (retried within its budget) kept Age at 0 for minutes.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, sleep } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { ClientAgents } from '../cluster/support/client-agents';

jest.setTimeout(180_000);

const serverConfig = join(tmpdir(), `registry-cached-age-${process.pid}.json`);
let cluster: ClusterHarness;
let clients: ClientAgents;

beforeAll(async () => {
  writeFileSync(serverConfig, JSON.stringify({ client_heartbeat_timeout: '2s' }));
  cluster = await ClusterHarness.start({ size: 1, extraArgs: ['-config-file', serverConfig, '-dns-port', '-1'] });
  await cluster.waitForLeader(20_000);
  clients = new ClientAgents(cluster.dir, cluster.servers.map((s) => s.serverAddress));
  await clients.start(1);
  const joined = await eventually(async () => (await clients.http(0, 'GET', '/v1/catalog/node/c0').catch(() => undefined))?.status === 200 && (await clients.http(0, 'GET', '/v1/catalog/node/c0')).body !== 'null', 30_000, 200);
  if (!joined) throw new Error(`the client did not join\n${clients.diagnostics()}\n${cluster.diagnostics()}`);
});

afterAll(async () => {
  await clients?.stop();
  await cluster?.stop();
  rmSync(serverConfig, { force: true });
});

test('with its server gone, a cached answer is a HIT whose Age counts from the disconnect', async () => {
  expect((await clients.http(0, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 80 })).status).toBe(200);
  const served = await eventually(async () => ((await clients.http(0, 'GET', '/v1/health/service/web?cached')).json<unknown[]>() ?? []).length === 1, 15_000, 200);
  expect(served).toBe(true);
  const fresh = await clients.http(0, 'GET', '/v1/health/service/web?cached');
  expect(fresh.headers['x-cache']).toBe('HIT');
  expect(fresh.headers.age).toBe('0');

  await cluster.kill(0, 'SIGKILL');
  // The answer stays (stale beats nothing), and its age shows how stale.
  let last = { age: 0, contact: 0 };
  const aged = await eventually(async () => {
    const r = await clients.http(0, 'GET', '/v1/health/service/web?cached');
    if (r.status !== 200 || r.headers['x-cache'] !== 'HIT') return false;
    last = { age: Number(r.headers.age), contact: Number(r.headers['x-registry-lastcontact']) };
    return last.age >= 3;
  }, 30_000, 500);
  expect({ aged, last }).toMatchObject({ aged: true });
  expect(last.contact).toBeGreaterThanOrEqual(2_000);
  // And it keeps counting.
  await sleep(2_000);
  const later = await clients.http(0, 'GET', '/v1/health/service/web?cached');
  expect(later.headers['x-cache']).toBe('HIT');
  expect(Number(later.headers.age)).toBeGreaterThanOrEqual(last.age + 1);
});
