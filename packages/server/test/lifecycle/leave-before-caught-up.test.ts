// `registry leave` on a server that has not received the Raft log yet (a CI flake: in a cluster that
// had just formed, the slowest server was asked to leave before its first append arrived; holding no
// configuration, it took itself for a lone server, answered "Graceful leave complete" at once and
// stopped — while the other two still named it a voter). Such a server is in the leader's
// configuration all the same: its leave must go through the leader like any other. And a server
// that no cluster holds (its -retry-join finds nobody in one) still leaves at once.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, freePort } from '../support/processes';
import { eventually } from '../support/wait';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { startAgentProc, type AgentProc } from './agent-process';

jest.setTimeout(120_000);

const run = promisify(execFile);
const registry = (...args: string[]) => run(process.execPath, [CLI, ...args], { timeout: 60_000 });

let cluster: ClusterHarness | undefined;
let lone: AgentProc | undefined;
let root: string | undefined;
afterEach(async () => {
  await lone?.stop();
  await cluster?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
  lone = cluster = root = undefined;
});

async function voterNodes(c: ClusterHarness, i: number): Promise<string[]> {
  const r = await c.http(i, 'GET', '/v1/operator/raft/configuration', undefined, { timeoutMs: 5_000 });
  return r.json<{ Servers: { Node: string }[] }>().Servers.map((s) => s.Node).sort();
}

test('a server in the configuration that has no log yet leaves through the leader, not on its own say-so', async () => {
  const c = (cluster = await ClusterHarness.start({ size: 3, proxied: true }));
  const leader = await c.waitForLeader(20_000);
  const f = (leader + 1) % 3;
  const other = (leader + 2) % 3;

  // The same server (same id, same address) with no Raft state: the leader still names it a voter.
  await c.kill(f, 'SIGKILL');
  c.wipe(f);
  // Nothing the others send it arrives (appends, heartbeats, snapshots); what it asks them is answered.
  for (const from of [leader, other]) c.link(from, f).blackhole();
  await c.restart(f);
  const url = `127.0.0.1:${c.servers[f]!.httpPort}`;
  expect(await eventually(async () => (await c.http(f, 'GET', '/v1/agent/self').catch(() => undefined))?.status === 200, 20_000)).toBe(true);
  // It holds no configuration, and the others hold one with it.
  expect((await c.http(f, 'GET', '/v1/operator/raft/configuration')).json<{ Servers: unknown[] }>().Servers).toEqual([]);
  expect(await voterNodes(c, leader)).toContain(`s${f}`);

  const { stdout } = await registry('leave', '-http-addr', url);
  expect(stdout).toContain('Graceful leave complete');
  // Complete means committed by the two others: both hold the configuration without it already.
  for (const i of [leader, other]) expect(await voterNodes(c, i)).toEqual([`s${leader}`, `s${other}`].sort());
  // It asked the leader, which logged the removal; it did not declare itself alone.
  expect(c.logs(f)).toMatch(/Graceful leave complete.*committedAt=/);
  expect(await eventually(() => !c.running(f), 15_000)).toBe(true);
  const w = await c.http(leader, 'PUT', '/v1/kv/after-leave', 'yes', { timeoutMs: 10_000 });
  expect(w.body).toBe('true');
});

test('a server that no cluster holds (its -retry-join finds nobody in one) leaves at once', async () => {
  root = mkdtempSync(join(tmpdir(), 'registry-leave-lone-'));
  // Two servers it expects to form a cluster with, which never start.
  const nobody = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
  lone = await startAgentProc(['-server', '-node', 'lone', '-data-dir', join(root, 'lone'), '-bootstrap-expect', '3', ...nobody.flatMap((a) => ['-retry-join', a])], join(root, 'lone.log'));
  expect(await eventually(async () => (await fetch(`${lone!.url}/v1/agent/self`).catch(() => undefined))?.status === 200, 20_000)).toBe(true);
  const started = Date.now();
  const { stdout } = await registry('leave', '-http-addr', `127.0.0.1:${lone.httpPort}`);
  expect(stdout).toContain('Graceful leave complete');
  // Greeting the two silent addresses is all it waits for (not the 25 s bound of a leave nobody confirms).
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(await lone.exited).toBe(0);
});
