/**
 * A cluster on hosts of their own (issue #25): each server, and each client agent, in a network
 * namespace with its own address on a bridge (support/netns.ts), started as a container starts it
 * (`-bind 0.0.0.0`, the same ports everywhere: support/host-agents.ts). It offers what the loopback
 * ClusterHarness offers the nemesis and the fault tests (FaultTarget), with the network's own
 * faults in place of link proxies: `partition` drops packets between hosts (iptables inside the
 * namespaces), `setLink` takes a host's link down. No test-only hook in the servers is involved.
 *
 * Agents are numbered from 0: servers first (`s<i>`), then client agents (`c<j>`, index
 * servers + j). It only ever signals the processes it spawned, and `stop()` removes the namespaces.
 */
import { readFileSync, rmSync, mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostAgent, HTTP_PORT, SERVER_PORT, type HostAgentSpec } from '../../support/host-agents';
import { NetnsNetwork, type Host } from '../../support/netns';
import { httpAnswer, type HttpAnswer, type HttpOptions } from './http-answer';
import { leaderByMajority } from './cluster-harness';
import type { FaultTarget } from './nemesis-faults';
import { waitAllCaughtUp } from './caught-up';

export interface HostClusterOptions {
  servers?: number;
  clients?: number;
  /** Appended to every agent's command line (e.g. `-log-level info` for a long run). */
  extraArgs?: readonly string[];
}

export interface HostMember {
  index: number;
  node: string;
  host: Host;
  server: boolean;
  /** `<host address>:8300`, as `/v1/status/leader` names a server. */
  serverAddress: string;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export class HostCluster implements FaultTarget {
  private readonly agents: Array<HostAgent | undefined>;

  private constructor(
    readonly net: NetnsNetwork,
    readonly dir: string,
    /** Servers then client agents, by index. */
    readonly members: readonly HostMember[],
    private readonly specs: HostAgentSpec[],
  ) {
    this.agents = members.map(() => undefined);
  }

  /** Makes the hosts and starts every agent (without waiting for a leader). On failure, removes what it made. */
  static async start(options: HostClusterOptions = {}): Promise<HostCluster> {
    const size = options.servers ?? 3;
    const clients = options.clients ?? 0;
    const dir = mkdtempSync(join(tmpdir(), 'registry-hostcluster-'));
    const net = NetnsNetwork.create();
    try {
      const members: HostMember[] = [];
      for (let i = 0; i < size + clients; i++) {
        const host = net.addHost();
        const server = i < size;
        members.push({ index: i, node: server ? `s${i}` : `c${i - size}`, host, server, serverAddress: `${host.address}:${SERVER_PORT}` });
      }
      const serverHosts = members.filter((m) => m.server).map((m) => m.host);
      const specs: HostAgentSpec[] = members.map((m) => ({
        host: m.host,
        node: m.node,
        dataDir: join(dir, m.node, 'data'),
        logFile: join(dir, `${m.node}.log`),
        server: m.server,
        bootstrapExpect: m.server ? size : undefined,
        join: serverHosts.filter((h) => h !== m.host),
        // Servers say where they are; client agents rely on the default for -bind 0.0.0.0.
        advertise: m.server,
        extraArgs: options.extraArgs,
      }));
      const cluster = new HostCluster(net, dir, members, specs);
      for (const m of members) await cluster.restart(m.index);
      return cluster;
    } catch (err) {
      net.remove();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  get servers(): readonly HostMember[] {
    return this.members.filter((m) => m.server);
  }

  get clients(): readonly HostMember[] {
    return this.members.filter((m) => !m.server);
  }

  agent(i: number): HostAgent {
    const a = this.agents[i];
    if (!a) throw new Error(`agent ${i} was never started`);
    return a;
  }

  http(i: number, method: string, path: string, body?: unknown, options: HttpOptions = {}): Promise<HttpAnswer> {
    const m = this.member(i);
    return httpAnswer({ host: m.host.address, port: HTTP_PORT, label: m.node }, method, path, body, options);
  }

  /** Index of the server a majority of servers name as leader, or undefined. */
  async leader(): Promise<number | undefined> {
    const answers = await Promise.all(
      this.servers.map(async (s) => {
        if (!this.running(s.index)) return undefined;
        try {
          const r = await this.http(s.index, 'GET', '/v1/status/leader', undefined, { timeoutMs: 1000 });
          return r.status === 200 ? r.json<string>() : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    const address = leaderByMajority(answers, this.servers.length);
    return this.servers.find((s) => s.serverAddress === address)?.index;
  }

  async waitForLeader(timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.leader();
      if (leader !== undefined) return leader;
      if (Date.now() > deadline) throw new Error(`no leader within ${timeoutMs} ms\n${this.diagnostics()}`);
      await sleep(200);
    }
  }

  /** Until every running server follows a leader and has caught up with it (caught-up.ts). */
  waitAllCaughtUp(timeoutMs = 30_000): Promise<void> {
    return waitAllCaughtUp(this, timeoutMs);
  }

  running(i: number): boolean {
    return this.agents[i]?.running === true;
  }

  pid(i: number): number | undefined {
    return this.running(i) ? this.agents[i]?.child.pid : undefined;
  }

  /** Signals agent i (its own pid) and waits for it to exit (SIGKILL after 15 s). */
  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.agents[i]?.kill(signal);
  }

  /** Starts agent i (again) on its host, data dir and ports. */
  async restart(i: number): Promise<void> {
    if (this.running(i)) throw new Error(`${this.member(i).node} is still running`);
    this.agents[i] = await HostAgent.start(this.specs[i] as HostAgentSpec);
  }

  /**
   * Empties stopped agent i's data dir; with `keepId` its node-id is put back, so the same
   * server (same id, name and address) comes back with no Raft state, as after a lost disk
   * restored from nothing but its identity.
   */
  wipe(i: number, options: { keepId: boolean }): void {
    if (this.running(i)) throw new Error(`${this.member(i).node} is still running`);
    const dataDir = (this.specs[i] as HostAgentSpec).dataDir;
    const nodeId = options.keepId ? readFileSync(join(dataDir, 'node-id'), 'utf8') : undefined;
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    if (nodeId !== undefined) writeFileSync(join(dataDir, 'node-id'), nodeId);
  }

  /**
   * Drops packets between the hosts of servers in different groups. Client agent j goes with
   * group j mod groups.length (so with two groups and two clients, each side has one); a server
   * in no group is not cut. The test process reaches every host throughout.
   */
  partition(...groups: number[][]): void {
    const hosts = groups.map((g) => g.map((i) => this.member(i).host));
    this.clients.forEach((c, j) => hosts[j % hosts.length]?.push(c.host));
    this.net.partition(hosts);
  }

  heal(): void {
    this.net.heal();
  }

  setLink(i: number, up: boolean): void {
    this.net.setLink(this.member(i).host, up);
  }

  logs(i: number): string {
    try {
      return readFileSync((this.specs[i] as HostAgentSpec).logFile, 'utf8');
    } catch {
      return '';
    }
  }

  diagnostics(lines = 30): string {
    return this.members
      .map((m) => {
        const tail = this.logs(m.index).trimEnd().split('\n').slice(-lines).join('\n');
        return `--- ${m.node} ${m.host.address} (${this.running(m.index) ? `pid ${this.pid(m.index)}` : 'not running'})\n${tail}`;
      })
      .join('\n');
  }

  /** SIGKILLs every agent still running, removes the namespaces (links, bridge, drop rules with them) and the folder. */
  async stop(): Promise<void> {
    await Promise.all(this.agents.map((a) => a?.kill('SIGKILL')));
    this.net.remove();
    if (process.env.REGISTRY_KEEP_CLUSTER_DIR !== '1') rmSync(this.dir, { recursive: true, force: true });
  }

  private member(i: number): HostMember {
    const m = this.members[i];
    if (!m) throw new Error(`no agent ${i} in a cluster of ${this.members.length}`);
    return m;
  }
}
