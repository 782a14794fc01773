// What `registry lock` needs of a lock or a semaphore (Consul's LockUnlock): acquire (false when
// the wait ran out or was aborted), a promise that settles when the hold is lost, release, and
// cleanup of the keys when nobody else uses them.
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
  return `${Math.max(1, Math.ceil((deadline - Date.now()) / 1000))}s`;
}
