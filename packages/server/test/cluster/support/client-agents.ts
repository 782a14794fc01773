/**
 * Client agents (`registry agent` without -server) next to a ClusterHarness: each on its own free
 * loopback HTTP port, joining through `-retry-join` the servers given, data dir and log in the
 * cluster's folder. Only the processes started here are signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { freePort } from '../../support/ports';
import { entryRuntimeOf } from '../../support/node-flags';
import { join, resolve } from 'node:path';
import type { HttpAnswer } from './cluster-harness';

const REPO_ROOT = resolve(__dirname, '../../../../..');
const CLI_BIN = join(REPO_ROOT, 'packages/cli/bin/registry.js');

export interface ClientInfo {
  index: number;
  node: string;
  httpPort: number;
  dataDir: string;
  logFile: string;
}

export class ClientAgents {
  readonly clients: ClientInfo[] = [];
  private readonly children: Array<ChildProcess | undefined> = [];
  private readonly exits: Array<Promise<void> | undefined> = [];
  private readonly killAllOnExit = (): void => {
    for (const c of this.children) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };

  constructor(
    private readonly dir: string,
    /** `-retry-join` addresses (servers' RPC ports). */
    private readonly servers: readonly string[],
    /** Extra config (JSON) written to every client's config file. */
    private readonly config: Record<string, unknown> = {},
  ) {
    process.on('exit', this.killAllOnExit);
  }

  /** Start `count` more clients (nodes c0, c1, …). */
  async start(count: number): Promise<void> {
    for (let n = 0; n < count; n++) {
      const index = this.clients.length;
      const base = join(this.dir, `c${index}`);
      mkdirSync(join(base, 'data'), { recursive: true });
      const info: ClientInfo = { index, node: `c${index}`, httpPort: await freePort(), dataDir: join(base, 'data'), logFile: join(base, 'client.log') };
      this.clients.push(info);
      writeFileSync(join(base, 'config.json'), JSON.stringify(this.config));
      this.spawn(index);
    }
  }

  private spawn(i: number): void {
    const c = this.clients[i]!;
    const args = [
      'agent', '-node', c.node, '-data-dir', c.dataDir, '-bind', '127.0.0.1', '-client', '127.0.0.1',
      '-http-port', String(c.httpPort), '-dns-port', '-1', ...this.servers.flatMap((s) => ['-retry-join', s]),
      '-config-file', join(this.dir, `c${i}`, 'config.json'), '-log-level', 'info',
    ];
    const log = openSync(c.logFile, 'a');
    try {
      const entry = entryRuntimeOf(CLI_BIN);
      writeSync(log, `--- harness: node ${[...entry.flags, CLI_BIN].join(' ')} ${args.join(' ')}\n`);
      const child = spawn(process.execPath, [...entry.flags, CLI_BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...entry.env }, stdio: ['ignore', log, log] });
      this.children[i] = child;
      this.exits[i] = new Promise<void>((done) => child.once('exit', () => done()));
    } finally {
      closeSync(log);
    }
  }

  running(i: number): boolean {
    const c = this.children[i];
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.children[i];
    if (!child || !this.running(i)) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await this.exits[i];
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    await Promise.all(this.clients.map((c) => this.kill(c.index, 'SIGTERM')));
    process.off('exit', this.killAllOnExit);
  }

  logs(i: number): string {
    try {
      return readFileSync(this.clients[i]!.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  diagnostics(lines = 20): string {
    return this.clients.map((c) => `--- ${c.node}\n${this.logs(c.index).trimEnd().split('\n').slice(-lines).join('\n')}`).join('\n');
  }

  http(i: number, method: string, path: string, body?: unknown, timeoutMs = 5_000): Promise<HttpAnswer> {
    const port = this.clients[i]!.httpPort;
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise<HttpAnswer>((done, fail) => {
      const req = request({ host: '127.0.0.1', port, method, path, agent: false, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('error', fail);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          done({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: <T>() => JSON.parse(text) as T });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} on c${i} timed out`)));
      req.on('error', fail);
      req.end(payload);
    });
  }
}
