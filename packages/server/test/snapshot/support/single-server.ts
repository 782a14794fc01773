// One real server process (`registry agent -server -bootstrap-expect 1`) for the snapshot tests, on
// free loopback ports, with its own data dir and optional config file; killed only by its own PID.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../support/dev-agent';
import { freePort, spawnAgent, type AgentProcess } from '../../support/processes';

export interface Answer {
  status: number;
  body: Buffer;
  text: string;
  ms: number;
}

export class SingleServer {
  private constructor(
    readonly dir: string,
    readonly proc: AgentProcess,
  ) {}

  /** `before(dataDir)` runs before the server starts (e.g. to leave files a crash would have left). */
  static async start(name: string, config: Record<string, unknown> = {}, extraArgs: string[] = [], before?: (dataDir: string) => void): Promise<SingleServer> {
    const dir = mkdtempSync(join(tmpdir(), `registry-${name}-`));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    before?.(join(dir, 'data'));
    const proc = spawnAgent(
      ['-server', '-bootstrap-expect', '1', '-node', name, '-data-dir', join(dir, 'data'), '-config-file', join(dir, 'config.json'), '-dns-port', '-1', ...extraArgs],
      await freePort(),
      await freePort(),
      join(dir, 'agent.log'),
    );
    const server = new SingleServer(dir, proc);
    await waitFor(async () => (await (await fetch(`${proc.url}/v1/status/leader`)).json()) !== '', 60_000, 100);
    return server;
  }

  get url(): string {
    return this.proc.url;
  }

  get alive(): boolean {
    return this.proc.child.exitCode === null && this.proc.child.signalCode === null;
  }

  /** Resident memory of the agent process, in bytes (VmRSS of /proc/<pid>/status). */
  rssBytes(): number {
    const status = readFileSync(`/proc/${this.proc.child.pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (!kb) throw new Error('no VmRSS');
    return Number(kb[1]) * 1024;
  }

  /** Files left in the folder restores upload to (snapshot/archive-upload.ts). */
  uploads(): string[] {
    try {
      return readdirSync(join(this.dir, 'data', 'snapshot-uploads'));
    } catch {
      return [];
    }
  }

  /** Files left in the folder saves are spooled to (snapshot/snapshot-spool.ts). */
  saves(): string[] {
    try {
      return readdirSync(join(this.dir, 'data', 'snapshot-saves'));
    } catch {
      return [];
    }
  }

  log(): string {
    return readFileSync(join(this.dir, 'agent.log'), 'utf8');
  }

  /**
   * A request with a binary body, timed from its start to the end of its answer. `body` may be a
   * count of zero bytes to stream (never held whole in this process). The answer may come before
   * the body is all sent (a refusal): then the rest is not sent and a later socket error is ignored.
   */
  call(method: string, path: string, body?: Buffer | { zeros: number }, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<Answer> {
    const port = this.proc.httpPort;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      let answered = false;
      const length = body === undefined ? 0 : Buffer.isBuffer(body) ? body.length : body.zeros;
      const chunked = Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding');
      // A keep-alive connection, as curl's and fetch's: with `Connection: close` asked, a server that
      // answers before the body is all sent closes at once, and the answer can be lost to EPIPE.
      const agent = new Agent({ keepAlive: true });
      const req = request({ host: '127.0.0.1', port, method, path, agent, timeout: timeoutMs, headers: chunked ? headers : { ...headers, 'Content-Length': String(length) } }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('end', () => {
          const b = Buffer.concat(chunks);
          agent.destroy();
          resolve({ status: res.statusCode ?? 0, body: b, text: b.toString(), ms: Date.now() - started });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', (err) => {
        agent.destroy();
        if (!answered) reject(err);
      });
      if (body === undefined || Buffer.isBuffer(body)) {
        req.end(body);
        return;
      }
      const chunk = Buffer.alloc(1 << 20);
      let sent = 0;
      const pump = () => {
        while (sent < length && !answered && !req.destroyed) {
          const n = Math.min(chunk.length, length - sent);
          sent += n;
          if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
            req.once('drain', pump);
            return;
          }
        }
        if (sent >= length) req.end();
      };
      pump();
    });
  }

  async stop(): Promise<void> {
    if (this.alive) {
      this.proc.child.kill('SIGKILL');
      await this.proc.exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
