import { monotonicMs } from './monotonic-clock';

/**
 * The write context of one applied command: its Raft index and the watch keys it changed.
 * Tables call bump() for every key whose readers would see a difference; the store then records
 * the index for those keys and wakes exactly their watchers.
 */
export class Txn {
  private readonly keys = new Set<string>();

  /**
   * @param appliedAt monotonic ms when this server applies the command: only for state that is never
   *   replicated (KV lock-delays, which Consul too keeps per server) and so is only ever compared
   *   with this process's own monotonic clock.
   */
  constructor(
    readonly index: number,
    readonly appliedAt: number = monotonicMs(),
  ) {}

  bump(...keys: readonly string[]): void {
    for (const k of keys) this.keys.add(k);
  }

  get bumped(): ReadonlySet<string> {
    return this.keys;
  }
}
