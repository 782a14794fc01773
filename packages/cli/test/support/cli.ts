// Runs the built `registry` bin as a user would, never rejecting: the exit code is part of what
// the tests assert.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(__dirname, '..', '..', 'bin', 'registry.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without any REGISTRY_* / CONSUL_* the developer may have set. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(REGISTRY|CONSUL)_/.test(k)) delete env[k];
  return { ...env, ...extra };
}

export function cli(args: string[], opts: { env?: Record<string, string>; input?: string | Buffer; timeoutMs?: number; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: cleanEnv(opts.env), timeout: opts.timeoutMs ?? 20_000, encoding: 'utf8', cwd: opts.cwd }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    else child.stdin!.end();
  });
}

/** A long-running `registry …` (lock, watch); the caller must stop it. */
export function spawnCli(args: string[], env: Record<string, string> = {}): ChildProcess & { output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return Object.assign(child, { output: () => output, exited });
}
