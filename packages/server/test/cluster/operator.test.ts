// Operating a three-server cluster: the Raft configuration, leadership transfer, removing a dead
// peer, a graceful leave, joining a new server, and catching up by snapshot after compaction.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnAgent, type AgentProcess } from '../support/processes';
import { eventually } from '../support/wait';
import { ClusterHarness } from './support/cluster-harness';

jest.setTimeout(180_000);

let cluster: ClusterHarness;
let extra: AgentProcess | null = null;
afterEach(async () => {
  if (extra && extra.child.exitCode === null) {
    extra.child.kill('SIGKILL');
    await extra.exited;
  }
  extra = null;
  await cluster?.stop();
});



interface RaftConfiguration {
  Servers: { ID: string; Node: string; Address: string; Leader: boolean; Voter: boolean }[];
  Index: number;
}

test('configuration, peers, self and members describe the cluster; transfer-leader moves leadership', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  const follower = (leader + 1) % 3;

  // A follower that has not heard from the leader yet (a slow start on a busy host: a CI run once
  // asked too early) holds no configuration; it is asked once it holds one, as members are below.
  const configuration = async () => (await cluster.http(follower, 'GET', '/v1/operator/raft/configuration')).json<RaftConfiguration>();
  expect(await eventually(async () => (await configuration()).Servers.length > 0, 10_000)).toBe(true);
  const conf = await configuration();
  expect(conf.Servers).toHaveLength(3);
  expect(conf.Servers.filter((s) => s.Leader)).toHaveLength(1);
  expect(conf.Servers.every((s) => s.Voter)).toBe(true);
  expect(conf.Servers.map((s) => s.Node).sort()).toEqual(['s0', 's1', 's2']);

  const peers = (await cluster.http(follower, 'GET', '/v1/status/peers')).json<string[]>();
  expect(peers.sort()).toEqual(cluster.servers.map((s) => s.serverAddress).sort());
  const self = (await cluster.http(follower, 'GET', '/v1/agent/self')).json<{ Config: { NodeName: string; Datacenter: string } }>();
  expect(self.Config).toMatchObject({ NodeName: `s${follower}`, Datacenter: 'dc1' });
  expect(
    await eventually(async () => {
      const members = (await cluster.http(follower, 'GET', '/v1/agent/members')).json<{ Name: string; Status: number }[]>();
      return members.length === 3 && members.every((m) => m.Status === 1);
    }, 10_000),
  ).toBe(true);

  // Asked through a follower; the follower forwards it to the leader. A server that has not caught
  // up with a leader yet does not stand for election (docs/raft.md), so a transfer to it would wait
  // out its 5 s bound on a slow start: all are caught up first, and the client waits longer than
  // that bound (a CI run once timed out at the client's 5 s).
  await cluster.waitAllCaughtUp();
  const t = await cluster.http(follower, 'POST', '/v1/operator/raft/transfer-leader', undefined, { timeoutMs: 15_000 });
  expect(t.status).toBe(200);
  expect(await eventually(async () => ((await cluster.leader()) ?? leader) !== leader, 5_000)).toBe(true);
});

test('a dead server removed from the configuration leaves a cluster of two that still commits', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  const victim = (leader + 2) % 3;
  await cluster.kill(victim, 'SIGKILL');
  const bad = await cluster.http(leader, 'DELETE', '/v1/operator/raft/peer');
  expect(bad.status).toBe(400);
  const r = await cluster.http(leader, 'DELETE', `/v1/operator/raft/peer?address=${cluster.servers[victim].serverAddress}`);
  expect(r.status).toBe(200);
  const conf = (await cluster.http(leader, 'GET', '/v1/operator/raft/configuration')).json<RaftConfiguration>();
  expect(conf.Servers.map((s) => s.Address)).not.toContain(cluster.servers[victim].serverAddress);
  const w = await cluster.http(leader, 'PUT', '/v1/catalog/register', { Node: 'after-remove', Address: '10.0.0.1' });
  expect(w.body).toBe('true');
});

test('a server that leaves is removed from the configuration and the other two keep a quorum', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  const leaving = (leader + 1) % 3;
  // The leave answers once a configuration without the server is committed (a CI run once saw a
  // 500 "leadership lost" here); both remaining servers then already hold that configuration.
  const r = await cluster.http(leaving, 'PUT', '/v1/agent/leave', undefined, { timeoutMs: 40_000 });
  expect(r.status).toBe(200);
  const remaining = [0, 1, 2].filter((i) => i !== leaving);
  for (const i of remaining) {
    const conf = (await cluster.http(i, 'GET', '/v1/operator/raft/configuration')).json<RaftConfiguration>();
    expect(conf.Servers.map((s) => s.Address).sort()).toEqual(remaining.map((n) => cluster.servers[n].serverAddress).sort());
  }
  expect(await eventually(async () => !cluster.running(leaving), 10_000)).toBe(true);
  // Two of two: still a quorum, even if the leader is the one asked to write through.
  for (const i of remaining) {
    const w = await cluster.http(i, 'PUT', '/v1/catalog/register', { Node: `after-leave-${i}`, Address: '10.0.0.1' }, { timeoutMs: 10_000 });
    expect(w.body).toBe('true');
  }
});

test('a new server joins through PUT /v1/agent/join and receives the data', async () => {
  cluster = await ClusterHarness.start({ size: 3 });
  const leader = await cluster.waitForLeader(15_000);
  await cluster.http(leader, 'PUT', '/v1/catalog/register', { Node: 'before-join', Address: '10.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'registry-join-'));
  const httpPort = await freePort();
  const serverPort = await freePort();
  extra = spawnAgent(['-server', '-node', 's3', '-data-dir', join(dir, 'data')], httpPort, serverPort, join(dir, 'agent.log'));
  const url = extra.url;
  expect(await eventually(async () => (await fetch(`${url}/v1/status/peers`)).status === 200, 15_000)).toBe(true);
  const j = await fetch(`${url}/v1/agent/join/${cluster.servers[leader].serverAddress}`, { method: 'PUT' });
  expect(j.status).toBe(200);
  expect(
    await eventually(async () => {
      const conf = (await cluster.http(leader, 'GET', '/v1/operator/raft/configuration')).json<RaftConfiguration>();
      return conf.Servers.length === 4;
    }, 10_000),
  ).toBe(true);
  expect(
    await eventually(async () => {
      const nodes = (await (await fetch(`${url}/v1/catalog/nodes?stale`)).json()) as { Node: string }[];
      return nodes.some((n) => n.Node === 'before-join');
    }, 10_000),
  ).toBe(true);
});

test('a server down while the log was compacted catches up by snapshot when it returns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-snap-'));
  const config = join(dir, 'raft.json');
  writeFileSync(config, JSON.stringify({ raft: { snapshot_threshold: 40, snapshot_interval_ms: 0, trailing_logs: 5 } }));
  cluster = await ClusterHarness.start({ size: 3, extraArgs: ['-config-file', config] });
  const leader = await cluster.waitForLeader(15_000);
  const behind = (leader + 1) % 3;
  await cluster.kill(behind, 'SIGKILL');
  for (let i = 0; i < 150; i++) {
    const w = await cluster.http(leader, 'PUT', '/v1/catalog/register', { Node: `snap-${i}`, Address: '10.0.0.1' });
    expect(w.body).toBe('true');
  }
  await cluster.restart(behind);
  expect(
    await eventually(async () => {
      const nodes = (await cluster.http(behind, 'GET', '/v1/catalog/nodes?stale')).json<{ Node: string }[]>().map((n) => n.Node);
      return Array.from({ length: 150 }, (_, i) => `snap-${i}`).every((n) => nodes.includes(n));
    }, 20_000),
  ).toBe(true);
  expect(cluster.logs(leader) + cluster.logs(behind)).toMatch(/snapshot/i);
});
