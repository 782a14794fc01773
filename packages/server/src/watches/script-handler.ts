// A watch's script handler (Consul's makeWatchHandler): the command gets the watch's value as JSON
// on stdin and its index in the environment; what it prints is kept only as its last 4 KiB (Consul's
// WatchBufSize), however much it prints. Unlike Consul, a handler is given at most
// `watch_handler_timeout` (default 10 min): then its whole process group is killed, so a hung handler
// holds up only its own watch, and not for ever. It never throws: every way it can go wrong — a command
// that does not exist, a non-zero exit, a signal, the timeout — is a rejection with the reason.
import { spawn, type ChildProcess } from 'node:child_process';
import { setLongTimeout, type LongTimer } from '../checks/long-timer';
import type { WatchHandler } from './watch-definition';

/** Consul's WatchBufSize: the tail of a handler's output that is kept. */
export const OUTPUT_TAIL_BYTES = 4096;

/** The last `limit` bytes written, and how many there were in all. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly limit = OUTPUT_TAIL_BYTES) {}

  write(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept - this.chunks[0]!.length >= this.limit) this.kept -= this.chunks.shift()!.length;
  }

  /** Consul's wording: "Captured 4096 of N bytes\n...\n<tail>" when some was dropped. */
  text(): string {
    const all = Buffer.concat(this.chunks);
    const tail = all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
    return this.total > this.limit ? `Captured ${this.limit} of ${this.total} bytes\n...\n${tail}` : tail;
  }
}

/** How much of a failed handler's output its failure line repeats (the debug line has the 4 KiB). */
const REASON_OUTPUT_CHARS = 512;

/** Output for a log line: control characters (a handler printing binary) become U+FFFD. */
// eslint-disable-next-line no-control-regex
export const printable = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\ufffd');

export interface ScriptRun {
  /** Resolves with the output's tail when the handler exited 0; rejects with why otherwise. */
  done: Promise<string>;
  /** Kill the handler's process group now (agent stop). */
  kill(): void;
}

type ScriptHandler = Extract<WatchHandler, { kind: 'args' | 'shell' }>;

export function runScriptHandler(handler: ScriptHandler, input: string, env: Record<string, string>, timeoutMs: number): ScriptRun {
  let child: ChildProcess | undefined;
  let finished = false;
  const killGroup = (signal: NodeJS.Signals) => {
    if (!child?.pid || finished) return;
    try {
      // The handler runs in a group of its own (detached): its children (a shell's `sleep`, which
      // may hold the output pipes after the shell exited) go too.
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const done = new Promise<string>((resolve, reject) => {
    const [cmd, ...args] = handler.kind === 'shell' ? [process.env.SHELL || '/bin/sh', '-c', handler.command] : handler.argv;
    if (!cmd) {
      reject(new Error('need an executable to run'));
      return;
    }
    const output = new OutputTail();
    // A long timeout ("1000h") is waited out, not fired at once as a plain setTimeout over 24.8 days is.
    let timer: LongTimer | undefined;
    let timedOut = false;
    try {
      // Throws for what cannot be spawned at all (a NUL byte in an argument).
      child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      reject(new Error(`failed to start: ${(err as Error).message}`));
      return;
    }
    const started = child;
    started.stdout!.on('data', (c: Buffer) => output.write(c));
    started.stderr!.on('data', (c: Buffer) => output.write(c));
    // A handler that does not read its stdin closes it early: EPIPE is not a failure.
    started.stdin!.on('error', () => undefined);
    started.stdin!.end(input);
    if (timeoutMs > 0) {
      timer = setLongTimeout(() => {
        timedOut = true;
        killGroup('SIGKILL');
      }, timeoutMs);
    }
    // A command that does not exist is an 'error' (ENOENT), with 'close' after it or not at all.
    started.once('error', (err) => {
      finished = true;
      timer?.clear();
      reject(new Error(`failed to start: ${err.message}`));
    });
    // 'close': exited and its output pipes are drained, as Go's cmd.Run waits for both.
    started.once('close', (code, signal) => {
      finished = true;
      timer?.clear();
      const tail = output.text();
      const said = tail.trim() ? `; output: ${printable(tail.trim().slice(-REASON_OUTPUT_CHARS))}` : '';
      if (timedOut) reject(new Error(`did not finish within ${timeoutMs} ms (watch_handler_timeout); killed${said}`));
      else if (signal) reject(new Error(`killed by ${signal}${said}`));
      else if (code !== 0) reject(new Error(`exit status ${code}${said}`));
      else resolve(tail);
    });
  });
  return { done, kill: () => killGroup('SIGTERM') };
}
