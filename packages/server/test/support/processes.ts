// Real agent processes for tests: spawned from the built CLI, on free loopback ports, killed
// only by their own PIDs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(__dirname, '../../../..');
export const CLI = join(REPO, 'packages/cli/bin/registry.js');

export { freePort } from './ports';

export interface AgentProcess {
  child: ChildProcess;
  httpPort: number;
  serverPort: number;
  url: string;
  exited: Promise<number | null>;
}

export function spawnAgent(args: string[], httpPort: number, serverPort: number, logFile: string, env?: Readonly<Record<string, string>>): AgentProcess {
  const child = spawn(
    process.execPath,
    [CLI, 'agent', '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'debug', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: env ? { ...process.env, ...env } : process.env },
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, httpPort, serverPort, url: `http://127.0.0.1:${httpPort}`, exited };
}
