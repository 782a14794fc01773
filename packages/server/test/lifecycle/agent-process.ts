// One `registry agent` process for lifecycle tests: started from the built CLI with exactly the
// flags a test gives (no -log-level, so config files decide it), its output kept in a file, and
// stopped by its own PID only.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
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
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
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
