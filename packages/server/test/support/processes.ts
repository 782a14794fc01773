// Real agent processes for tests: spawned from the built CLI, on free loopback ports, killed
// only by their own PIDs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { entryRuntimeOf } from './node-flags';

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
  const entry = entryRuntimeOf(CLI);
  const child = spawn(
    process.execPath,
    [...entry.flags, CLI, 'agent', '-http-port', String(httpPort), '-server-port', String(serverPort), '-log-level', 'debug', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...entry.env, ...env } },
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  // Both streams into one file: neither may end it (whichever ended first closed it, and the other's
  // next write was an uncaught "write after end" that failed whatever test was running). It ends
  // when the child has closed both.
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.on('close', () => log.end());
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, httpPort, serverPort, url: `http://127.0.0.1:${httpPort}`, exited };
}
