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

/** `read`'s answer, its large listings built in steps first. */
export async function settledRead<T>(read: () => T | Promise<T>): Promise<T> {
  if (!IN_STEPS) return read();
  for (let waits = 0; ; waits++) {
    try {
      return await (waits < MAX_WAITS ? deferringBuilds(read) : read());
    } catch (err) {
      if (!(err instanceof BuildPending)) throw err;
      await err.ready;
    }
  }
}
