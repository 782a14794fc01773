// The leader's session TTL timers (Consul's session_ttl.go). Every session with a TTL gets a timer
// of 2 × TTL when it is created or renewed; when one fires, the leader proposes an internal
// session.destroy. A new leader starts every timer afresh from the replicated sessions, so a
// session may live up to 2 × TTL past its last renewal (the spec allows it). Renewals are not
// written to Raft: they reset the leader's timer, forwarded there from whichever server got them.
// The timers keep their own failures (issue 31): an expiry or a resync that throws is reported —
// logged by `agent.runners`, counted as registry_runner_failures_total{runner="session-ttl"} — and
// tried again after a growing delay, instead of reaching the process's last-resort handler and
// leaving that session (or, for the resync, every new session) without a timer.
import { parseGoDuration, SESSIONS, type Command, type Store } from '@registry/store';
import type { LeaderDuty } from '../runtime/leader-duties';
import type { Logger } from '../runtime/logger';
import { logOnlyFailures, type RunnerFailures } from '../runtime/runner-failures';
import type { LeaderCalls } from '../rpc/leader-calls';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Session.Renew': { args: { id: string }; reply: void };
  }
}

/** Consul's SessionTTLMultiplier. */
export const TTL_MULTIPLIER = 2;
/** The public TTL bounds; the minimum can be lowered for tests only (config `session_ttl_min` with -dev). */
export const DEFAULT_SESSION_TTL_MIN_MS = 10_000;
export const SESSION_TTL_MAX_MS = 86_400_000;
const RETRY_MS = 1_000;
/** A runner that keeps throwing waits at most this long between tries. */
const MAX_RETRY_MS = 60_000;

export interface SessionRenewer {
  /** The smallest TTL a session may ask for, in ms. */
  readonly ttlMinMs: number;
  /**
   * Restart the TTL timer of session `id` on the leader (wherever this server is). `token` is the
   * request's: a client agent sends it with the leader call, for the server to check.
   */
  renew(id: string, token?: string): Promise<void>;
}

/** A session's TTL in ms, or 0 for none / unparsable (the store refused unparsable ones). */
export function ttlMs(ttl: string): number {
  if (!ttl) return 0;
  const ns = parseGoDuration(ttl);
  return ns === undefined || ns <= 0 ? 0 : ns / 1e6;
}

export class SessionTtl implements LeaderDuty, SessionRenewer {
  readonly name = 'session-ttl';
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private cancelWatch: (() => void) | null = null;
  private resyncTimer: NodeJS.Timeout | null = null;
  private resyncFailures = 0;
  private active = false;
  private readonly failures: RunnerFailures;

  constructor(
    private readonly store: Store,
    private readonly leaderCalls: LeaderCalls,
    private readonly apply: (cmd: Command) => Promise<unknown>,
    readonly ttlMinMs: number,
    private readonly logger: Logger,
    failures?: RunnerFailures,
  ) {
    this.failures = failures ?? logOnlyFailures(logger);
    leaderCalls.handle('Session.Renew', ({ id }) => this.renewHere(id));
  }

  start(): void {
    this.stop();
    this.active = true;
    this.resync();
  }

  stop(): void {
    this.active = false;
    this.cancelWatch?.();
    this.cancelWatch = null;
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.resyncTimer = null;
    this.resyncFailures = 0;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** How many sessions have a running timer (for tests). */
  get timerCount(): number {
    return this.timers.size;
  }

  async renew(id: string): Promise<void> {
    return this.leaderCalls.call('Session.Renew', { id });
  }

  private async renewHere(id: string): Promise<void> {
    const s = this.store.sessionInfo(id).value?.[0];
    if (s && this.active) this.arm(s.ID, ttlMs(s.TTL));
  }

  /** sync(), its failure reported and retried later rather than thrown into the store's watch callback. */
  private resync(): void {
    this.resyncTimer = null;
    try {
      this.sync();
      this.resyncFailures = 0;
    } catch (err) {
      this.cancelWatch?.();
      this.cancelWatch = null;
      if (!this.active) return;
      this.resyncFailures++;
      const delay = Math.min(RETRY_MS * 2 ** (this.resyncFailures - 1), MAX_RETRY_MS);
      this.failures.failed('session-ttl', 'timers resync', `${err instanceof Error ? err.message : String(err)}; retrying in ${delay} ms`);
      this.resyncTimer = setTimeout(() => this.resync(), delay);
      this.resyncTimer.unref?.();
    }
  }

  /** Arm timers for sessions the leader has not seen yet, drop those of sessions gone; re-arm the watch. */
  private sync(): void {
    if (!this.active) return;
    const live = new Set<string>();
    for (const s of this.store.sessionList().value) {
      const ms = ttlMs(s.TTL);
      if (ms <= 0) continue;
      live.add(s.ID);
      if (!this.timers.has(s.ID)) this.arm(s.ID, ms);
    }
    for (const [id, t] of this.timers) {
      if (!live.has(id)) {
        clearTimeout(t);
        this.timers.delete(id);
      }
    }
    this.cancelWatch = this.store.watch([SESSIONS], () => {
      this.cancelWatch = null;
      this.resync();
    });
  }

  private arm(id: string, ttl: number, delayMs = ttl * TTL_MULTIPLIER): void {
    const old = this.timers.get(id);
    if (old) clearTimeout(old);
    if (ttl <= 0) {
      this.timers.delete(id);
      return;
    }
    const timer = setTimeout(() => void this.expire(id, ttl).catch((err: unknown) => this.expiryThrew(id, ttl, err)), delayMs);
    timer.unref?.();
    this.timers.set(id, timer);
  }

  /** An expiry that threw (not a refused destroy: that is retried in expire): report it, try again later. */
  private expiryThrew(id: string, ttl: number, err: unknown): void {
    const delay = Math.min(Math.max(RETRY_MS, ttl), MAX_RETRY_MS);
    this.failures.failed('session-ttl', `session ${id}`, `${err instanceof Error ? err.message : String(err)}; retrying in ${delay} ms`);
    try {
      if (this.active && !this.timers.has(id)) this.arm(id, ttl, delay);
    } catch {
      // Reported above; the next resync arms it again.
    }
  }

  private async expire(id: string, ttl: number): Promise<void> {
    this.timers.delete(id);
    if (!this.active || !this.store.sessionInfo(id).value) return;
    try {
      await this.apply({ type: 'session.destroy', id });
      this.logger.debug({ session: id }, 'session TTL expired: destroyed');
    } catch (err) {
      // Still leading: try again shortly (the destroy may not have committed).
      if (this.active) {
        this.logger.warn({ session: id, err: (err as Error).message }, 'session expiry failed; retrying');
        this.arm(id, ttl, RETRY_MS);
      }
    }
  }
}
