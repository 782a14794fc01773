// A semaphore of N holders under a prefix (Consul's api/semaphore.go): each contender holds
// `<prefix>/<session>` with its session, and `<prefix>/.lock` lists the holders as
// {"Limit": N, "Holders": {session: true}}, changed only by check-and-set. Holders whose contender
// key has lost its session are pruned, so a dead holder frees its slot.
import type { Client } from '../http-client';
import { kvPath } from '../kv-path';
import { parseKv, type KvPair } from '../kv-json';
import type { LockSession } from './lock-session';
import { LockConflict, monitorHold, waitFor, type LockHolder, type LockOptions } from './lock-holder';
// The clock module alone: the package's index loads the whole server (seconds on a busy host).
import { monotonicMs } from '@registry/raft/dist/monotonic-clock';

/** Consul's api.SemaphoreFlagValue. */
export const SEMAPHORE_FLAG_VALUE = 0xe0f69a2baa414de0n;
const LOCK_KEY = '.lock';

interface SemaphoreLock {
  Limit: number;
  Holders: Record<string, boolean>;
}

export class Semaphore implements LockHolder {
  private lostResolve!: () => void;
  readonly lost = new Promise<void>((r) => (this.lostResolve = r));
  private held = false;
  private readonly monitorAbort = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly session: LockSession,
    private readonly opts: LockOptions,
  ) {}

  private get lockKey() {
    return `${this.prefix}/${LOCK_KEY}`;
  }
  private get contenderKey() {
    return `${this.prefix}/${this.session.id}`;
  }

  private async readAll(index: number, deadline: number, signal?: AbortSignal): Promise<{ pairs: KvPair[]; index: number }> {
    const reply = await this.client.request('GET', kvPath(`${this.prefix}/`), {
      query: { recurse: true, index: index || undefined, wait: waitFor(deadline) },
      accept: [404],
      timeoutMs: 60_000,
      signal,
    });
    return { pairs: reply.status === 404 ? [] : parseKv<KvPair[]>(reply.text()), index: reply.index };
  }

  /** The .lock entry and its decoded holders, with dead holders pruned. */
  private state(pairs: KvPair[]): { pair: KvPair | undefined; lock: SemaphoreLock } {
    const pair = pairs.find((p) => p.Key === this.lockKey);
    let lock: SemaphoreLock = { Limit: this.limit, Holders: {} };
    if (pair) {
      if (String(pair.Flags) !== String(SEMAPHORE_FLAG_VALUE)) throw new LockConflict('Existing key does not match semaphore use');
      try {
        lock = JSON.parse(Buffer.from(pair.Value ?? '', 'base64').toString('utf8')) as SemaphoreLock;
      } catch {
        throw new LockConflict('Failed to decode the semaphore lock entry');
      }
      lock.Holders ??= {};
    }
    const live = new Set(pairs.filter((p) => p.Session).map((p) => p.Session));
    for (const h of Object.keys(lock.Holders)) if (!live.has(h)) delete lock.Holders[h];
    return { pair, lock };
  }

  private async writeLock(lock: SemaphoreLock, pair: KvPair | undefined): Promise<boolean> {
    return this.client.put<boolean>(kvPath(this.lockKey), JSON.stringify(lock), {
      query: { cas: String(pair?.ModifyIndex ?? 0), flags: String(SEMAPHORE_FLAG_VALUE) },
    });
  }

  async acquire(signal: AbortSignal): Promise<boolean> {
    const made = await this.client.put<boolean>(kvPath(this.contenderKey), Buffer.alloc(0), {
      query: { acquire: this.session.id, flags: String(SEMAPHORE_FLAG_VALUE) },
    });
    if (!made) throw new Error('failed to make contender entry');
    const deadline = this.opts.timeoutMs ? monotonicMs() + this.opts.timeoutMs : 0;
    let index = 0;
    while (!signal.aborted) {
      if (deadline && monotonicMs() >= deadline) return false;
      let got: { pairs: KvPair[]; index: number };
      try {
        got = await this.readAll(index, deadline, signal);
      } catch (e) {
        if (signal.aborted) return false;
        throw e;
      }
      const { pair, lock } = this.state(got.pairs);
      if (lock.Limit !== this.limit) throw new LockConflict(`semaphore limit conflict (lock: ${lock.Limit}, local: ${this.limit})`);
      if (Object.keys(lock.Holders).length >= this.limit) {
        index = got.index;
        continue;
      }
      lock.Holders[this.session.id] = true;
      if (await this.writeLock(lock, pair)) {
        this.held = true;
        void this.monitor();
        void this.session.lost.then(() => this.lostResolve());
        return true;
      }
      index = 0;
    }
    return false;
  }

  /** Watches the semaphore until this session is no longer among its holders. */
  private monitor(): Promise<void> {
    return monitorHold({
      held: () => this.held,
      read: async (index) => {
        const got = await this.readAll(index, 0, this.monitorAbort.signal);
        return { ours: Boolean(this.state(got.pairs).lock.Holders[this.session.id]), index: got.index };
      },
      retries: this.opts.monitorRetries,
      lost: () => this.lostResolve(),
    });
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    this.monitorAbort.abort();
    try {
      for (let attempt = 0; attempt < 20; attempt++) {
        const { pairs } = await this.readAll(0, 0);
        const { pair, lock } = this.state(pairs);
        if (!pair || !(this.session.id in lock.Holders)) break;
        delete lock.Holders[this.session.id];
        if (await this.writeLock(lock, pair)) break;
      }
      await this.client.delete(kvPath(this.contenderKey));
    } finally {
      await this.session.destroy();
    }
  }

  async cleanup(): Promise<boolean> {
    const { pairs } = await this.readAll(0, 0);
    const { pair, lock } = this.state(pairs);
    if (!pair) return true;
    if (Object.keys(lock.Holders).length > 0) return false;
    await this.client.delete(kvPath(this.lockKey), { query: { cas: String(pair.ModifyIndex) } });
    return true;
  }
}
