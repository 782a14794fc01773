// Anti-entropy on a server agent, as a real process over HTTP (issue #26 item 2: one syncer built by
// both agent kinds, local/syncer.ts). With `anti_entropy_interval` short, a catalog-level deregister
// of the server's own agent-registered service is undone at the next pass, and passes over a catalog
// that already matches the agent write nothing: no catalog command reaches the state machine
// (registry_fsm_apply_seconds by type), while /v1/agent/self shows the passes running.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, waitFor } from '../support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';
import { countOf, scrape } from '../metrics/scrape';

jest.setTimeout(90_000);

const NODE = 'ae-server';
let dir: string;
let p: AgentProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-server-ae-'));
  const config = join(dir, 'ae.json');
  writeFileSync(config, JSON.stringify({ anti_entropy_interval: '200ms' }));
  p = spawnAgent(['-dev', '-node', NODE, '-config-file', config], await freePort(), await freePort(), join(dir, 'agent.log'));
  await waitFor(async () => (await (await fetch(`${p.url}/v1/status/leader`)).json()) !== '', 30_000, 100);
  // The leader has registered this server's node (its `registry` service and serfHealth).
  await waitFor(async () => (await http(p.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services?.registry !== undefined, 30_000, 100);
});

afterAll(async () => {
  if (p && p.child.exitCode === null) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

type Stats = { passes: number; writes: number; blocked: number };
const aeStats = async (): Promise<Stats> => (await http(p.url, 'GET', '/v1/agent/self')).json.Stats.antiEntropy as Stats;
const services = async () => Object.keys(((await http(p.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services ?? {}) as Record<string, unknown>).sort();
const serviceCreateIndex = async (): Promise<number> => ((await http(p.url, 'GET', `/v1/catalog/node/${NODE}`)).json?.Services?.['web-1']?.CreateIndex as number | undefined) ?? 0;
const checks = async () => ((await http(p.url, 'GET', `/v1/health/node/${NODE}`)).json as { CheckID: string }[]).map((c) => c.CheckID).sort();

/** Catalog commands the state machine has applied (both kinds a sync could write). */
async function catalogApplies(): Promise<number> {
  const s = await scrape(p.url);
  expect(s.status).toBe(200);
  return countOf(s, 'registry_fsm_apply_seconds', { type: 'catalog.register' }) + countOf(s, 'registry_fsm_apply_seconds', { type: 'catalog.deregister' });
}

test('passes over a catalog that matches the agent write nothing', async () => {
  expect((await http(p.url, 'PUT', '/v1/agent/service/register', { ID: 'web-1', Name: 'web', Port: 80, Check: { TTL: '10m' } })).status).toBe(200);
  await waitFor(async () => (await services()).includes('web-1') && (await checks()).includes('service:web-1'), 10_000, 100);
  // The passes run on a server, and its /v1/agent/self says how many (as a client's does).
  const first = await aeStats();
  await waitFor(async () => (await aeStats()).passes >= first.passes + 2, 10_000, 100);
  const before = { applies: await catalogApplies(), stats: await aeStats() };
  // At least five more passes at 200 ms.
  await waitFor(async () => (await aeStats()).passes >= before.stats.passes + 5, 15_000, 100);
  expect(await catalogApplies()).toBe(before.applies);
  expect((await aeStats()).writes).toBe(before.stats.writes);
});

test("a catalog-level deregister of the server's own service is repaired at the next pass, with its check", async () => {
  const before = await aeStats();
  const createdAt = await serviceCreateIndex();
  expect(createdAt).toBeGreaterThan(0);
  expect((await http(p.url, 'PUT', '/v1/catalog/deregister', { Node: NODE, ServiceID: 'web-1' })).status).toBe(200);
  // Registered anew (a pass 200 ms later may already have done it by the next read, so its absence
  // is not looked for in between: a new CreateIndex shows it was gone).
  await waitFor(async () => (await serviceCreateIndex()) > createdAt && (await checks()).includes('service:web-1'), 10_000, 100);
  expect((await aeStats()).writes).toBeGreaterThan(before.writes);
  // What is the leader's stays as it was: the server service and serfHealth.
  expect(await services()).toEqual(['registry', 'web-1']);
  expect(await checks()).toEqual(['serfHealth', 'service:web-1']);
  // The agent still lists it as its own.
  expect(Object.keys((await http(p.url, 'GET', '/v1/agent/services')).json)).toEqual(['web-1']);
});
