// Issue 15 part 2 on three real server processes: a user event fired on one server is listed by
// every agent of the datacenter; autopilot health sees all three servers and their failure
// tolerance; force-leave of a dead server takes it out of the cluster and members keep it as left;
// the monitor streams log lines until the client goes.
import { request } from 'node:http';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';

jest.setTimeout(120_000);

let cluster: ClusterHarness;
beforeAll(async () => {
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-log-level', 'debug'] });
  await cluster.waitForLeader(15_000);
});
afterAll(async () => {
  await cluster?.stop();
});

interface Member {
  Name: string;
  Status: number;
}

test('an event fired on one server is listed, with the same ID and LTime, by every agent', async () => {
  const fired = await cluster.http(1, 'PUT', '/v1/event/fire/deploy?node=^s', 'release-7');
  expect(fired.status).toBe(200);
  const event = fired.json<{ ID: string; LTime: number; Payload: string }>();
  expect(Buffer.from(event.Payload, 'base64').toString()).toBe('release-7');
  for (const i of [0, 1, 2]) {
    const seen = await eventually(async () => {
      const list = (await cluster.http(i, 'GET', '/v1/event/list?name=deploy')).json<{ ID: string; LTime: number }[]>();
      return list.some((e) => e.ID === event.ID && e.LTime === event.LTime);
    }, 10_000);
    expect(seen).toBe(true);
  }
  // A node filter matching only s2 is listed by s2 alone.
  const only = (await cluster.http(0, 'PUT', '/v1/event/fire/deploy?node=^s2$')).json<{ ID: string }>();
  await eventually(async () => (await cluster.http(2, 'GET', '/v1/event/list?name=deploy')).json<{ ID: string }[]>().some((e) => e.ID === only.ID), 10_000);
  for (const i of [0, 1]) expect((await cluster.http(i, 'GET', '/v1/event/list?name=deploy')).json<{ ID: string }[]>().map((e) => e.ID)).not.toContain(only.ID);
});

test('autopilot health: three healthy voters tolerate one failure; the configuration is the same on every server', async () => {
  const healthy = await eventually(async () => {
    const r = await cluster.http(2, 'GET', '/v1/operator/autopilot/health');
    const h = r.json<{ Healthy: boolean; FailureTolerance: number; Servers: { Name: string; Leader: boolean; Healthy: boolean; SerfStatus: string }[] }>();
    return r.status === 200 && h.Healthy && h.FailureTolerance === 1 && h.Servers.length === 3 && h.Servers.filter((s) => s.Leader).length === 1;
  }, 20_000);
  expect(healthy).toBe(true);
  expect((await cluster.http(0, 'PUT', '/v1/operator/autopilot/configuration', { CleanupDeadServers: true, LastContactThreshold: '1s', MaxTrailingLogs: 500, ServerStabilizationTime: '10s' })).json()).toBe(true);
  for (const i of [0, 1, 2]) {
    const ok = await eventually(async () => (await cluster.http(i, 'GET', '/v1/operator/autopilot/configuration?stale')).json<{ MaxTrailingLogs: number }>().MaxTrailingLogs === 500, 10_000);
    expect(ok).toBe(true);
  }
});

test('the monitor streams log lines at the level asked for until the client leaves', async () => {
  const port = cluster.servers[0]!.httpPort;
  const lines = await new Promise<string>((resolve, reject) => {
    let text = '';
    const req = request({ host: '127.0.0.1', port, path: '/v1/agent/monitor?loglevel=debug', method: 'GET' }, (res) => {
      expect(res.statusCode).toBe(200);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('[DEBUG]')) {
          req.destroy();
          resolve(text);
        }
      });
    });
    req.on('error', (err) => (text.includes('[DEBUG]') ? resolve(text) : reject(err)));
    req.end();
    // Requests make debug lines; keep some coming.
    const poke = setInterval(() => void cluster.http(0, 'PUT', '/v1/kv/monitor-poke', 'x').catch(() => undefined), 200);
    setTimeout(() => {
      clearInterval(poke);
      req.destroy();
      reject(new Error(`no debug line within 15 s: ${text.slice(0, 500)}`));
    }, 15_000).unref();
    req.on('close', () => clearInterval(poke));
  });
  expect(lines).toMatch(/\[DEBUG\]/);
  // A level of warn only passes warnings and errors: nothing at info or debug.
  const quiet = await new Promise<string>((resolve) => {
    let text = '';
    const req = request({ host: '127.0.0.1', port, path: '/v1/agent/monitor?loglevel=warn', method: 'GET' }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
    });
    req.on('error', () => undefined);
    req.end();
    const poke = setInterval(() => void cluster.http(0, 'PUT', '/v1/kv/monitor-poke', 'y').catch(() => undefined), 100);
    setTimeout(() => {
      clearInterval(poke);
      req.destroy();
      resolve(text);
    }, 1_500);
  });
  expect(quiet).not.toMatch(/\[(DEBUG|INFO)\]/);
});

test("a new monitor is first sent the agent's recent lines, as Consul replays its last 512, even on an idle agent", async () => {
  const port = cluster.servers[0]!.httpPort;
  const text = await new Promise<string>((resolve) => {
    let got = '';
    const req = request({ host: '127.0.0.1', port, path: '/v1/agent/monitor?loglevel=info', method: 'GET' }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        got += c;
        if (got.includes('registry agent running')) {
          req.destroy();
          resolve(got);
        }
      });
    });
    req.on('error', () => resolve(got));
    req.end();
    // Nothing is done to the agent meanwhile: what arrives was logged before the monitor attached.
    setTimeout(() => {
      req.destroy();
      resolve(got);
    }, 3_000).unref();
  });
  expect(text).toMatch(/\[INFO\] +agent: registry agent running/);
  expect(text).not.toMatch(/\[DEBUG\]/);
});

test('force-leave of a dead server removes it from Raft; members list it as left (3)', async () => {
  const leader = await cluster.waitForLeader(15_000);
  const victim = (leader + 1) % 3;
  const asker = (leader + 2) % 3;
  const name = cluster.servers[victim]!.node;
  await cluster.kill(victim);
  const failed = await eventually(async () => (await cluster.http(asker, 'GET', '/v1/agent/members')).json<Member[]>().some((m) => m.Name === name && m.Status === 4), 20_000);
  expect(failed).toBe(true);
  expect((await cluster.http(asker, 'PUT', `/v1/agent/force-leave/${name}`)).status).toBe(200);
  const left = await eventually(async () => {
    const members = (await cluster.http(asker, 'GET', '/v1/agent/members')).json<Member[]>();
    return members.length === 3 && members.find((m) => m.Name === name)?.Status === 3;
  }, 20_000);
  expect(left).toBe(true);
  const peers = (await cluster.http(asker, 'GET', '/v1/status/peers')).json<string[]>();
  expect(peers).toHaveLength(2);
  // Again: already left, still fine.
  expect((await cluster.http(asker, 'PUT', `/v1/agent/force-leave/${name}`)).status).toBe(200);
});
