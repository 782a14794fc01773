// What `registry lock` needs of a lock or a semaphore (Consul's LockUnlock): acquire (false when
// the wait ran out or was aborted), a promise that settles when the hold is lost, release, and
// cleanup of the keys when nobody else uses them.
import { ApiError } from '../http-client';
// The clock module alone: the package's index loads the whole server (seconds on a busy host).
import { monotonicMs } from '@registry/raft/dist/monotonic-clock';
export interface LockHolder {
  acquire(signal: AbortSignal): Promise<boolean>;
  /** Settles once the lock, after being acquired, is no longer ours. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
  /** Removes the lock's keys; resolves false (Consul's ErrLockInUse) when another holder uses them. */
  cleanup(): Promise<boolean>;
}

export interface LockOptions {
  /** One attempt bounded by this wait (Consul's -timeout: LockTryOnce + LockWaitTime); 0 waits forever. */
  timeoutMs: number;
  /** 500s / transport errors tolerated while monitoring the lock, 1 s apart. */
  monitorRetries: number;
}

export class LockConflict extends Error {}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

/** The blocking-query wait for an attempt that must end by `deadline` (0: none). */
export function waitFor(deadline: number): string {
  if (!deadline) return '15s';
  return `${Math.max(1, Math.ceil((deadline - monotonicMs()) / 1000))}s`;
}

/**
 * Follows a held lock with blocking reads until `stillHeld` says it is no longer ours (or we let
 * go: `held()` turns false), then calls `lost`. Transient failures (connection, 5xx) are retried
 * `retries` times a second apart, as Consul's api.Lock and api.Semaphore monitor.
 */
export async function monitorHold(o: {
  held: () => boolean;
  read: (index: number) => Promise<{ ours: boolean; index: number }>;
  retries: number;
  lost: () => void;
}): Promise<void> {
  let index = 0;
  let failures = 0;
  while (o.held()) {
    try {
      const got = await o.read(index);
      failures = 0;
      if (!o.held()) return;
      if (!got.ours) return o.lost();
      index = got.index;
    } catch (e) {
      if (!o.held()) return;
      failures += 1;
      const retriable = !(e instanceof ApiError) || e.status >= 500;
      if (!retriable || failures > o.retries) return o.lost();
      await sleep(1_000);
    }
  }
}
