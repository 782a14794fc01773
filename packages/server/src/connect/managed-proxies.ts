// Managed proxies (deprecated in Consul 1.6, kept for 1.4 compatibility): the agent runs each one as
// a child process with its identity in the environment and restarts it when it dies, with a backoff
// that resets once the process has stayed up for a while. A command that does not exist, cannot be
// spawned or exits at once is that proxy's failure (logged with the reason, counted, retried with
// the backoff), never the agent's.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../runtime/logger';
import { describeError, logOnlyFailures, type RunnerFailures } from '../runtime/runner-failures';
import { monotonicMs } from '../time';
import type { ListenerCounts } from '../proxy/connection-stats';
import { ReportDeltas, reportOf, type ProxyMetricsSink } from '../proxy/proxy-metrics';

export interface ManagedProxySpec {
  proxyServiceId: string;
  /** daemon: the command is the argv; script: its words are one shell command, run by /bin/sh -c. */
  execMode: 'daemon' | 'script';
  /** Empty: the built-in proxy (builtInProxyCommand). */
  command: string[];
  token: string;
}

interface Running {
  spec: ManagedProxySpec;
  child: ChildProcess | null;
  timer: NodeJS.Timeout | null;
  backoffMs: number;
  startedAt: number;
  restarts: number;
  /** The running built-in proxy's counts (each process reports from zero). */
  counts: ReportDeltas;
}

/**
 * The built-in proxy's process (proxy/proxy-main.ts), run with this Node: what Consul 1.4 runs for a
 * managed proxy with no Command (`consul connect proxy`). From the compiled package; when this module
 * itself runs from source (ts-jest), the compiled entry beside it in dist/.
 */
export function builtInProxyCommand(): string[] {
  const compiled = join(__dirname, '..', 'proxy', 'proxy-main.js');
  const entry = existsSync(compiled) ? compiled : join(__dirname, '..', '..', 'dist', 'proxy', 'proxy-main.js');
  return [process.execPath, entry];
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 10_000;
const STABLE_AFTER_MS = 10_000;

export class ManagedProxies {
  private readonly procs = new Map<string, Running>();

  private readonly failures: RunnerFailures;

  constructor(
    private readonly httpAddress: () => string,
    private readonly logger: Logger,
    failures?: RunnerFailures,
  ) {
    this.failures = failures ?? logOnlyFailures(logger);
  }

  /**
   * While held, proxies are recorded and started at release(): the agent restores its services
   * before its HTTP API listens, and a proxy is handed that API's address.
   */
  private held = false;

  hold(): void {
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    for (const run of [...this.procs.values()]) if (!run.child && !run.timer) this.launch(run);
  }

  /** Start the proxy, or restart it when its command changed; a running identical one is left alone. */
  ensure(spec: ManagedProxySpec): void {
    const cur = this.procs.get(spec.proxyServiceId);
    if (cur && JSON.stringify(cur.spec) === JSON.stringify(spec)) return;
    if (cur) this.remove(spec.proxyServiceId);
    const run: Running = { spec, child: null, timer: null, backoffMs: MIN_BACKOFF_MS, startedAt: 0, restarts: 0, counts: new ReportDeltas() };
    this.procs.set(spec.proxyServiceId, run);
    if (!this.held) this.launch(run);
  }

  remove(proxyServiceId: string): void {
    const run = this.procs.get(proxyServiceId);
    if (!run) return;
    this.procs.delete(proxyServiceId);
    if (run.timer) clearTimeout(run.timer);
    run.child?.kill('SIGTERM');
  }

  stopAll(): void {
    for (const id of [...this.procs.keys()]) this.remove(id);
  }

  /** The process id of a running proxy (undefined while it is down or unknown). */
  pid(proxyServiceId: string): number | undefined {
    const run = this.procs.get(proxyServiceId);
    return run?.child && run.child.exitCode === null ? run.child.pid : undefined;
  }

  private metrics: ProxyMetricsSink | undefined;

  /**
   * The built-in proxies report their connection counts over an IPC channel (proxy/proxy-metrics.ts);
   * they go to `sink` (the agent's metrics), and their open connections are read from here.
   */
  reportTo(sink: ProxyMetricsSink): void {
    this.metrics = sink;
    sink.watchProxyConns(() => this.openConns());
  }

  /** Open connections of the running built-in proxies, summed per listener. */
  private openConns(): ListenerCounts[] {
    const sum = new Map<string, ListenerCounts>();
    for (const run of this.procs.values()) {
      if (!run.child) continue;
      for (const l of run.counts.latest) {
        const key = `${l.kind}\u0001${Object.values(l.labels).join('\u0001')}`;
        const cur = sum.get(key);
        if (cur) cur.conns += l.conns;
        else sum.set(key, { ...l });
      }
    }
    return [...sum.values()];
  }

  restarts(proxyServiceId: string): number {
    return this.procs.get(proxyServiceId)?.restarts ?? 0;
  }

  private launch(run: Running): void {
    run.timer = null;
    if (this.procs.get(run.spec.proxyServiceId) !== run) return;
    const builtIn = run.spec.command.length === 0;
    const [cmd, ...args] = builtIn ? builtInProxyCommand() : run.spec.execMode === 'script' ? ['/bin/sh', '-c', run.spec.command.join(' ')] : run.spec.command;
    run.startedAt = monotonicMs();
    let child: ChildProcess;
    try {
      // Throws for what cannot be spawned at all (no command, a NUL byte in an argument).
      child = spawn(cmd ?? '', args, {
        env: {
          ...process.env,
          REGISTRY_PROXY_ID: run.spec.proxyServiceId,
          REGISTRY_PROXY_TOKEN: run.spec.token,
          REGISTRY_HTTP_ADDR: this.httpAddress(),
          // Consul 1.4's names, so that `consul connect proxy` can be a given Command (docs/connect.md).
          CONNECT_PROXY_ID: run.spec.proxyServiceId,
          CONNECT_PROXY_TOKEN: run.spec.token,
          CONSUL_HTTP_ADDR: this.httpAddress(),
        },
        // The built-in proxy logs as the agent does; its lines join the agent's stderr, and it reports
        // its counts over the IPC channel. A given command's output stays its own.
        stdio: builtIn ? ['ignore', 'ignore', 'inherit', 'ipc'] : 'ignore',
      });
    } catch (err) {
      this.down(run, null, `could not be started: ${describeError(err)}`);
      return;
    }
    run.child = child;
    const counts = new ReportDeltas();
    run.counts = counts;
    if (builtIn) {
      // The channel must not keep the agent alive. A last report may come after the exit: still this process's counts.
      child.channel?.unref();
      child.on('message', (msg) => {
        const report = reportOf(msg);
        if (report && this.metrics) counts.apply(report.listeners, this.metrics);
      });
    }
    // A command that does not exist is an 'error' (ENOENT) with no 'exit'; either way it is down once.
    child.on('error', (err) => this.down(run, child, `failed to start: ${err.message}`));
    child.on('exit', (code, signal) => this.down(run, child, signal ? `exited on ${signal}` : `exited with code ${code}`));
  }

  /** The proxy's process is gone: report it (a failure when it did not stay up) and restart it after the backoff. */
  private down(run: Running, child: ChildProcess | null, why: string): void {
    if (this.procs.get(run.spec.proxyServiceId) !== run || run.child !== child || run.timer) return;
    run.child = null;
    const stable = monotonicMs() - run.startedAt > STABLE_AFTER_MS;
    if (stable) run.backoffMs = MIN_BACKOFF_MS;
    if (stable) this.logger.warn({ proxy: run.spec.proxyServiceId, why, retryMs: run.backoffMs }, 'managed proxy exited; restarting');
    else this.failures.failed('managed-proxy', run.spec.proxyServiceId, `${why} (command ${JSON.stringify(run.spec.command)}; restarting in ${run.backoffMs} ms)`);
    run.restarts++;
    run.timer = setTimeout(() => this.launch(run), run.backoffMs);
    run.backoffMs = Math.min(MAX_BACKOFF_MS, run.backoffMs * 2);
  }
}
