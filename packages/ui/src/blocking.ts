// Live data through blocking queries: each answer's X-Registry-Index is sent back as ?index=, so
// the agent holds the request until something the list depends on changes (or `wait` passes).
// Nothing is polled on a timer; the loop ends when the view's AbortSignal fires (view changed).
import { ApiError, get, type Params } from './api.js';

export interface WatchOptions<T> {
  params?: Params;
  signal: AbortSignal;
  /** Called with the first answer and then only when the index moved. */
  onValue: (value: T | undefined, index: number) => void;
  onError: (err: Error) => void;
  allow404?: boolean;
  /** The agent caps waits at 10 min; shorter keeps proxies from cutting idle requests. */
  wait?: string;
  /** Call onValue after every answer, the wait's end included (a view that also shows data with no blocking endpoint). */
  everyAnswer?: boolean;
}

const MAX_BACKOFF_MS = 30_000;

export function watch<T>(path: string, o: WatchOptions<T>): void {
  void loop(path, o);
}

async function loop<T>(path: string, o: WatchOptions<T>): Promise<void> {
  let index = 0;
  let first = true;
  let backoff = 0;
  while (!o.signal.aborted) {
    try {
      const params: Params = { ...o.params, wait: o.wait ?? '5m' };
      if (index > 0) params.index = String(index);
      const reply = await get<T>(path, { params, signal: o.signal, allow404: o.allow404 });
      backoff = 0;
      if (o.signal.aborted) return;
      // An index that went backwards (a restored snapshot, another leader's store) starts over,
      // as Consul's client guidance says; one that did not move means the wait simply ended.
      const next = reply.index > 0 ? reply.index : 0;
      if (first || next !== index || o.everyAnswer) o.onValue(reply.value, next);
      first = false;
      index = next < index ? 0 : next;
      if (next === 0) await sleep(1000, o.signal); // an endpoint that cannot block: do not spin
    } catch (err) {
      if (o.signal.aborted) return;
      o.onError(err instanceof Error ? err : new Error(String(err)));
      first = true; // the next answer is shown even if unchanged, replacing the error
      // Errors back off (1 s, doubling, at most 30 s): an agent that is down is not hammered.
      backoff = Math.min(MAX_BACKOFF_MS, backoff ? backoff * 2 : 1000);
      if (err instanceof ApiError && err.status === 403) backoff = MAX_BACKOFF_MS;
      await sleep(backoff, o.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Where a view shows the failures of its sources (dom.ts errorBox). */
export interface ErrorSink {
  set(err: Error | undefined, source?: string): void;
}

/**
 * watch() for one source of a view: each answer is handed to `take` (an absent value as
 * `missing`), clears that source's error and redraws; a failure is shown under `source`.
 */
export function watchSource<T>(path: string, o: { signal: AbortSignal; errors: ErrorSink; source: string; missing: T; take: (v: T) => void; draw: () => void }): void {
  watch<T>(path, {
    signal: o.signal,
    onValue: (v) => {
      o.take(v ?? o.missing);
      o.errors.set(undefined, o.source);
      o.draw();
    },
    onError: (e) => o.errors.set(e, o.source),
  });
}

