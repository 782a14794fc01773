// A server that left comes back (issue 11, Lifecycle): after `registry leave` the restarted server
// rejoins through -retry-join, or — restarted without it — through `registry join`; and
// `registry join` reports success only when the servers really are in one cluster afterwards.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI } from '../support/processes';
import { eventually } from '../support/wait';
import { agentArgs } from '../cluster/support/agent-args';
import { ClusterHarness } from '../cluster/support/cluster-harness';
import { startAgentProc, whenReady, type AgentProc } from './agent-process';

jest.setTimeout(150_000);

const run = promisify(execFile);
const registry = (...args: string[]) => run(process.execPath, [CLI, ...args], { timeout: 30_000 });

let cluster: ClusterHarness;
let lone: AgentProc | undefined;
let rejoiner: AgentProc | undefined;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'registry-rejoin-'));
  cluster = await ClusterHarness.start({ size: 3 });
  await cluster.waitForLeader(20_000);
});

afterAll(async () => {
  await rejoiner?.stop();
  await lone?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function voters(i: number): Promise<string[]> {
  const r = await cluster.http(i, 'GET', '/v1/operator/raft/configuration');
  return r.json<{ Servers: { Node: string }[] }>().Servers.map((s) => s.Node).sort();
}

test('a server that left and is restarted rejoins the cluster through -retry-join', async () => {
  const leader = await cluster.waitForLeader(20_000);
  const f = (leader + 1) % 3;
  const addr = `127.0.0.1:${cluster.servers[f]!.httpPort}`;
  const { stdout } = await registry('leave', '-http-addr', addr);
  expect(stdout).toContain('Graceful leave complete');
  // "Complete" means committed without it, which the two others both hold already: no waiting.
  for (const i of [0, 1, 2].filter((n) => n !== f)) expect(await voters(i)).toEqual(['s0', 's1', 's2'].filter((n) => n !== `s${f}`));
  expect(await eventually(() => !cluster.running(f), 15_000)).toBe(true);

  await cluster.restart(f);
  const back = await eventually(async () => (await voters(leader)).includes(`s${f}`) && (await cluster.http(f, 'GET', '/v1/status/leader')).json<string>() !== '', 30_000);
  if (!back) throw new Error(`s${f} did not rejoin\n${cluster.diagnostics()}`);
  expect(await voters(leader)).toEqual(['s0', 's1', 's2']);
  // It is a full member again: a write through it is committed and read back from the leader. It
  // counts itself one once its join call returns or the leader's appends past its leave reach it
  // (membership.ts), which may come just after the leader's configuration and heartbeat do.
  let w: { body: string } | undefined;
  await eventually(async () => (w = await cluster.http(f, 'PUT', '/v1/kv/rejoined', 'yes')).body === 'true', 15_000);
  expect(w?.body).toBe('true');
  expect((await cluster.http(leader, 'GET', '/v1/kv/rejoined?raw')).body).toBe('yes');
});

test('registry join succeeds only when the servers end up in one cluster', async () => {
  const leader = await cluster.waitForLeader(20_000);
  const other = (leader + 1) % 3;
  const addr = `127.0.0.1:${cluster.servers[leader]!.httpPort}`;
  // Already together: success.
  const ok = await registry('join', '-http-addr', addr, cluster.servers[other]!.serverAddress);
  expect(ok.stdout).toContain('Successfully joined cluster by contacting 1 nodes.');
  // Nobody answers: failure.
  await expect(registry('join', '-http-addr', addr, '127.0.0.1:1')).rejects.toMatchObject({ code: 1 });

  // A -dev agent is its own one-server cluster: joining a server of another cluster does nothing, so it fails.
  lone = await startAgentProc(['-dev', '-node', 'lone'], join(dir, 'lone.log'));
  await whenReady(lone, 'lone');
  const failed = await registry('join', '-http-addr', `127.0.0.1:${lone.httpPort}`, cluster.servers[leader]!.serverAddress).then(
    () => undefined,
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toMatch(/member of another cluster/);
  expect(failed?.stdout ?? '').not.toMatch(/Successfully joined/);
  expect(await voters(leader)).toEqual(['s0', 's1', 's2']);
});

test('a server that left and is restarted without -retry-join rejoins through registry join', async () => {
  const leader = await cluster.waitForLeader(20_000);
  const f = (leader + 2) % 3;
  const s = cluster.servers[f]!;
  const { stdout } = await registry('leave', '-http-addr', `127.0.0.1:${s.httpPort}`);
  expect(stdout).toContain('Graceful leave complete');
  for (const i of [0, 1, 2].filter((n) => n !== f)) expect(await voters(i)).not.toContain(`s${f}`);
  expect(await eventually(() => !cluster.running(f), 15_000)).toBe(true);

  // Restarted on its data dir and ports, with nobody to join: it stays out of the cluster on its own.
  const args = agentArgs({ node: s.node, dataDir: s.dataDir, httpPort: s.httpPort, serverPort: s.serverPort, bootstrapExpect: 3, retryJoin: [] });
  // (Its own -http-port/-server-port come last and win over the free ports startAgentProc picks.)
  rejoiner = await startAgentProc(args.slice(1), join(dir, 'rejoiner.log'));
  const url = `http://127.0.0.1:${s.httpPort}`;
  const up = await eventually(async () => (await fetch(`${url}/v1/agent/self`).catch(() => undefined))?.status === 200, 20_000);
  if (!up) throw new Error(`restarted s${f} never answered:\n${rejoiner.log().slice(-3000)}`);
  expect(await voters(leader)).not.toContain(`s${f}`);

  const joined = await registry('join', '-http-addr', `127.0.0.1:${s.httpPort}`, cluster.servers[leader]!.serverAddress);
  expect(joined.stdout).toContain('Successfully joined cluster by contacting 1 nodes.');
  const back = await eventually(async () => (await voters(leader)).includes(`s${f}`) && (await (await fetch(`${url}/v1/status/leader`)).json()) !== '', 30_000);
  if (!back) throw new Error(`s${f} did not rejoin after registry join\n${rejoiner.log().slice(-3000)}\n${cluster.diagnostics()}`);
  expect(await voters(leader)).toEqual(['s0', 's1', 's2']);
  // A full member again: a write through it commits and the leader reads it back.
  const w = await fetch(`${url}/v1/kv/rejoined-by-join`, { method: 'PUT', body: 'yes' });
  expect(await w.text()).toBe('true');
  expect((await cluster.http(leader, 'GET', '/v1/kv/rejoined-by-join?raw')).body).toBe('yes');
});
