// SIGHUP reloads `node_meta` and `telemetry` (issue 11, Lifecycle): the new node meta reaches the
// catalog (the agent's node is registered again with it) and the metrics endpoint follows the new
// telemetry settings, in the same process.
import { hostname } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/wait';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(90_000);

let dir: string;
let conf: string;
let agent: AgentProc;

const write = (content: unknown) => writeFileSync(join(conf, '00-agent.json'), JSON.stringify(content));

async function nodeMeta(): Promise<Record<string, string>> {
  const r = await fetch(`${agent.url}/v1/catalog/node/meta-node`);
  return ((await r.json()) as { Node: { Meta: Record<string, string> } }).Node.Meta;
}

async function gaugeNames(): Promise<string[]> {
  const r = await fetch(`${agent.url}/v1/agent/metrics`);
  return ((await r.json()) as { Gauges: { Name: string }[] }).Gauges.map((g) => g.Name);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-reload-meta-'));
  conf = join(dir, 'conf.d');
  mkdirSync(conf);
  write({ node_meta: { rack: 'r1', zone: 'a' }, telemetry: { disable_hostname: false } });
  agent = await startAgentProc(['-dev', '-node', 'meta-node', '-config-dir', conf], join(dir, 'agent.log'));
  await whenReady(agent, 'meta-node');
});

afterAll(async () => {
  await agent?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('SIGHUP puts the new node_meta in the catalog: the agent node is registered again with it', async () => {
  expect(await eventually(async () => (await nodeMeta()).rack === 'r1', 10_000)).toBe(true);
  expect(await nodeMeta()).toMatchObject({ rack: 'r1', zone: 'a' });
  const before = Number((await fetch(`${agent.url}/v1/catalog/node/meta-node`)).headers.get('x-registry-index'));

  write({ node_meta: { rack: 'r2', role: 'edge' }, telemetry: { disable_hostname: false } });
  const pid = agent.child.pid;
  agent.child.kill('SIGHUP');
  expect(await eventually(async () => (await nodeMeta()).rack === 'r2', 15_000)).toBe(true);
  const meta = await nodeMeta();
  expect(meta).toMatchObject({ rack: 'r2', role: 'edge' });
  expect(meta.zone).toBeUndefined();
  // A new registration, not a changed read: the node's index moved.
  expect(Number((await fetch(`${agent.url}/v1/catalog/node/meta-node`)).headers.get('x-registry-index'))).toBeGreaterThan(before);
  // Catalog filtering by node-meta sees it too.
  const filtered = (await (await fetch(`${agent.url}/v1/catalog/nodes?node-meta=role:edge`)).json()) as { Node: string }[];
  expect(filtered.map((n) => n.Node)).toEqual(['meta-node']);
  expect(agent.log()).toMatch(/configuration reloaded: changed=.*node_meta/);
  expect(agent.child.pid).toBe(pid);
  expect(agent.child.exitCode).toBeNull();
});

test('SIGHUP applies telemetry: the Prometheus format switched off and on; gauge names never carry the hostname', async () => {
  // As Consul 1.4 with no push sink (issue #29): disable_hostname is accepted and changes nothing.
  const host = hostname();
  expect((await gaugeNames()).some((n) => n.startsWith(`registry.${host}.`))).toBe(false);
  expect((await fetch(`${agent.url}/v1/agent/metrics?format=prometheus`)).status).toBe(200);

  write({ node_meta: { rack: 'r2', role: 'edge' }, telemetry: { disable_hostname: true, prometheus_retention_time: '0s' } });
  agent.child.kill('SIGHUP');
  expect(await eventually(() => /configuration reloaded: changed=.*telemetry/.test(agent.log()), 10_000)).toBe(true);
  const names = await gaugeNames();
  expect(names.length).toBeGreaterThan(0);
  expect(names.some((n) => n.startsWith(`registry.${host}.`))).toBe(false);
  expect(names).toContain('registry.runtime.heap_used_bytes');
  expect((await fetch(`${agent.url}/v1/agent/metrics?format=prometheus`)).status).toBe(415);

  // And back on.
  write({ node_meta: { rack: 'r2', role: 'edge' }, telemetry: { disable_hostname: false, prometheus_retention_time: '60s' } });
  agent.child.kill('SIGHUP');
  expect(await eventually(async () => (await fetch(`${agent.url}/v1/agent/metrics?format=prometheus`)).status === 200, 10_000)).toBe(true);
  expect((await gaugeNames()).some((n) => n.startsWith(`registry.${host}.`))).toBe(false);
});
