// A cluster on many hosts (issue #25): every server and client agent in a network namespace of its
// own, `-bind 0.0.0.0`, the same ports everywhere, reachable only at its host's address — the way
// containers run. On loopback a bind address and the address others reach a server by coincide;
// here a server that names itself by its bind address (0.0.0.0:8300), or advertises 127.0.0.1,
// reaches only itself. Needs root and iproute2 (`ip netns`); skipped with the reason printed
// otherwise. The namespaces, links and processes are removed afterwards, also on failure.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HostAgent, killAll, SERVER_PORT, type HostAgentSpec } from '../support/host-agents';
import { NetnsNetwork, netnsUnavailable, type Host } from '../support/netns';
import { CLI } from '../support/processes';
import { eventually, sleep } from '../support/wait';

jest.setTimeout(300_000);

const unavailable = netnsUnavailable();
if (unavailable) console.warn(`multi-host.test.ts skipped: ${unavailable}`);
const describeHosts = unavailable ? describe.skip : describe;

interface RaftServer { ID: string; Node: string; Address: string; Leader: boolean; Voter: boolean }

let net: NetnsNetwork;
let dir: string;
const agents: HostAgent[] = [];

async function start(spec: Omit<HostAgentSpec, 'dataDir' | 'logFile'> & { dataDir?: string }): Promise<HostAgent> {
  const agent = await HostAgent.start({ ...spec, dataDir: spec.dataDir ?? join(dir, `${spec.node}-${agents.length}`), logFile: join(dir, `${spec.node}.log`) });
  agents.push(agent);
  return agent;
}

function logs(list: readonly HostAgent[]): string {
  return list.map((a) => `--- ${a.spec.node} (${a.spec.host.address}) ---\n${a.logTail(25)}`).join('\n');
}

/** The server every live one names as leader, once they agree on one of them (else null). */
async function agreedLeader(servers: readonly HostAgent[]): Promise<HostAgent | null> {
  const names = await Promise.all(servers.map((s) => s.json<string>('/v1/status/leader').catch(() => '')));
  if (names.some((n) => n !== names[0])) return null;
  return servers.find((s) => s.serverAddress === names[0]) ?? null;
}

async function waitLeader(servers: readonly HostAgent[], timeoutMs = 60_000): Promise<HostAgent> {
  let leader: HostAgent | null = null;
  const ok = await eventually(async () => (leader = await agreedLeader(servers)) !== null, timeoutMs, 200);
  if (!ok || !leader) throw new Error(`no agreed leader among ${servers.map((s) => s.spec.node)} in ${timeoutMs} ms\n${logs(servers)}`);
  return leader;
}

async function put(agent: HostAgent, key: string, value: string): Promise<void> {
  const res = await agent.http('PUT', `/v1/kv/${key}`, value, 10_000);
  if (res.status !== 200 || res.text.trim() !== 'true') throw new Error(`PUT ${key} via ${agent.spec.node}: ${res.status} ${res.text}`);
}

async function staleValue(agent: HostAgent, key: string): Promise<string | null> {
  const res = await agent.http('GET', `/v1/kv/${key}?stale`, undefined, 2_000);
  if (res.status !== 200) return null;
  const [entry] = JSON.parse(res.text) as Array<{ Value: string | null }>;
  return entry.Value === null ? '' : Buffer.from(entry.Value, 'base64').toString();
}

/** Every server has applied the key (a stale read answers it from its own state). */
async function expectReplicated(servers: readonly HostAgent[], key: string, value: string, timeoutMs = 30_000): Promise<void> {
  const ok = await eventually(async () => (await Promise.all(servers.map((s) => staleValue(s, key)))).every((v) => v === value), timeoutMs, 200);
  if (!ok) {
    const seen = await Promise.all(servers.map(async (s) => `${s.spec.node}=${await staleValue(s, key).catch((e) => String(e))}`));
    throw new Error(`${key} not on every server within ${timeoutMs} ms: ${seen.join(' ')}\n${logs(servers)}`);
  }
}

async function configuration(agent: HostAgent): Promise<RaftServer[]> {
  return (await agent.json<{ Servers: RaftServer[] }>('/v1/operator/raft/configuration')).Servers;
}

const exec = promisify(execFile);

async function listPeers(agent: HostAgent): Promise<string[][]> {
  const { stdout } = await exec(process.execPath, [CLI, 'operator', 'raft', 'list-peers', '-http-addr', `${agent.spec.host.address}:8500`], { timeout: 10_000 });
  return stdout.trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/));
}

/** `registry healthcheck` run inside the agent's namespace, as a container's HEALTHCHECK runs. */
async function healthcheck(agent: HostAgent): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await exec('ip', ['netns', 'exec', agent.spec.host.ns, process.execPath, CLI, 'healthcheck', '-http-addr', '127.0.0.1:8500', '-timeout', '8000'], { timeout: 15_000 });
    return { code: 0, output: stdout.trim() };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, output: `${err.stdout ?? ''}${err.stderr ?? ''}`.trim() };
  }
}

async function expectHealthy(agents: readonly HostAgent[]): Promise<void> {
  // Eventually: a server that just joined is healthy once the leader has heard from it.
  await Promise.all(agents.map(async (a) => {
    let last = { code: -1, output: '' };
    const ok = await eventually(async () => (last = await healthcheck(a)).code === 0, 20_000, 500);
    if (!ok) throw new Error(`${a.spec.node} not healthy: ${last.output}`);
    expect(last.output).toMatch(/^healthy: /);
  }));
}

/** Three servers on three hosts, each told to join the other two. */
async function startServers(hosts: readonly Host[], options: { advertise: boolean; bootstrapExpect?: number; names?: string[] }): Promise<HostAgent[]> {
  return Promise.all(
    hosts.map((host, i) =>
      start({
        host, node: options.names?.[i] ?? `s${i}`, server: true, bootstrapExpect: options.bootstrapExpect ?? hosts.length,
        join: hosts.filter((h) => h !== host), advertise: options.advertise,
      }),
    ),
  );
}

/** A formed cluster: one leader named by all, its members at their hosts' addresses, a write on every server. */
async function expectFormed(servers: readonly HostAgent[], key: string): Promise<void> {
  const leader = await waitLeader(servers);
  const addresses = servers.map((s) => s.serverAddress).sort();
  expect(addresses).toContain(leader.serverAddress);
  const peersOf = async (s: HostAgent) => (await s.json<string[]>('/v1/status/peers')).sort();
  // A server may name the leader a moment before it holds the configuration.
  await eventually(async () => (await Promise.all(servers.map(peersOf))).every((p) => JSON.stringify(p) === JSON.stringify(addresses)), 15_000);
  for (const s of servers) expect(await peersOf(s)).toEqual(addresses);
  // A server that joined a running cluster is a learner until it has caught up and the leader's
  // next autopilot pass (each second) promotes it.
  const voters = async () => (await configuration(leader)).filter((s) => s.Voter).map((s) => s.Address).sort();
  await eventually(async () => JSON.stringify(await voters()) === JSON.stringify(addresses), 15_000);
  expect(await voters()).toEqual(addresses);
  await put(servers[0], key, key);
  await expectReplicated(servers, key, key);
  await expectHealthy(servers);
}

async function stopAll(): Promise<void> {
  await killAll(agents);
  await Promise.all(agents.map((a) => a.wipe()));
  agents.length = 0;
}

describeHosts('a cluster on many hosts (network namespaces, -bind 0.0.0.0)', () => {
  let hosts: Host[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'registry-hosts-'));
    net = NetnsNetwork.create();
    hosts = [net.addHost(), net.addHost(), net.addHost()];
  });

  afterAll(async () => {
    await killAll(agents);
    net?.remove();
    if (process.env.REGISTRY_KEEP_CLUSTER_DIR !== '1') await rm(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await stopAll();
  });

  test('forms every time: all three servers replicate, each named by its host address', async () => {
    // 1. All at once, each advertising its address.
    await expectFormed(await startServers(hosts, { advertise: true }), 'round-1');
    await stopAll();
    // 2. No -advertise: the default must be the host's private address, not 127.0.0.1 (finding 3).
    await expectFormed(await startServers(hosts, { advertise: false }), 'round-2');
    await stopAll();
    // 3. The third server joins a running cluster through its leader and hears the leader before it
    //    knows the configuration: the frames must name the leader by its address, not 0.0.0.0:8300 (finding 1).
    const first = await startServers(hosts.slice(0, 2), { advertise: true, bootstrapExpect: 2 });
    const leader = await waitLeader(first);
    await put(leader, 'before-join', 'x');
    const third = await start({ host: hosts[2], node: 's2', server: true, join: hosts.slice(0, 2), advertise: true });
    await expectFormed([...first, third], 'round-3');
    await expectReplicated([third], 'before-join', 'x');
  });

  test('-bind 0.0.0.0 without -advertise refuses to guess between several addresses, or none', async () => {
    const several = net.addHost({ extraAddresses: [`${net.subnet}.200/24`] });
    const none = net.addHost({ address: false });
    const a = await start({ host: several, node: 'several', server: true, bootstrapExpect: 1, join: [], advertise: false });
    const b = await start({ host: none, node: 'none', server: true, bootstrapExpect: 1, join: [], advertise: false });
    const exits = await Promise.race([Promise.all([a.exited, b.exited]), sleep(60_000).then(() => null)]);
    expect(exits).not.toBeNull();
    expect(exits).not.toContain(0);
    expect(a.logTail()).toContain(`multiple private IPv4 addresses found (${several.address}, ${net.subnet}.200)`);
    expect(b.logTail()).toContain('no private IPv4 address found');
  });

  test('failover across hosts: SIGKILL and SIGTERM of the leader, a cut link, a client agent', async () => {
    const servers = await startServers(hosts, { advertise: true });
    await expectFormed(servers, 'formed');
    // A client agent on a host of its own, relying on the default advertise address.
    const clientHost = net.addHost();
    const client = await start({ host: clientHost, node: 'c0', server: false, join: hosts, advertise: false });
    await client.ready();
    const members = async () => (await servers[0].json<Array<{ Name: string; Addr: string; Status: number }>>('/v1/agent/members')).find((m) => m.Name === 'c0');
    expect(await eventually(async () => (await members())?.Status === 1, 15_000)).toBe(true);
    expect((await members())?.Addr).toBe(clientHost.address);
    const node = await servers[0].json<{ Node: { Address: string } }>('/v1/catalog/node/c0');
    expect(node.Node.Address).toBe(clientHost.address);
    await expectHealthy([client]);
    await put(client, 'via-client', '1');
    await expectReplicated(servers, 'via-client', '1');

    // SIGKILL of the leader: the two others elect a new one; writes go through them and the client.
    let leader = await waitLeader(servers);
    const killed = servers.indexOf(leader);
    await leader.kill('SIGKILL');
    const survivors = servers.filter((s) => s !== leader);
    const next = await waitLeader(survivors, 30_000);
    expect(next).not.toBe(leader);
    for (const s of survivors) await put(s, `after-kill-${s.spec.node}`, 'y');
    await put(client, 'after-kill-client', 'y');
    // Back on its data dir, it catches up.
    servers[killed] = await start({ ...leader.spec, join: hosts.filter((h) => h !== leader.spec.host) });
    await servers[killed].ready();
    await expectReplicated(servers, 'after-kill-client', 'y');
    await waitLeader(servers);

    // SIGTERM of the leader: it hands leadership over before it exits.
    leader = await waitLeader(servers);
    const termed = servers.indexOf(leader);
    const t0 = Date.now();
    await leader.kill('SIGTERM');
    const successor = await waitLeader(servers.filter((s) => s !== leader), 10_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await put(successor, 'after-term', 'z');
    servers[termed] = await start({ ...leader.spec, join: hosts.filter((h) => h !== leader.spec.host) });
    await servers[termed].ready();
    await expectReplicated(servers, 'after-term', 'z');

    // The leader's link goes down: the other two go on without it; once back it follows and catches up.
    leader = await waitLeader(servers);
    net.setLink(leader.spec.host, false);
    try {
      const majority = servers.filter((s) => s !== leader);
      const other = await waitLeader(majority, 30_000);
      expect(other).not.toBe(leader);
      await put(majority[0], 'during-cut', 'w');
      await put(client, 'during-cut-client', 'w');
      // Cut off, the old leader is not healthy (asked inside its namespace, as a container's check is).
      let last = { code: 0, output: '' };
      expect(await eventually(async () => (last = await healthcheck(leader)).code === 1, 20_000, 500)).toBe(true);
      expect(last.output).toMatch(/^unhealthy: /);
    } finally {
      net.setLink(leader.spec.host, true);
    }
    await expectReplicated(servers, 'during-cut-client', 'w');
    const healed = await waitLeader(servers);
    expect(servers).toContain(healed);
  });

  test('replacing a server: a new id at the same address, or with the same name elsewhere, replaces the old member', async () => {
    const servers = await startServers(hosts, { advertise: true });
    await expectFormed(servers, 'formed');
    const idsBefore = (await configuration(servers[0])).map((s) => s.ID);

    // Same name, same host, empty data dir (a dead disk): the cluster stays available throughout.
    let leader = await waitLeader(servers);
    const victim = servers.find((s) => s !== leader)!;
    await victim.kill('SIGKILL');
    await victim.wipe();
    const replacement = await start({ ...victim.spec, join: hosts.filter((h) => h !== victim.spec.host) });
    servers[servers.indexOf(victim)] = replacement;
    await replacement.ready();
    for (let i = 0; i < 10; i++) {
      await put(leader, `while-replacing-${i}`, String(i));
      await sleep(300);
    }
    await expectReplicated(servers, 'while-replacing-9', '9');
    const voters = async () => (await listPeers(leader)).filter((row) => row[4] === 'true');
    expect(await eventually(async () => (await voters()).length === 3 && (await configuration(leader)).length === 3, 15_000)).toBe(true);
    const peers = await voters();
    expect(peers.map((row) => row[2]).sort()).toEqual(servers.map((s) => s.serverAddress).sort());
    expect(peers.map((row) => row[1])).not.toEqual(expect.arrayContaining(idsBefore));
    // And healthy: the old id's catalog node reserved the name, so the leader could never register
    // the new one and its healthcheck failed for good (the compose scenario's last step).
    expect(await eventually(async () => (await healthcheck(replacement)).code === 0, 30_000, 500)).toBe(true);

    // Same node name on another host (the container came back with a new address).
    leader = await waitLeader(servers);
    const moved = servers.find((s) => s !== leader)!;
    await moved.kill('SIGKILL');
    const newHost = net.addHost();
    const arrived = await start({ ...moved.spec, host: newHost, dataDir: join(dir, `${moved.spec.node}-moved`), join: hosts.filter((h) => h !== moved.spec.host) });
    servers[servers.indexOf(moved)] = arrived;
    await arrived.ready();
    expect(await eventually(async () => {
      const conf = await configuration(leader);
      return conf.length === 3 && conf.some((s) => s.Address === arrived.serverAddress) && !conf.some((s) => s.Address === moved.serverAddress);
    }, 20_000)).toBe(true);
    await put(leader, 'after-move', 'm');
    await expectReplicated(servers, 'after-move', 'm');
    expect(await eventually(async () => (await healthcheck(arrived)).code === 0, 30_000, 500)).toBe(true);
    expect(await waitLeader(servers)).toBeDefined();
  });
});
