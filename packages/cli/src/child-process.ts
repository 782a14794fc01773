// Running a user's command the way Consul's agent.ExecScript does: through `$SHELL -c` (default
// /bin/sh) with the words joined by spaces, or directly with -shell=false.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';

export function runChild(words: string[], opts: { shell: boolean; env?: NodeJS.ProcessEnv; stdio: StdioOptions }): ChildProcess {
  const env = { ...process.env, ...opts.env };
  if (opts.shell) return spawn(process.env.SHELL || '/bin/sh', ['-c', words.join(' ')], { env, stdio: opts.stdio });
  return spawn(words[0], words.slice(1), { env, stdio: opts.stdio });
}

/** Go's exec error text for a child's end: `exit status 3`, `signal: terminated`. */
export function exitText(code: number | null, signal: NodeJS.Signals | null): string | undefined {
  if (signal) return `signal: ${signal === 'SIGTERM' ? 'terminated' : signal === 'SIGKILL' ? 'killed' : signal}`;
  if (code !== 0) return `exit status ${code}`;
  return undefined;
}

