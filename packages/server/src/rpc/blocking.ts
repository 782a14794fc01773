// Blocking queries, written once (Consul's blockingQuery): run the read; if its index is not past
// the client's, wait for a change to the keys the read depends on, or for the wait to run out.
import { settledRead, type ReadsThatWait } from './settled-read';
import { monotonicMs } from '../time';

export const DEFAULT_WAIT_MS = 5 * 60_000;
export const MAX_WAIT_MS = 10 * 60_000;

/** A store as blocking queries see it: its index, its watches, and reads that wait for builds. */
export interface Watchable extends ReadsThatWait {
  readonly lastIndex: number;
  watch(keys: readonly string[], fire: () => void): () => void;
}

/** How many blocking queries are waiting now (read by the metrics at scrape time). */
export interface OpenQueries {
  open: number;
}

export interface QueryResult<T = unknown> {
  index: number;
  value: T;
  keys: string[];
}

/** The wait actually used: default 5 min, capped at 10 min, plus up to wait/16 jitter. */
export function effectiveWait(requestedMs: number | undefined, random: () => number = Math.random): number {
  let wait = requestedMs === undefined || requestedMs <= 0 ? DEFAULT_WAIT_MS : Math.min(requestedMs, MAX_WAIT_MS);
  wait += Math.floor(random() * (wait / 16));
  return wait;
}

/**
 * Runs `run` until its index passes `minIndex`, the wait ends, or `signal` aborts (client gone).
 * An index ahead of everything the store has seen (a client carrying an index from before a snapshot
 * restore) answers at once (DECISIONS.md), so such a client resets instead of hanging.
 */
export async function blockingQuery<T>(
  store: Watchable,
  run: () => QueryResult<T>,
  minIndex: number,
  waitMs: number | undefined,
  signal?: AbortSignal,
  openQueries?: OpenQueries,
): Promise<QueryResult<T>> {
  // A large listing read first after a start or a restore is built in steps (settled-read.ts);
  // any other read answers synchronously and is not awaited.
  const first = settledRead(store, run);
  let result = first instanceof Promise ? await first : first;
  if (minIndex <= 0 || result.index > minIndex || minIndex > store.lastIndex) return result;
  if (openQueries) openQueries.open++;
  try {
    return await waitForChange(store, run, result, minIndex, waitMs, signal);
  } finally {
    if (openQueries) openQueries.open--;
  }
}

async function waitForChange<T>(
  store: Watchable,
  run: () => QueryResult<T>,
  result: QueryResult<T>,
  minIndex: number,
  waitMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<QueryResult<T>> {
  const deadline = monotonicMs() + effectiveWait(waitMs);
  while (result.index <= minIndex && !signal?.aborted) {
    const remaining = deadline - monotonicMs();
    if (remaining <= 0) break;
    await new Promise<void>((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        cancel();
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      const cancel = store.watch(result.keys, finish);
      const timer = setTimeout(finish, remaining);
      signal?.addEventListener('abort', finish);
    });
    result = await settledRead(store, run);
  }
  return result;
}
