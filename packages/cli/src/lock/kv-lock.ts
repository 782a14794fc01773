// A single-holder lock on `<prefix>/.lock` (Consul's api/lock.go): acquire the key with the session,
// waiting with blocking queries while another session holds it; lost when the key's session is no
// longer ours (or the session itself is gone).
import type { Client } from '../http-client';
import { kvPath } from '../kv-path';
import { parseKv, type KvPair } from '../kv-json';
import type { LockSession } from './lock-session';
import { LockConflict, monitorHold, sleep, waitFor, type LockHolder, type LockOptions } from './lock-holder';
// The clock module alone: the package's index loads the whole server (seconds on a busy host).
import { monotonicMs } from '@registry/raft/dist/monotonic-clock';

/** Consul's api.LockFlagValue: marks a key as a lock, so a semaphore on the same prefix conflicts. */
export const LOCK_FLAG_VALUE = 0x2ddccbc058a50c18n;
/** After a refused acquire (lock-delay of a lost session), try again this much later. */
const RETRY_MS = 1_000;

export class KvLock implements LockHolder {
  private lostResolve!: () => void;
  readonly lost = new Promise<void>((r) => (this.lostResolve = r));
  private held = false;
  private readonly monitorAbort = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly key: string,
    private readonly session: LockSession,
    private readonly opts: LockOptions,
  ) {}

  private async read(index: number, deadline: number, signal?: AbortSignal): Promise<{ pair: KvPair | null; index: number }> {
    const reply = await this.client.request('GET', kvPath(this.key), { query: { index: index || undefined, wait: waitFor(deadline) }, accept: [404], timeoutMs: 60_000, signal });
    const pair = reply.status === 404 ? null : (parseKv<KvPair[]>(reply.text())[0] ?? null);
    return { pair, index: reply.index };
  }

  async acquire(signal: AbortSignal): Promise<boolean> {
    const deadline = this.opts.timeoutMs ? monotonicMs() + this.opts.timeoutMs : 0;
    let index = 0;
    while (!signal.aborted) {
      if (deadline && monotonicMs() >= deadline) return false;
      let got: { pair: KvPair | null; index: number };
      try {
        got = await this.read(index, deadline, signal);
      } catch (e) {
        if (signal.aborted) return false;
        throw e;
      }
      const { pair } = got;
      if (pair && String(pair.Flags) !== String(LOCK_FLAG_VALUE)) throw new LockConflict('Existing key does not match lock use');
      if (pair?.Session && pair.Session !== this.session.id) {
        index = got.index;
        continue;
      }
      const ok = await this.client.put<boolean>(kvPath(this.key), Buffer.alloc(0), { query: { acquire: this.session.id, flags: String(LOCK_FLAG_VALUE) } });
      if (ok) {
        this.held = true;
        void this.monitor();
        void this.session.lost.then(() => this.lostResolve());
        return true;
      }
      index = 0;
      await sleep(RETRY_MS, signal);
    }
    return false;
  }

  /** Watches the key until it is no longer held by this session. */
  private monitor(): Promise<void> {
    return monitorHold({
      held: () => this.held,
      read: async (index) => {
        const { pair, index: next } = await this.read(index, 0, this.monitorAbort.signal);
        return { ours: pair?.Session === this.session.id, index: next };
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
      await this.client.put(kvPath(this.key), Buffer.alloc(0), { query: { release: this.session.id, flags: String(LOCK_FLAG_VALUE) } });
    } finally {
      await this.session.destroy();
    }
  }

  async cleanup(): Promise<boolean> {
    const reply = await this.client.request('GET', kvPath(this.key), { accept: [404] });
    if (reply.status === 404) return true;
    const pair = parseKv<KvPair[]>(reply.text())[0];
    if (!pair) return true;
    if (String(pair.Flags) !== String(LOCK_FLAG_VALUE)) throw new LockConflict('Existing key does not match lock use');
    if (pair.Session) return false;
    await this.client.delete(kvPath(this.key), { query: { cas: String(pair.ModifyIndex) } });
    return true;
  }
}
