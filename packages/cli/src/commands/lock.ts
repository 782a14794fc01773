// `registry lock [options] PREFIX CHILD...` (Consul's command/lock): hold a lock (or, with -n > 1,
// a semaphore slot) under PREFIX while CHILD runs. The child gets REGISTRY_LOCK_HELD=true; it is
// sent SIGTERM (SIGKILL after 5 s) when the lock is lost or this process is told to stop; the lock
// is released and its keys cleaned up when unused. Exit 0, or 2 when the child failed and
// -child-exit-code is given, 1 on any error of the lock itself.
import type { ChildProcess } from 'node:child_process';
import { Command } from 'commander';
import { usage } from '../action';
import { exitText, runChild } from '../child-process';
import { durationFlag } from '../go-duration';
import { Client } from '../http-client';
import { withClientFlags } from '../http-flags';
import { KvLock } from '../lock/kv-lock';
import { LockSession } from '../lock/lock-session';
import type { LockHolder } from '../lock/lock-holder';
import { Semaphore } from '../lock/semaphore';
import { err, out } from '../output';

const KILL_GRACE_MS = 5_000;

export function lockCommand(): Command {
  const c = withClientFlags(new Command('lock').description('run a command while holding a lock'))
    .argument('<prefix>', 'KV prefix of the lock')
    .argument('<child...>', 'the command to run while the lock is held')
    .passThroughOptions()
    .option('-n, --n <limit>', 'number of concurrent holders (more than 1: a semaphore)', (v) => Number(v), 1)
    .option('--name <name>', 'name of the lock\'s session')
    .option('--child-exit-code', 'exit 2 if the child fails')
    .option('--monitor-retry <n>', 'agent errors (500s) tolerated while monitoring the lock', (v) => Number(v), 3)
    .option('--pass-stdin', 'give stdin to the child')
    .option('--shell', 'run the child through $SHELL -c (the default; -shell=false runs it directly)', true)
    .option('--no-shell', 'run the child directly, without a shell')
    .option('--timeout <duration>', 'how long to wait for the lock (default: forever)', durationFlag('timeout'), 0)
    .option('--try <duration>', 'deprecated: -timeout', durationFlag('try'))
    .option('--verbose', 'say what happens');
  return c.action(async (prefixArg: string, childWords: string[]) => {
    const o = c.opts();
    const limit: number = o.n;
    if (!Number.isInteger(limit) || limit <= 0) throw usage('Lock holder limit must be positive');
    const prefix = prefixArg.replace(/^\/+/, '');
    const timeoutMs: number = o.try ?? o.timeout;
    if (timeoutMs < 0) throw usage('Timeout must be positive');
    if (!Number.isInteger(o.monitorRetry) || o.monitorRetry < 0) throw usage("Number for 'monitor-retry' must be >= 0");
    const words = childWords;
    const name: string = o.name || `Registry lock for '${words.join(' ')}' at '${prefix}'`;
    const info = (line: string) => o.verbose && out(line);

    const client = new Client(o);
    try {
      await client.get('/v1/agent/self', { local: true });
    } catch (e) {
      // 403 on agent:read still means the agent is there.
      if (!(e instanceof Error && /Unexpected response code: 403/.test(e.message))) throw usage(`Error querying Registry agent: ${(e as Error).message}`);
    }

    const shutdown = new AbortController();
    const onSignal = () => shutdown.abort();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    let holder: LockHolder;
    let session: LockSession;
    try {
      session = await LockSession.create(client, name);
      const opts = { timeoutMs, monitorRetries: o.monitorRetry };
      if (limit === 1) {
        info(`Setting up lock at path: ${prefix}/.lock`);
        holder = new KvLock(client, `${prefix}/.lock`, session, opts);
      } else {
        info(`Setting up semaphore (limit ${limit}) at prefix: ${prefix}`);
        holder = new Semaphore(client, prefix, limit, session, opts);
      }
      info('Attempting lock acquisition');
      if (!(await holder.acquire(shutdown.signal))) {
        await session.destroy();
        throw usage('Shutdown triggered or timeout during lock acquisition');
      }
    } catch (e) {
      await session!?.destroy();
      if (e instanceof Error && (e as { prefixed?: boolean }).prefixed) throw e;
      throw usage(`Lock acquisition failed: ${(e as Error).message}`);
    }

    let childCode = 0;
    let child: ChildProcess | undefined;
    if (shutdown.signal.aborted) {
      err('Shutdown triggered during lock acquisition');
    } else {
      info('Starting handler');
      child = runChild(words, { shell: o.shell, env: { REGISTRY_LOCK_HELD: 'true' }, stdio: [o.passStdin ? 'inherit' : 'ignore', 'inherit', 'inherit'] });
      const exited = new Promise<void>((resolve) => {
        child!.on('error', (e) => {
          err(`Error starting handler: ${e.message}`);
          childCode = 2;
          resolve();
        });
        child!.on('exit', (code, signal) => {
          const failed = exitText(code, signal);
          if (failed) {
            err(`Error running handler: ${failed}`);
            childCode = 2;
          }
          resolve();
        });
      });
      const aborted = new Promise<string>((r) => shutdown.signal.addEventListener('abort', () => r('Shutdown triggered, killing child')));
      const why = await Promise.race([exited.then(() => 'exited'), holder.lost.then(() => 'Lock lost, killing child'), aborted]);
      if (why === 'exited') {
        info('Child terminated, releasing lock');
      } else {
        info(why);
        await killChild(child, exited, info);
      }
    }

    try {
      await holder.release();
    } catch (e) {
      throw usage(`Lock release failed: ${(e as Error).message}`);
    }
    try {
      if (await holder.cleanup()) info('Cleanup succeeded');
      else info('Cleanup aborted, lock in use');
    } catch (e) {
      throw usage(`Lock cleanup failed: ${(e as Error).message}`);
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (o.childExitCode) process.exitCode = childCode;
  });
}

async function killChild(child: ChildProcess, exited: Promise<void>, info: (l: string) => void): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  info(`Terminating child pid ${child.pid}`);
  child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), KILL_GRACE_MS).unref())]);
  if (done) return info('Child terminated');
  info(`Killing child pid ${child.pid}`);
  child.kill('SIGKILL');
  await exited;
}
