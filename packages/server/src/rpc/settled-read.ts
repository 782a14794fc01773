// A read whose listing is being built in steps waits for it instead of building it in one go
// (issue #16: no single read, however large, may hold the event loop for more than 50 ms). The
// store's kept listings (node, health, KV prefix) throw BuildPending inside deferringBuilds when
// their first build would be large; the read then runs again once that build — shared by every
// reader of the same listing — is done. Only the read's synchronous part defers, so the store
// cannot change between the check and the answer.
import { BuildPending, deferringBuilds } from '@registry/store';

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
export function settledRead<T>(read: () => T): T | Promise<T> {
  if (!IN_STEPS) return read();
  try {
    return deferringBuilds(read);
  } catch (err) {
    if (!(err instanceof BuildPending)) throw err;
    return afterBuilds(read, err);
  }
}

/** The read again once the pending build is done; after MAX_WAITS waits it builds in one go. */
async function afterBuilds<T>(read: () => T, pending: BuildPending): Promise<T> {
  for (let waits = 1; ; waits++) {
    await pending.ready;
    try {
      return waits < MAX_WAITS ? deferringBuilds(read) : read();
    } catch (err) {
      if (!(err instanceof BuildPending)) throw err;
      pending = err;
    }
  }
}
