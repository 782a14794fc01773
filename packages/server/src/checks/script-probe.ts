// Script and Docker checks (Consul's CheckMonitor and CheckDocker): a command run without a shell,
// or inside a container through the `docker` CLI, bounded by the check's timeout. Exit 0 is
// passing, 1 warning, anything else critical; stdout and stderr together are the output, of which
// only the last 4 KiB are kept (Consul's circular buffer). The command runs in a process group of
// its own so that a timeout — or the check being stopped — kills whatever it started too. Like the
// other probes it never throws: a command that cannot start is a critical result saying why.
import { spawn, type ChildProcess } from 'node:child_process';
import { formatDurationMs } from '@registry/store';
import type { CheckKind } from './check-spec';
import type { ProbeResult } from './check-output';
import { MAX_TIMER_MS } from './long-timer';

type ScriptKind = Extract<CheckKind, { type: 'script' }>;
type DockerKind = Extract<CheckKind, { type: 'docker' }>;

/** Consul's BufSize: the last this many bytes of a command's output are kept. */
export const SCRIPT_OUTPUT_BYTES = 4096;

/** The last SCRIPT_OUTPUT_BYTES written, and how many there were in all (Consul's circbuf). */
class TailBuffer {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  write(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept - this.chunks[0]!.length >= SCRIPT_OUTPUT_BYTES) this.kept -= this.chunks.shift()!.length;
  }

  /** Consul's text: the output, preceded by what was dropped when there was more. */
  text(): string {
    const all = Buffer.concat(this.chunks);
    const tail = all.subarray(Math.max(0, all.length - SCRIPT_OUTPUT_BYTES));
    const out = tail.toString('utf8');
    return this.total > tail.length ? `Captured ${tail.length} of ${this.total} bytes\n...\n${out}` : out;
  }
}

/** Go's os/exec texts for a command that cannot start, which users of Consul know. */
function startFailure(file: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT' && !file.includes('/')) return `exec: ${JSON.stringify(file)}: executable file not found in $PATH`;
  const why = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
  return `fork/exec ${file}: ${why}`;
}

/** Kill the command's whole process group (it leads one: `detached`). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL'); // the group is gone already, or was never made
    } catch {
      // nothing left to kill
    }
  }
}

/** Run `file args`; `signal` aborts (the check was stopped): the run is killed and reports nothing useful. */
export function runCommand(file: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const output = new TailBuffer();
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    let child: ChildProcess;
    try {
      // No shell (Consul's exec.Subprocess); stdin is empty, as Go gives a command without one.
      child = spawn(file, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: process.env, windowsHide: true });
    } catch (err) {
      done({ status: 'critical', output: startFailure(file, err as NodeJS.ErrnoException) });
      return;
    }
    const onAbort = () => {
      killGroup(child);
      done({ status: 'critical', output: 'check stopped' });
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => output.write(c));
    child.stderr!.on('data', (c: Buffer) => output.write(c));
    child.once('error', (err: NodeJS.ErrnoException) => {
      killGroup(child);
      done({ status: 'critical', output: startFailure(file, err) });
    });
    timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
      const captured = output.text();
      done({ status: 'critical', output: `Timed out (${formatDurationMs(timeoutMs)}) running check${captured ? `\n\n${captured}` : ''}` });
      // A descendant that left the group may hold the pipes open: stop reading them.
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, Math.min(timeoutMs, MAX_TIMER_MS));
    // 'close': the command exited and its output is all read (Go's cmd.Wait); a child it left
    // behind holding the pipes keeps the run going until the timeout kills the group.
    child.once('close', (code: number | null) => {
      if (timedOut) return;
      const text = output.text();
      done({ status: code === 0 ? 'passing' : code === 1 ? 'warning' : 'critical', output: text });
    });
  });
}

export function scriptProbe(kind: ScriptKind, signal?: AbortSignal): Promise<ProbeResult> {
  return runCommand(kind.args[0]!, kind.args.slice(1), kind.timeoutMs, signal);
}

/**
 * Consul 1.4 runs the check's Args in the container as they are (its Shell applies only to the
 * removed `Script` field); `docker exec` runs them the same way, and exits with the command's code.
 */
export async function dockerProbe(kind: DockerKind, signal?: AbortSignal): Promise<ProbeResult> {
  // `--`: a container ID starting with "-" is a name, never an option of docker exec.
  const r = await runCommand('docker', ['exec', '--', kind.containerId, ...kind.args], kind.timeoutMs, signal);
  // The CLI exits 1 for its own failures too (no such container, no daemon), which Consul, calling
  // the API, reports as critical: told apart from the command's exit 1 by the CLI's own words.
  if (r.status === 'warning' && DOCKER_CLI_FAILURE.test(r.output)) return { status: 'critical', output: r.output };
  return r;
}

const DOCKER_CLI_FAILURE = /^(Error response from daemon:|Cannot connect to the Docker daemon|error during connect:)/;
