// A read whose listing is being built in steps waits for it instead of building it in one go
// (issue #16: no single read, however large, may hold the event loop for more than 50 ms). The read
// policy runs the read through Store.tryRead: when a kept listing it needs (node, health, KV prefix)
// is not built and its first build would be large, the outcome is { pending } — a value, not an
// exception through the endpoint — and the read runs again once that build, shared by every reader
// of the same listing, is done (what the read made meanwhile is dropped: store
// catalog/listing-steps.ts). Only the read's synchronous part is tried, so the store cannot change
// between the check and the answer.
import type { Settled } from '@registry/store';

/** What a read can wait through: Store.tryRead. */
export interface ReadsThatWait {
  tryRead<T>(read: () => T): Settled<T>;
}

/**
 * Waits for this many builds at most: under a flood of writes a listing's journal may overflow
 * during each build; the read then finishes the last build in one go rather than wait for ever.
 */
const MAX_WAITS = 3;

/**
 * REGISTRY_LISTING_BUILDS=one-go builds every listing in one go as before, for benchmarks only
 * (bench/large-answers/first-read-http.js compares the two on the same build).
 */
const IN_STEPS = process.env.REGISTRY_LISTING_BUILDS !== 'one-go';

/**
 * `read`'s answer, its large listings built in steps first. Answered synchronously when no build is
 * pending — every read but the first large one after a start or a restore — so the read path pays
 * no promise for it.
 */
export function settledRead<T>(store: ReadsThatWait, read: () => T): T | Promise<T> {
  if (!IN_STEPS) return read();
  const first = store.tryRead(read);
  return 'value' in first ? first.value : afterBuilds(store, read, first.pending);
}

/** The read again once the pending build is done; after MAX_WAITS waits it builds in one go. */
async function afterBuilds<T>(store: ReadsThatWait, read: () => T, pending: Promise<void>): Promise<T> {
  for (let waits = 1; ; waits++) {
    await pending;
    if (waits >= MAX_WAITS) return read();
    const again = store.tryRead(read);
    if ('value' in again) return again.value;
    pending = again.pending;
  }
}
