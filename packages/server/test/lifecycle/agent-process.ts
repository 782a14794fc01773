// One `registry agent` process for lifecycle tests: started from the built CLI with exactly the
// flags a test gives (no -log-level, so config files decide it), its output kept in a file, and
// stopped by its own PID only.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, freePort } from '../support/processes';
import { eventually } from '../support/wait';

export interface AgentProc {
  child: ChildProcess;
  url: string;
  httpPort: number;
  serverPort: number;
  exited: Promise<number | null>;
  log(): string;
  stop(): Promise<void>;
}

export async function startAgentProc(args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): Promise<AgentProc> {
  const httpPort = await freePort();
  const serverPort = await freePort();
  const child = spawn(process.execPath, [CLI, 'agent', '-http-port', String(httpPort), '-server-port', String(serverPort), '-dns-port', '-1', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const out = createWriteStream(logFile, { flags: 'a' });
  // As support/processes.ts spawnAgent: neither stream may end the file (whichever ended first closed
  // it, and the other's next write was an uncaught "write after end" that failed the next suite of
  // the worker); it ends once the child closed both. `exited` waits for that (2 s at most), so a
  // test reading the log of a refused start finds the refusal in it (a CI run read it before).
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  const logEnded = new Promise<void>((r) => child.on('close', () => out.end(() => r())));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code))).then(async (code) => {
    await Promise.race([logEnded, new Promise((r) => setTimeout(r, 2_000))]);
    return code;
  });
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  return { child, url: `http://127.0.0.1:${httpPort}`, httpPort, serverPort, exited, log, stop };
}

/** Until the agent has a leader and its own node is in the catalog (read with `token`). */
export async function whenReady(a: AgentProc, node: string, token?: string): Promise<void> {
  const headers: Record<string, string> = token ? { 'X-Registry-Token': token } : {};
  const ok = await eventually(async () => (await fetch(`${a.url}/v1/catalog/node/${node}`, { headers })).status === 200 && (await (await fetch(`${a.url}/v1/catalog/node/${node}`, { headers })).json()) !== null, 45_000);
  if (!ok) throw new Error(`agent never became ready:\n${a.log().slice(-3000)}`);
}

/** A server agent whose data dir outlives its restarts (persistingServer). */
export interface PersistingServer {
  /** The temporary folder: the data dir, the config file and the log are in it. */
  dir: string;
  dataDir: string;
  /** `<dir>/agent.json`, passed with -config-file when asked for (the test writes it). */
  configFile: string;
  /** The agent last started (undefined before the first start). */
  readonly agent: AgentProc | undefined;
  /** Starts the agent on the data dir and waits until it is ready. */
  start(): Promise<AgentProc>;
}

/**
 * One `registry agent -server -bootstrap-expect 1` named `node`, started and restarted on one data
 * dir in a temporary folder, stopped and removed after the file's tests (a jest afterAll): the
 * setup of the tests that restart an agent on what it persisted.
 */
export function persistingServer(prefix: string, node: string, opts: { configFile?: boolean } = {}): PersistingServer {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'agent.json');
  let agent: AgentProc | undefined;
  afterAll(async () => {
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    dataDir,
    configFile,
    get agent() {
      return agent;
    },
    async start() {
      const config = opts.configFile ? ['-config-file', configFile] : [];
      agent = await startAgentProc(['-server', '-bootstrap-expect', '1', '-node', node, '-data-dir', dataDir, ...config], join(dir, 'agent.log'));
      await whenReady(agent, node);
      return agent;
    },
  };
}
