/**
 * Runs a cluster of real `registry agent -server` processes on 127.0.0.1 for
 * failover, partition and linearizability tests: free ports from the OS, data
 * dirs and logs in a temporary folder, optionally every server→server link
 * through its own LinkProxy. It only ever signals the processes it spawned.
 *
 * Servers are numbered from 0; server i runs as node `s<i>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { entryRuntimeOf } from '../../support/node-flags';
import { agentArgs, dialMap, DIAL_MAP_ENV } from './agent-args';
import { httpAnswer, type HttpAnswer, type HttpOptions } from './http-answer';
import { LinkProxy } from './link-proxy';
import { freePorts } from '../../support/ports';
import { waitAllCaughtUp } from './caught-up';

const REPO_ROOT = resolve(__dirname, '../../../../..');
const CLI_BIN = join(REPO_ROOT, 'packages/cli/bin/registry.js');
const CLI_BUILD = join(REPO_ROOT, 'packages/cli/dist/main.js');

export interface ClusterOptions {
  /** Number of servers, each started with `-bootstrap-expect size` (default 3). */
  size?: number;
  /**
   * The last `nonVoters` servers run with `-non-voter` (Raft learners, issue #14): they join the
   * others through -retry-join and never bootstrap; the voters expect `size - nonVoters` (default 0).
   */
  nonVoters?: number;
  /** Put a LinkProxy on every server→server link so tests can partition (default false). */
  proxied?: boolean;
  /** Appended to every server's command line. */
  extraArgs?: readonly string[];
  /** Appended to server i's command line, after `extraArgs` (e.g. a `-config-file` of its own). */
  argsFor?: (i: number) => readonly string[];
  /** Added to every server's environment. */
  env?: Readonly<Record<string, string>>;
  /** Added to server i's environment, after `env` (e.g. a fake clock of its own: support/fake-clock.ts). */
  envFor?: (i: number) => Readonly<Record<string, string>>;
  /** Keep the data dirs and logs after `stop()` (also when REGISTRY_KEEP_CLUSTER_DIR=1). */
  keepDir?: boolean;
  /** The script run with `node` (default packages/cli/bin/registry.js; the kit's own tests use a fake). */
  bin?: string;
  /**
   * The script server i runs, asked at each start and restart (after `bin`'s default): servers of
   * different releases in one cluster, e.g. a rolling upgrade (test/upgrade) switches one at a time.
   */
  binFor?: (i: number) => string;
  /**
   * Data dir of server i instead of `<dir>/s<i>/data` (e.g. a small tmpfs the test mounted, to fill
   * its disk). The harness creates it when missing and never removes it: the test cleans it up.
   * Logs stay in `<dir>/s<i>/`.
   */
  dataDirs?: Readonly<Record<number, string>>;
  /**
   * Soft and hard RLIMIT_NOFILE of server i (started through `bash -c 'ulimit -n N; exec node …'`,
   * so the pid is still the server's): e.g. a low descriptor limit for a connection flood.
   */
  nofile?: Readonly<Record<number, number>>;
}

export interface ServerInfo {
  index: number;
  node: string;
  httpPort: number;
  serverPort: number;
  /** `127.0.0.1:<serverPort>`, as `/v1/status/leader` names it. */
  serverAddress: string;
  dataDir: string;
  logFile: string;
}

export type { HttpAnswer, HttpOptions } from './http-answer';

/**
 * The leader most servers agree on, or undefined. `answers` are what each
 * server's `/v1/status/leader` said (undefined: no answer, '' : no leader);
 * agreement of a majority of `size` is required so that a deposed leader
 * that still believes in itself is not taken for the leader.
 */
export function leaderByMajority(answers: ReadonlyArray<string | undefined>, size: number): string | undefined {
  const votes = new Map<string, number>();
  for (const a of answers) if (a) votes.set(a, (votes.get(a) ?? 0) + 1);
  for (const [address, count] of votes) if (count > size / 2) return address;
  return undefined;
}

export class ClusterHarness {
  private readonly children: Array<ChildProcess | undefined>;
  private readonly exits: Array<Promise<void> | undefined>;
  private readonly killAllOnExit = (): void => {
    for (const child of this.children) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };

  private constructor(
    readonly dir: string,
    readonly servers: readonly ServerInfo[],
    /** proxies[from][to], undefined on the diagonal or when not proxied. */
    private readonly proxies: ReadonlyArray<ReadonlyArray<LinkProxy | undefined>>,
    private readonly options: ClusterOptions,
  ) {
    this.children = servers.map(() => undefined);
    this.exits = servers.map(() => undefined);
    process.on('exit', this.killAllOnExit);
  }

  /** Spawns every server (without waiting for a leader: see `waitForLeader`). */
  static async start(options: ClusterOptions = {}): Promise<ClusterHarness> {
    if (options.bin === undefined && !existsSync(CLI_BUILD)) throw new Error(`${CLI_BUILD} is missing: run \`npm run build\` before cluster tests`);
    // Free ports are checked, released, then bound by the servers: another jest worker can take one
    // in between (support/ports.ts). A cluster that lost that race is started again on new ports.
    for (let attempt = 1; ; attempt++) {
      const cluster = await ClusterHarness.startOnce(options);
      if (attempt >= 3 || options.bin !== undefined || !(await cluster.lostAPortRace())) return cluster;
      await cluster.stop();
    }
  }

  /** Whether a server exited at start because its port was taken (waits until all run, at most 10 s). */
  private async lostAPortRace(): Promise<boolean> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const started = this.servers.map((s) => {
        if (!this.running(s.index)) return /listen EADDRINUSE/.test(this.logs(s.index)) ? 'lost' : 'exited';
        return /registry agent running/.test(this.logs(s.index)) ? 'running' : 'starting';
      });
      if (started.includes('lost')) return true;
      if (!started.includes('starting')) return false;
      await sleep(50);
    }
    return false;
  }

  private static async startOnce(options: ClusterOptions): Promise<ClusterHarness> {
    const size = options.size ?? 3;
    const dir = mkdtempSync(join(tmpdir(), 'registry-cluster-'));
    const ports = await freePorts(2 * size);
    const servers: ServerInfo[] = Array.from({ length: size }, (_, index) => {
      const serverPort = ports[2 * index + 1] as number;
      return {
        index,
        node: `s${index}`,
        httpPort: ports[2 * index] as number,
        serverPort,
        serverAddress: `127.0.0.1:${serverPort}`,
        dataDir: options.dataDirs?.[index] ?? join(dir, `s${index}`, 'data'),
        logFile: join(dir, `s${index}`, 'server.log'),
      };
    });
    const proxies: Array<Array<LinkProxy | undefined>> = [];
    for (const from of servers) {
      const row: Array<LinkProxy | undefined> = [];
      for (const to of servers) {
        row.push(options.proxied && from !== to ? await LinkProxy.start({ target: to.serverAddress }) : undefined);
      }
      proxies.push(row);
    }
    const cluster = new ClusterHarness(dir, servers, proxies, options);
    for (const s of servers) {
      mkdirSync(s.dataDir, { recursive: true });
      mkdirSync(dirname(s.logFile), { recursive: true });
      cluster.spawnServer(s.index);
    }
    return cluster;
  }

  /** The proxy carrying connections that server `from` dials to server `to` (only when `proxied`). */
  link(from: number, to: number): LinkProxy {
    const proxy = this.proxies[from]?.[to];
    if (!proxy) throw new Error(`no proxy for link s${from}→s${to} (start the cluster with proxied: true)`);
    return proxy;
  }

  /** Cuts every link between servers in different groups, both ways; links inside a group pass. */
  partition(...groups: number[][]): void {
    const groupOf = new Map<number, number>();
    groups.forEach((members, g) => members.forEach((i) => groupOf.set(i, g)));
    for (const from of this.servers) {
      for (const to of this.servers) {
        if (from === to) continue;
        const split = groupOf.get(from.index) !== groupOf.get(to.index);
        const proxy = this.link(from.index, to.index);
        if (split) proxy.blackhole();
        else proxy.pass();
      }
    }
  }

  /** Stops bytes from `from` to `to` on the connections either of them dialled; the other way still flows. */
  cutOneWay(from: number, to: number): void {
    this.link(from, to).dropOneDirection('out');
    this.link(to, from).dropOneDirection('in');
  }

  /** Every link back to `pass` (held bytes are then delivered). */
  heal(): void {
    for (const row of this.proxies) for (const proxy of row) proxy?.pass();
  }

  running(i: number): boolean {
    const child = this.children[i];
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  pid(i: number): number | undefined {
    return this.running(i) ? this.children[i]?.pid : undefined;
  }

  async http(i: number, method: string, path: string, body?: unknown, options: HttpOptions = {}): Promise<HttpAnswer> {
    const server = this.server(i);
    return httpAnswer({ host: '127.0.0.1', port: server.httpPort, label: `s${i}` }, method, path, body, options);
  }

  /** Index of the leader a majority of servers name, or undefined. */
  async leader(): Promise<number | undefined> {
    const answers = await Promise.all(
      this.servers.map(async (s) => {
        if (!this.running(s.index)) return undefined;
        try {
          const res = await this.http(s.index, 'GET', '/v1/status/leader', undefined, { timeoutMs: 1000 });
          return res.status === 200 ? res.json<string>() : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    const address = leaderByMajority(answers, this.servers.length);
    return this.servers.find((s) => s.serverAddress === address)?.index;
  }

  async waitForLeader(timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.leader();
      if (leader !== undefined) return leader;
      if (Date.now() > deadline) throw new Error(`no leader within ${timeoutMs} ms\n${this.diagnostics()}`);
      await sleep(100);
    }
  }

  /** Until every running server follows a leader and has caught up with it (caught-up.ts). */
  waitAllCaughtUp(timeoutMs = 30_000): Promise<void> {
    return waitAllCaughtUp(this, timeoutMs);
  }

  /**
   * Signals server i and waits for it to exit. Should it outlive `timeoutMs`
   * (a SIGTERM that does not end it), it is SIGKILLed and this throws.
   */
  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 10_000): Promise<void> {
    const child = this.children[i];
    if (!child || !this.running(i)) return;
    this.note(i, `harness: sending ${signal} to pid ${child.pid}`);
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      this.exits[i]?.then(() => true),
      new Promise<boolean>((done) => (timer = setTimeout(() => done(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!exited) {
      child.kill('SIGKILL');
      await this.exits[i];
      throw new Error(`s${i} did not exit within ${timeoutMs} ms of ${signal}\n${this.diagnostics()}`);
    }
  }

  /**
   * Empties stopped server i's data dir except its node-id: the same server (same id, same
   * address) comes back with no Raft state, as after a lost disk.
   */
  wipe(i: number): void {
    if (this.running(i)) throw new Error(`s${i} is still running (pid ${this.children[i]?.pid})`);
    const dir = this.server(i).dataDir;
    const nodeId = readFileSync(join(dir, 'node-id'), 'utf8');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'node-id'), nodeId);
  }

  /** Starts server i again on its data dir and ports (after `kill`). */
  async restart(i: number): Promise<void> {
    if (this.running(i)) throw new Error(`s${i} is still running (pid ${this.children[i]?.pid})`);
    this.spawnServer(i);
  }

  /** SIGTERM to every server still running, SIGKILL after 5 s, proxies closed; removes the folder unless kept. */
  async stop(): Promise<void> {
    await Promise.all(
      this.servers.map(async (s) => {
        try {
          await this.kill(s.index, 'SIGTERM', 5000);
        } catch {
          // Already SIGKILLed by kill(); a slow shutdown is not this call's failure.
        }
      }),
    );
    await Promise.all(this.proxies.flat().map((p) => p?.close()));
    process.off('exit', this.killAllOnExit);
    const keep = this.options.keepDir || process.env.REGISTRY_KEEP_CLUSTER_DIR === '1';
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Everything server i logged, across restarts. */
  logs(i: number): string {
    try {
      return readFileSync(this.server(i).logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** The last lines of every server's log, for a failing test's message. */
  diagnostics(lines = 30): string {
    return this.servers
      .map((s) => {
        const tail = this.logs(s.index).trimEnd().split('\n').slice(-lines).join('\n');
        return `--- s${s.index} (${this.running(s.index) ? `pid ${this.pid(s.index)}` : 'not running'}) ${s.logFile}\n${tail}`;
      })
      .join('\n');
  }

  private server(i: number): ServerInfo {
    const s = this.servers[i];
    if (!s) throw new Error(`no server ${i} in a cluster of ${this.servers.length}`);
    return s;
  }

  private spawnServer(i: number): void {
    const s = this.server(i);
    const peers = this.servers.filter((p) => p !== s);
    const proxied = this.options.proxied === true;
    const voters = this.servers.length - (this.options.nonVoters ?? 0);
    const nonVoter = i >= voters;
    const args = agentArgs({
      node: s.node,
      dataDir: s.dataDir,
      httpPort: s.httpPort,
      serverPort: s.serverPort,
      bootstrapExpect: nonVoter ? 0 : voters,
      retryJoin: peers.map((p) => (proxied ? this.link(i, p.index).address : p.serverAddress)),
      extraArgs: [...(nonVoter ? ['-non-voter'] : []), ...(this.options.extraArgs ?? []), ...(this.options.argsFor?.(i) ?? [])],
    });
    const bin = this.options.binFor?.(i) ?? this.options.bin ?? CLI_BIN;
    // The entry point's own environment (its `env -S` line), then the test's.
    const entry = entryRuntimeOf(bin);
    const env: NodeJS.ProcessEnv = { ...process.env, ...entry.env, ...this.options.env, ...this.options.envFor?.(i) };
    if (proxied) {
      env[DIAL_MAP_ENV] = dialMap(peers.map((p) => ({ peerAddress: p.serverAddress, proxyAddress: this.link(i, p.index).address })));
    }
    const log = openSync(s.logFile, 'a');
    try {
      const flags = entry.flags;
      writeSync(log, `--- harness: node ${[...flags, bin].join(' ')} ${args.join(' ')}\n`);
      const nofile = this.options.nofile?.[i];
      const child =
        nofile === undefined
          ? spawn(process.execPath, [...flags, bin, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', log, log] })
          : spawn('bash', ['-c', `ulimit -n ${Math.floor(nofile)} && exec "$0" "$@"`, process.execPath, ...flags, bin, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', log, log] });
      this.children[i] = child;
      this.exits[i] = new Promise<void>((done) => child.once('exit', () => done()));
      child.once('exit', (code, signal) => this.note(i, `harness: pid ${child.pid} exited (code ${code}, signal ${signal})`));
    } finally {
      closeSync(log); // the child holds its own copy
    }
  }

  private note(i: number, line: string): void {
    try {
      const log = openSync(this.server(i).logFile, 'a');
      writeSync(log, `--- ${new Date().toISOString()} ${line}\n`);
      closeSync(log);
    } catch {
      // Diagnostics only.
    }
  }
}


const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
