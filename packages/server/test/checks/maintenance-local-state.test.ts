// Maintenance checks are part of the agent's local state, as in Consul: /v1/agent/checks lists
// `_node_maintenance` and `_service_maintenance:<id>`, and they survive a restart of the agent
// (kept under <data-dir>/maintenance); a service's maintenance check goes with the service.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, buildConfig, createLogger, type AgentConfig } from '@registry/server';
import { http, waitFor } from '../support/dev-agent';
import { freePort } from '../support/processes';

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'registry-maint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(config: AgentConfig): Promise<{ agent: Agent; url: string }> {
  const agent = await Agent.start(config, { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', false) });
  const url = `http://127.0.0.1:${agent.httpPort}`;
  await waitFor(async () => (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 10_000);
  await waitFor(() => agent.store.catalogNode(config.nodeName).value !== null, 10_000);
  return { agent, url };
}

const checksOf = async (url: string) => (await http(url, 'GET', '/v1/agent/checks')).json as Record<string, any>;
const healthIds = async (url: string) => ((await http(url, 'GET', '/v1/health/node/maint')).json as { CheckID: string }[]).map((c) => c.CheckID).sort();

test('maintenance checks are listed by /v1/agent/checks, survive a restart, and a disabled or deregistered one stays gone', async () => {
  const dataDir = join(dir, 'data');
  const serverPort = await freePort();
  const config = () => buildConfig({ dev: true, httpPort: 0, serverPort, node: 'maint', dataDir });
  let { agent, url } = await start(config());
  try {
    expect((await http(url, 'PUT', '/v1/agent/service/register', { Name: 'web', Port: 80 })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/register', { Name: 'db', Port: 5432 })).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/maintenance?enable=true&reason=kernel+upgrade')).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/maintenance/web?enable=true&reason=deploy')).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/maintenance/db?enable=true')).status).toBe(200);

    const checks = await checksOf(url);
    expect(Object.keys(checks).sort()).toEqual(['_node_maintenance', '_service_maintenance:db', '_service_maintenance:web']);
    expect(checks._node_maintenance).toMatchObject({
      Node: 'maint', CheckID: '_node_maintenance', Name: 'Node Maintenance Mode', Status: 'critical', Notes: 'kernel upgrade', ServiceID: '', ServiceName: '',
    });
    expect(checks['_service_maintenance:web']).toMatchObject({
      Name: 'Service Maintenance Mode', Status: 'critical', Notes: 'deploy', ServiceID: 'web', ServiceName: 'web',
    });
    expect(checks['_service_maintenance:web'].ModifyIndex).toBeGreaterThan(0);
    // The agent health endpoint counts each once.
    const health = await http(url, 'GET', '/v1/agent/health/service/id/web');
    expect(health.status).toBe(503);
    expect(health.json.Checks.map((c: { CheckID: string }) => c.CheckID).sort()).toEqual(['_node_maintenance', '_service_maintenance:web']);

    // db's maintenance goes with db; the node's maintenance is switched off.
    expect((await http(url, 'PUT', '/v1/agent/service/deregister/db')).status).toBe(200);
    expect(Object.keys(await checksOf(url)).sort()).toEqual(['_node_maintenance', '_service_maintenance:web']);
    expect(readdirSync(join(dataDir, 'maintenance'))).toHaveLength(2);
  } finally {
    await agent.stop();
  }

  // The catalog holds the checks across the restart anyway: take them out of it while the agent is
  // down (as a wiped catalog would), so only the agent's local state can bring them back.
  ({ agent, url } = await start(config()));
  try {
    await waitFor(async () => Object.keys(await checksOf(url)).length === 2, 10_000);
    // This start writes its restored checks back to the catalog shortly after it serves (it may
    // do so after a first deregister): take them out until they stay out.
    await waitFor(async () => {
      for (const id of ['_node_maintenance', '_service_maintenance:web']) {
        expect((await http(url, 'PUT', '/v1/catalog/deregister', { Node: 'maint', CheckID: id })).status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 300));
      return Object.keys(await checksOf(url)).length === 0;
    }, 10_000);
    expect(Object.keys(await checksOf(url))).toEqual([]);
  } finally {
    await agent.stop();
  }

  ({ agent, url } = await start(config()));
  try {
    await waitFor(async () => Object.keys(await checksOf(url)).length === 2, 15_000);
    const checks = await checksOf(url);
    expect(checks._node_maintenance).toMatchObject({ Status: 'critical', Notes: 'kernel upgrade' });
    expect(checks['_service_maintenance:web']).toMatchObject({ Status: 'critical', Notes: 'deploy', ServiceID: 'web' });
    expect(await healthIds(url)).toEqual(['_node_maintenance', '_service_maintenance:web', 'serfHealth']);
    // Health queries skip the service again.
    expect((await http(url, 'GET', '/v1/health/service/web?passing')).json).toEqual([]);

    // Disabled, the checks leave the catalog and the data dir; the next restart does not bring them back.
    expect((await http(url, 'PUT', '/v1/agent/maintenance?enable=false')).status).toBe(200);
    expect((await http(url, 'PUT', '/v1/agent/service/maintenance/web?enable=false')).status).toBe(200);
    expect(await checksOf(url)).toEqual({});
    expect(readdirSync(join(dataDir, 'maintenance'))).toHaveLength(0);
  } finally {
    await agent.stop();
  }

  ({ agent, url } = await start(config()));
  try {
    await waitFor(async () => Object.keys((await http(url, 'GET', '/v1/agent/services')).json).length === 1, 10_000);
    // Give a wrongful restore time to happen before asserting it did not.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await checksOf(url)).toEqual({});
    expect(await healthIds(url)).toEqual(['serfHealth']);
  } finally {
    await agent.stop();
  }
});
