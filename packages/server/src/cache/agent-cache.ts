import { monotonicMs } from '../time';
import type { IndexedCacheAnswer, LeaderMeta } from './cache-answer';
// The agent's background-refresh cache (Consul's agent/cache with Refresh: true), one module for CA
// roots, leaf certificates, intention matches and the health/catalog service reads.
//
// The first request for a key fetches (MISS) and starts a loop that keeps the entry fresh with
// blocking fetches (`minIndex` = the entry's index); later requests are answered from the entry
// (HIT), and a request with `index` waits on the entry, not on the servers. An entry nobody asked
// for during `ttlMs` is dropped and its loop ends. After a failed refresh the loop retries with
// backoff and `Age` counts the seconds since the last successful fetch. A refresh still waiting
// on a server that is gone does not fail for a long time (a blocking fetch, retried within its
// budget): when the agent knows it lost contact with every server (`lostContactSince`), Age
// counts from that moment instead, as Consul's does from the disconnect (issue #29 item 12).

export interface Fetched<T> {
  index: number;
  value: T;
  /** The leader metadata of the read that fetched it, when the fetcher has one. */
  meta?: LeaderMeta;
}

/** One fetch: block while the servers' index is ≤ minIndex (0: answer at once); abort on `signal`. */
export type Fetcher<T> = (minIndex: number, signal: AbortSignal) => Promise<Fetched<T>>;

export interface GetOptions {
  /** Wait until the entry's index passes this (0: answer at once). */
  minIndex?: number;
  /** Longest wait for minIndex, in ms (the caller applies defaults and jitter). */
  waitMs?: number;
  signal?: AbortSignal;
}

export interface AgentCacheOptions {
  ttlMs?: number;
  now?: () => number;
  /** First retry delay after a failed refresh; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** When (on `now`'s clock) the agent lost contact with every server; undefined while in contact. */
  lostContactSince?: () => number | undefined;
}

interface Entry {
  key: string;
  value: unknown;
  index: number;
  /** When the last fetch succeeded. */
  freshAt: number;
  /** Set while the refresh loop is failing. */
  failing: boolean;
  meta: LeaderMeta | undefined;
  lastUsed: number;
  waiters: Set<() => void>;
  controller: AbortController;
}

export const DEFAULT_CACHE_TTL_MS = 3 * 24 * 3600_000;

export class AgentCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private readonly lostContactSince: () => number | undefined;
  private stopped = false;

  constructor(opts: AgentCacheOptions = {}) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_CACHE_TTL_MS;
    this.now = opts.now ?? monotonicMs;
    this.retryMs = opts.retryMs ?? 500;
    this.maxRetryMs = opts.maxRetryMs ?? 30_000;
    this.lostContactSince = opts.lostContactSince ?? (() => undefined);
  }

  get size(): number {
    return this.entries.size;
  }

  async get<T>(key: string, fetch: Fetcher<T>, opts: GetOptions = {}): Promise<IndexedCacheAnswer<T>> {
    if (this.stopped) throw new Error('agent cache stopped');
    let entry = this.entries.get(key);
    let hit = true;
    if (!entry) {
      hit = false;
      let first = this.pending.get(key);
      if (!first) {
        first = this.create(key, fetch as Fetcher<unknown>);
        this.pending.set(key, first);
        first.finally(() => this.pending.delete(key)).catch(() => undefined);
      }
      entry = await first;
    }
    entry.lastUsed = this.now();
    const minIndex = opts.minIndex ?? 0;
    if (minIndex > 0 && entry.index <= minIndex) await this.waitPast(entry, minIndex, opts.waitMs ?? 0, opts.signal);
    // Known fresh until the last successful fetch when refreshes fail, else until contact was lost.
    const freshUntil = entry.failing ? entry.freshAt : this.lostContactSince();
    const staleMs = freshUntil === undefined ? 0 : Math.max(0, this.now() - freshUntil);
    const meta = entry.meta && { knownLeader: entry.meta.knownLeader, lastContactMs: entry.meta.lastContactMs + staleMs };
    return { value: entry.value as T, index: entry.index, hit, ageS: Math.round(staleMs / 1000), meta };
  }

  /** Drop one entry (its loop ends). */
  invalidate(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    e.controller.abort();
    this.wake(e);
  }

  stop(): void {
    this.stopped = true;
    for (const key of [...this.entries.keys()]) this.invalidate(key);
  }

  private async create(key: string, fetch: Fetcher<unknown>): Promise<Entry> {
    const controller = new AbortController();
    const first = await fetch(0, controller.signal);
    const entry: Entry = {
      key,
      value: first.value,
      index: first.index,
      freshAt: this.now(),
      failing: false,
      meta: first.meta,
      lastUsed: this.now(),
      waiters: new Set(),
      controller,
    };
    if (this.stopped) return entry;
    this.entries.set(key, entry);
    void this.refreshLoop(entry, fetch);
    return entry;
  }

  private async refreshLoop(entry: Entry, fetch: Fetcher<unknown>): Promise<void> {
    let delay = this.retryMs;
    const { signal } = entry.controller;
    while (!signal.aborted && this.entries.get(entry.key) === entry) {
      if (this.now() - entry.lastUsed > this.ttlMs) {
        this.invalidate(entry.key);
        return;
      }
      // A fetcher that answers without blocking must not starve the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      try {
        const next = await fetch(entry.index, signal);
        if (signal.aborted) return;
        entry.failing = false;
        entry.freshAt = this.now();
        if (next.meta) entry.meta = next.meta;
        delay = this.retryMs;
        // An index going backwards (snapshot restore) restarts from the new value, as Consul's cache does.
        if (next.index !== entry.index || next.value !== entry.value) {
          entry.value = next.value;
          entry.index = next.index;
          this.wake(entry);
        }
      } catch {
        if (signal.aborted) return;
        entry.failing = true;
        await sleep(delay, signal);
        delay = Math.min(this.maxRetryMs, delay * 2);
      }
    }
  }

  private wake(entry: Entry): void {
    const waiters = [...entry.waiters];
    entry.waiters.clear();
    for (const w of waiters) w();
  }

  private waitPast(entry: Entry, minIndex: number, waitMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = this.now() + waitMs;
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        if (timer) clearTimeout(timer);
        entry.waiters.delete(check);
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      const check = () => {
        if (entry.index > minIndex || this.entries.get(entry.key) !== entry) finish();
        else entry.waiters.add(check);
      };
      timer = setTimeout(finish, Math.max(0, deadline - this.now()));
      signal?.addEventListener('abort', finish);
      entry.waiters.add(check);
    });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
