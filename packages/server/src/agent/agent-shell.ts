// What both agent kinds are from the outside, written once: how they say they have stopped, the
// parts every agent has (base-deps.ts, common-agent.ts) as the CLI and tests read them, and a start
// that undoes what it made when it fails. agent.ts and client-agent.ts extend it with their own half.
import type { AgentConnect } from '../connect/agent-connect';
import type { ManagedProxies } from '../connect/managed-proxies';
import type { LocalState } from '../local/local-state';
import type { Syncer } from '../local/syncer';
import type { Metrics } from '../metrics/metrics';
import type { Logger } from '../runtime/logger';
import type { AgentConfig } from '../config/config';
import { closeBaseDeps, type BaseDeps } from './base-deps';
import type { CommonAgent } from './common-agent';

/** What a start made so far, for undoing it when the start fails. */
export interface StartMade<A> {
  agent?: A;
  base?: BaseDeps;
  tempDir?: string;
}

/**
 * Runs `boot`; if it fails (port in use, …), stops the agent it got as far as making and closes the
 * base parts, the -dev temporary dir included, then rethrows.
 */
export async function startOrUndo<A extends { stop(): Promise<void> }>(boot: (made: StartMade<A>) => Promise<A>): Promise<A> {
  const made: StartMade<A> = {};
  try {
    return await boot(made);
  } catch (err) {
    if (made.agent) await made.agent.stop().catch(() => undefined);
    await closeBaseDeps(made.base, made);
    throw err;
  }
}

export abstract class AgentShell {
  protected stopping: Promise<void> | null = null;
  /** Resolves when the agent has stopped (after `leave`, a signal, or `stop`). */
  readonly stopped: Promise<void>;
  /** The process's exit status once stopped: 0, or 1 after a stop on purpose for a fault (docs/operations.md, "What ends the process"). */
  exitCode = 0;
  protected markStopped!: () => void;
  protected abstract readonly base: BaseDeps;
  /** What both agent kinds share: local state, Connect, watches, listeners, reload (agent/common-agent.ts). */
  protected abstract readonly common: CommonAgent;

  protected constructor() {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  get config(): AgentConfig {
    return this.common.config;
  }
  get logger(): Logger {
    return this.base.logger;
  }
  get dataDir(): string {
    return this.base.dataDir;
  }
  get metrics(): Metrics {
    return this.base.metrics;
  }
  get local(): LocalState | undefined {
    return this.common.local;
  }
  get proxies(): ManagedProxies | undefined {
    return this.common.proxies;
  }
  get connect(): AgentConnect | undefined {
    return this.common.connect;
  }
  get syncer(): Syncer | undefined {
    return this.common.syncer;
  }
}
