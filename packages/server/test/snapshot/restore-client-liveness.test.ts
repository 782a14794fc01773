// Issue 33, finding 4: after a restore the leader reconciles the restored catalog with the agents
// actually alive, as Consul's leader does. A client agent's node that comes back with the archive
// but never heartbeats (here: the client left after the backup and is gone) must have its
// serfHealth turn critical within the usual heartbeat timeout, not stay passing for good.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { ClientAgents } from '../cluster/support/client-agents';
import { eventually } from '../support/wait';

jest.setTimeout(180_000);

/** The servers' client_heartbeat_timeout (short, so the test is). */
const HEARTBEAT_TIMEOUT_MS = 2_000;

let cluster: ClusterHarness | undefined;
let clients: ClientAgents | undefined;
afterEach(async () => {
  await clients?.stop();
  await cluster?.stop();
  clients = undefined;
  cluster = undefined;
});

test('a restored client node that never heartbeats goes critical within the heartbeat timeout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-restore-liveness-'));
  const serverConfig = join(dir, 'server.json');
  writeFileSync(serverConfig, JSON.stringify({ client_heartbeat_timeout: `${HEARTBEAT_TIMEOUT_MS}ms` }));
  const c = (cluster = await ClusterHarness.start({ size: 1, extraArgs: ['-config-file', serverConfig, '-dns-port', '-1'] }));
  await c.waitForLeader(60_000);
  clients = new ClientAgents(c.dir, c.servers.map((s) => s.serverAddress));
  await clients.start(1);

  const serf = async () => {
    const r = await c.http(0, 'GET', '/v1/health/node/c0');
    return r.json<Array<{ CheckID: string; Status: string }>>().find((x) => x.CheckID === 'serfHealth')?.Status;
  };
  // Generous: on a loaded machine a client process alone can take tens of seconds to start.
  expect(await eventually(async () => (await serf()) === 'passing', 90_000)).toBe(true);

  const archive = await fetch(`http://127.0.0.1:${c.servers[0].httpPort}/v1/snapshot`).then(async (r) => Buffer.from(await r.arrayBuffer()));

  // The client leaves and is gone: its node is deregistered, and the leader no longer tracks it.
  expect((await clients.http(0, 'PUT', '/v1/agent/leave')).status).toBe(200);
  expect(await eventually(async () => (await serf()) === undefined, 20_000)).toBe(true);
  await clients.kill(0);

  const restored = await fetch(`http://127.0.0.1:${c.servers[0].httpPort}/v1/snapshot`, { method: 'PUT', body: archive });
  expect(restored.status).toBe(200);
  const restoredAt = Date.now();
  // The archive's catalog has the node, passing as it was saved ...
  expect(await serf()).toBe('passing');
  // ... and the leader, not hearing from it, marks it critical within the timeout (+ sweep and write).
  expect(await eventually(async () => (await serf()) === 'critical', HEARTBEAT_TIMEOUT_MS + 8_000)).toBe(true);
  expect(Date.now() - restoredAt).toBeLessThan(HEARTBEAT_TIMEOUT_MS + 8_000);
  rmSync(dir, { recursive: true, force: true });
});
