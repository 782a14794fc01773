// Anti-entropy for check results: the catalog learns a check's status and output only when they
// differ from what it was last told, so a steady check costs no Raft write. A status change is
// written at once; a change of output alone waits until `outputIntervalMs` after the last write
// (Consul's check_update_interval). A failed write (no leader) is retried. The retries run on
// timers of their own, so they keep their own failures (issue 31): a kick that throws (rather than a
// write the servers refused) is reported — logged by `agent.runners`, counted as
// registry_runner_failures_total{runner="catalog-sync"} — and tried again after the retry delay,
// instead of reaching the process's last-resort handler and leaving that check unsynced for good.
import type { Command } from '@registry/store';
import type { Logger } from '../runtime/logger';
import { logOnlyFailures, type RunnerFailures } from '../runtime/runner-failures';
import { catalogCheckOf, type CheckSpec } from '../checks/check-spec';
import { monotonicMs } from '../time';

export interface CheckState {
  status: string;
  output: string;
}

interface Entry {
  spec: CheckSpec;
  desired: CheckState;
  /** What the catalog holds as far as this agent knows. */
  synced: CheckState | undefined;
  lastWriteAt: number;
  inFlight: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  /** After a failed write, none before this time. */
  retryAt: number;
  removed: boolean;
  /** Callers of set() waiting for the write that carries their state. */
  waiters: Waiter[];
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

export interface CatalogSyncOptions {
  node: string;
  apply: (cmd: Command) => Promise<unknown>;
  outputIntervalMs: number;
  retryMs: number;
  logger: Logger;
  /** Where a kick that throws is reported (runtime/runner-failures.ts); logged only when absent. */
  failures?: RunnerFailures;
  now?: () => number;
}

const same = (a: CheckState | undefined, b: CheckState) => a !== undefined && a.status === b.status && a.output === b.output;

export class CatalogSync {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  /**
   * While held, results are recorded but nothing is written: the agent's restored checks are
   * known before its node is in the catalog (local-state.ts load), and a check row needs it.
   */
  private held = false;
  /** Writes made (for tests and stats). */
  writes = 0;

  private readonly failures: RunnerFailures;

  constructor(private readonly opts: CatalogSyncOptions) {
    this.now = opts.now ?? monotonicMs;
    this.failures = opts.failures ?? logOnlyFailures(opts.logger);
  }

  /** Follow a check whose catalog row is known to hold `synced` (undefined: unknown, write it). */
  track(spec: CheckSpec, desired: CheckState, synced: CheckState | undefined): void {
    const old = this.entries.get(spec.CheckID);
    if (old) this.drop(old);
    const entry: Entry = { spec, desired, synced, lastWriteAt: synced ? this.now() : 0, inFlight: undefined, timer: undefined, retryAt: 0, removed: false, waiters: [] };
    this.entries.set(spec.CheckID, entry);
    this.kick(entry);
  }

  /**
   * The check's latest result. Resolves once a write carrying it has committed — at once when no
   * write is due (nothing changed, or an output-only change deferred); rejects if that write fails
   * (it is retried in the background all the same).
   */
  set(checkId: string, state: CheckState): Promise<void> {
    const entry = this.entries.get(checkId);
    if (!entry) return Promise.resolve();
    entry.desired = state;
    const done = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
    this.kick(entry);
    this.settleIfIdle(entry);
    return done;
  }

  /** Stop following a check; resolves once no write of it is in flight any more. */
  async untrack(checkId: string): Promise<void> {
    const entry = this.entries.get(checkId);
    if (!entry) return;
    this.entries.delete(checkId);
    this.drop(entry);
    await entry.inFlight;
  }

  /** Write nothing until release() (see `held`). */
  hold(): void {
    this.held = true;
  }

  /** Write what is due for every check followed. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    for (const e of [...this.entries.values()]) this.safeKick(e);
  }

  /** The catalog row of a followed check was written with `state` by someone else (a service's registration). */
  markSynced(checkId: string, state: CheckState): void {
    const entry = this.entries.get(checkId);
    if (!entry) return;
    entry.synced = { ...state };
    entry.lastWriteAt = this.now();
  }

  stop(): void {
    for (const e of this.entries.values()) this.drop(e);
    this.entries.clear();
  }

  private settleIfIdle(entry: Entry): void {
    if (entry.inFlight) return;
    for (const w of entry.waiters.splice(0)) w.resolve();
  }

  private drop(entry: Entry): void {
    for (const w of entry.waiters.splice(0)) w.resolve();
    entry.removed = true;
    clearTimeout(entry.timer);
    entry.timer = undefined;
  }

  private later(entry: Entry, delayMs: number): void {
    if (entry.timer) return;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.safeKick(entry);
    }, Math.max(0, delayMs));
    entry.timer.unref();
  }

  /** kick() from a timer or a settled write: a throw is this check's sync failure, retried later. */
  private safeKick(entry: Entry): void {
    try {
      this.kick(entry);
    } catch (err) {
      this.failures.failed('catalog-sync', entry.spec.CheckID, `${err instanceof Error ? err.message : String(err)}; retrying in ${this.opts.retryMs} ms`);
      if (entry.removed) return;
      entry.retryAt = this.now() + this.opts.retryMs;
      try {
        this.later(entry, this.opts.retryMs);
      } catch {
        // Reported above; the next result of the check kicks it again.
      }
    }
  }

  private kick(entry: Entry): void {
    if (entry.removed || entry.inFlight || this.held) return;
    const want = entry.desired;
    if (same(entry.synced, want)) return;
    if (this.now() < entry.retryAt) {
      this.later(entry, entry.retryAt - this.now());
      return;
    }
    if (entry.synced && entry.synced.status === want.status && this.opts.outputIntervalMs > 0) {
      const due = entry.lastWriteAt + this.opts.outputIntervalMs;
      if (this.now() < due) {
        this.later(entry, due - this.now());
        return;
      }
    }
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const sent = { ...want };
    const cmd: Command = {
      type: 'catalog.register',
      req: { Node: this.opts.node, SkipNodeUpdate: true, Check: catalogCheckOf(entry.spec, this.opts.node, sent.status, sent.output) },
    };
    this.writes++;
    const waiting = entry.waiters.splice(0);
    // A write that throws at once (rather than rejecting) takes the rejection's path: retried, its waiters told.
    entry.inFlight = Promise.resolve()
      .then(() => this.opts.apply(cmd))
      .then(
        () => {
          entry.synced = sent;
          entry.lastWriteAt = this.now();
          for (const w of waiting) w.resolve();
        },
        (err: Error) => {
          this.opts.logger.warn({ check: entry.spec.CheckID, err: err.message }, 'check sync failed; retrying');
          entry.retryAt = this.now() + this.opts.retryMs;
          for (const w of waiting) w.reject(err);
        },
      )
      .finally(() => {
        entry.inFlight = undefined;
        this.safeKick(entry);
        this.settleIfIdle(entry);
      });
  }
}
