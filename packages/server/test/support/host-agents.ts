// Agents on the namespace hosts of netns.ts, started as a container starts them: `-bind 0.0.0.0`,
// `-client 0.0.0.0`, the same ports on every host (8500 HTTP, 8300 server RPC), advertising the
// host's own address (or relying on the default). Only the PIDs spawned here are ever signalled.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { CLI, REPO } from './processes';
import type { Host } from './netns';
import { eventually } from './wait';

export const HTTP_PORT = 8500;
export const SERVER_PORT = 8300;

export interface HostAgentSpec {
  host: Host;
  node: string;
  dataDir: string;
  logFile: string;
  server: boolean;
  bootstrapExpect?: number;
  /** Hosts to -retry-join (their address at the server port). */
  join: readonly Host[];
  /** true: `-advertise <host address>`; false: rely on the default for `-bind 0.0.0.0`. */
  advertise: boolean;
  extraArgs?: readonly string[];
}

export class HostAgent {
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  private constructor(
    readonly spec: HostAgentSpec,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      }),
    );
  }

  static async start(spec: HostAgentSpec): Promise<HostAgent> {
    await mkdir(spec.dataDir, { recursive: true });
    const args = [
      'agent',
      ...(spec.server ? ['-server'] : []),
      '-node', spec.node, '-datacenter', 'dc1', '-data-dir', spec.dataDir,
      '-bind', '0.0.0.0', '-client', '0.0.0.0',
      ...(spec.advertise ? ['-advertise', spec.host.address] : []),
      '-http-port', String(HTTP_PORT), '-server-port', String(SERVER_PORT),
      ...(spec.server && spec.bootstrapExpect ? ['-bootstrap-expect', String(spec.bootstrapExpect)] : []),
      ...spec.join.flatMap((h) => ['-retry-join', `${h.address}:${SERVER_PORT}`]),
      '-log-level', 'debug',
      ...(spec.extraArgs ?? []),
    ];
    // `ip netns exec` enters the namespace and execs node: the child's PID is the agent's.
    const child = spawn('ip', ['netns', 'exec', spec.host.ns, process.execPath, CLI, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(spec.logFile, { flags: 'a' });
    log.write(`--- ${spec.host.ns}: node registry ${args.join(' ')}\n`);
    // Neither stream may end the shared file (see processes.ts spawnAgent): it ends once the child closed both.
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    child.on('close', () => log.end());
    return new HostAgent(spec, child);
  }

  get url(): string {
    return `http://${this.spec.host.address}:${HTTP_PORT}`;
  }

  /** The server address others reach it by. */
  get serverAddress(): string {
    return `${this.spec.host.address}:${SERVER_PORT}`;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  async http(method: string, path: string, body?: string, timeoutMs = 5_000): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(this.url + path, { method, body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }

  async json<T = unknown>(path: string): Promise<T> {
    const res = await this.http('GET', path);
    if (res.status !== 200) throw new Error(`${this.spec.node} GET ${path}: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as T;
  }

  /** Waits for its HTTP API to answer (≤ timeoutMs: a start takes seconds of CPU, more on a shared machine). */
  async ready(timeoutMs = 60_000): Promise<void> {
    const ok = await eventually(async () => (await this.http('GET', '/v1/agent/self', undefined, 1_000)).status === 200, timeoutMs, 100);
    if (!ok) throw new Error(`${this.spec.node} did not answer on ${this.url} within ${timeoutMs} ms\n${this.logTail()}`);
  }

  /** Signals its own PID and waits (≤ 15 s) for it to exit. */
  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.running) return;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  logTail(lines = 40): string {
    try {
      return readFileSync(this.spec.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  async wipe(): Promise<void> {
    await rm(this.spec.dataDir, { recursive: true, force: true });
  }
}

/** Kills every agent still running (SIGKILL, own PIDs only). */
export async function killAll(agents: readonly HostAgent[]): Promise<void> {
  await Promise.all(agents.map((a) => a.kill('SIGKILL')));
}
