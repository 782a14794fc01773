/**
 * The write context of one applied command: its Raft index and the watch keys it changed.
 * Tables call bump() for every key whose readers would see a difference; the store then records
 * the index for those keys and wakes exactly their watchers.
 */
export class Txn {
  private readonly keys = new Set<string>();

  constructor(readonly index: number) {}

  bump(...keys: readonly string[]): void {
    for (const k of keys) this.keys.add(k);
  }

  get bumped(): ReadonlySet<string> {
    return this.keys;
  }
}
