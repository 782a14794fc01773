// Blocking queries park a one-shot callback on the watch keys their result depends on. Watchers are
// filed per key so a write costs O(watchers of the keys it bumped), whatever the total number parked.

interface Watcher {
  readonly keys: readonly string[];
  readonly fire: () => void;
}

export class WatchRegistry {
  private readonly byKey = new Map<string, Set<Watcher>>();
  /** Every parked watcher, including those on no key (only a restore wakes them). */
  private readonly all = new Set<Watcher>();

  /** Park `fire` on `keys`; it runs at most once. Returns a cancel function (idempotent). */
  add(keys: readonly string[], fire: () => void): () => void {
    const watcher: Watcher = { keys: [...new Set(keys)], fire };
    this.all.add(watcher);
    for (const k of watcher.keys) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(watcher);
    }
    return () => this.remove(watcher);
  }

  /** Detach and return every watcher parked on any of `keys`. */
  take(keys: Iterable<string>): Watcher[] {
    const taken = new Set<Watcher>();
    for (const k of keys) {
      const set = this.byKey.get(k);
      if (set) for (const w of set) taken.add(w);
    }
    for (const w of taken) this.remove(w);
    return [...taken];
  }

  /** Detach and return every parked watcher. */
  takeAll(): Watcher[] {
    const taken = [...this.all];
    this.all.clear();
    this.byKey.clear();
    return taken;
  }

  /** How many watchers are parked (for tests and metrics). */
  get size(): number {
    return this.all.size;
  }

  private remove(watcher: Watcher): void {
    this.all.delete(watcher);
    for (const k of watcher.keys) {
      const set = this.byKey.get(k);
      if (!set) continue;
      set.delete(watcher);
      if (set.size === 0) this.byKey.delete(k);
    }
  }
}

/** By default a watcher's error is rethrown on a fresh microtask, where it surfaces as an uncaught error. */
export function rethrowLater(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}

/** Run callbacks one by one; a throwing callback must not stop the others nor the apply that woke it. */
export function fireAll(watchers: readonly { fire: () => void }[], onError: (err: unknown) => void = rethrowLater): void {
  for (const w of watchers) {
    try {
      w.fire();
    } catch (err) {
      onError(err);
    }
  }
}
