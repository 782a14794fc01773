// The first build of a large listing in bounded steps (issue #16). The kept listings (node-listing,
// health-listing, kv/kv-listing) follow a journal of changes once built, but their first build —
// after a start, a snapshot restore, or when the journal can no longer tell — made every output
// and sorted them in one go: ~1 s of event loop for the health of 100,000 instances, ~0.3 s for a
// 100,000-key prefix, during which no write, heartbeat or other read made progress.
//
// A build is a generator that yields every few dozen or hundred rows. A reader that can wait (the
// RPC layer's read policy, rpc/settled-read.ts, reads through Store.tryRead) gets the value
// { pending } when a listing it needs is not built: the build then runs a step of ~2 ms at a time,
// taking turns in the store's lane (StoreOptions.listingLane: the agent passes the lane its large
// answers' slices take turns in, http/slice-lane.ts), and the reader runs again when it is done.
// Every reader of the same listing meanwhile waits for that one build. A caller that cannot wait
// (code reading the store directly: leader duties, tests) finishes the build at once, in one go, as
// before. Builds work from the state when they started and record the journal's position then;
// writes that land between two steps are followed through the journal afterwards, like any write.
import { performance } from 'node:perf_hooks';

/** Where build steps take turns (http/slice-lane.ts's SliceLane has this shape). */
export interface StepLane {
  /** Resolves when the caller may run a step; it must call done() after, whatever happens. */
  turn(): Promise<void>;
  done(ms: number): void;
}

/** A store given no lane (outside an agent): one event-loop turn between steps. */
export const OWN_TURNS: StepLane = {
  turn: () => new Promise<void>((resolve) => setImmediate(resolve)),
  done: () => undefined,
};

/**
 * A read's outcome when it may wait for builds (Store.tryRead): its value, or the builds to wait
 * for before reading again. In the second case the read ran on what the listings held (a listing
 * being built stands in with its previous rows) and what it made is dropped, never answered.
 */
export type Settled<T> = { value: T } | { pending: Promise<void> };

/**
 * A store's builds in steps: the lane they take turns in, the time a step may take, and the
 * builds found unfinished by the read trying now. One per Store, handed to each listing it makes.
 */
export class ListingBuilds {
  /** Reads trying now (tryRead may nest); 0: the caller cannot wait and builds finish at once. */
  private trying = 0;
  /** What the reads trying now wait for, each once; a read owns the part past its mark. */
  private readonly found: Promise<void>[] = [];

  constructor(
    readonly lane: StepLane = OWN_TURNS,
    /** Event-loop time one step may take (tests make them tiny; a step always makes some progress). */
    readonly stepMs = 2,
  ) {}

  /** `read`'s value, or { pending } when a listing it needs is being built in steps. */
  tryRead<T>(read: () => T): Settled<T> {
    const mark = this.found.length;
    this.trying++;
    let value: T;
    try {
      value = read();
    } catch (err) {
      this.found.length = mark;
      throw err;
    } finally {
      this.trying--;
    }
    if (this.found.length === mark) return { value };
    const waits = this.found.splice(mark);
    return { pending: waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined) };
  }

  /** Whether the reader waits for `build` (then noted as pending for it) rather than finishing it now. */
  waits(build: SlicedBuild<unknown>): boolean {
    if (this.trying === 0) return false;
    const ready = build.ready();
    if (!this.found.includes(ready)) this.found.push(ready);
    return true;
  }
}

/** A build yields (nothing) between units of work and returns what it built. */
export type BuildSteps<T> = Generator<void, T, void>;

export class SlicedBuild<T> {
  private outcome: { value: T } | { error: unknown } | undefined;
  private built: Promise<void> | undefined;
  private resolveBuilt: (() => void) | undefined;

  constructor(
    private readonly steps: BuildSteps<T>,
    private readonly builds: ListingBuilds,
  ) {}

  get done(): boolean {
    return this.outcome !== undefined;
  }

  /**
   * What was built: finished in one go if the steps have not, or undefined when the reader waits
   * for it instead (ListingBuilds.tryRead; the build is then noted as pending for that read).
   */
  result(): T | undefined {
    if (this.outcome === undefined && this.builds.waits(this)) return undefined;
    return this.finish();
  }

  /** What was built, the remaining steps run now in one go (small builds; callers that cannot wait). */
  finish(): T {
    while (this.outcome === undefined) this.advance();
    if ('error' in this.outcome) throw this.outcome.error;
    return this.outcome.value;
  }

  /**
   * Resolves (never rejects) when built, by the lane's steps or by a caller that finished it; the
   * first call starts the steps.
   */
  ready(): Promise<void> {
    if (this.built === undefined) {
      if (this.outcome !== undefined) return (this.built = Promise.resolve());
      this.built = new Promise<void>((resolve) => (this.resolveBuilt = resolve));
      void this.drive();
    }
    return this.built;
  }

  private advance(): void {
    try {
      const r = this.steps.next();
      if (r.done) this.outcome = { value: r.value };
    } catch (error) {
      this.outcome = { error };
    }
    if (this.outcome !== undefined) this.resolveBuilt?.();
  }

  private async drive(): Promise<void> {
    while (this.outcome === undefined) {
      const { lane, stepMs } = this.builds;
      await lane.turn();
      const started = performance.now();
      try {
        // At least one unit of work per turn: a lane never grants a turn for nothing.
        while (this.outcome === undefined) {
          this.advance();
          if (performance.now() - started >= stepMs) break;
        }
      } finally {
        lane.done(performance.now() - started);
      }
    }
  }
}

/**
 * build.result() (undefined: the reader waits for it), and `forget` called when the build failed (a
 * bug: the next read starts afresh rather than failing for ever).
 */
export function resultOf<T>(build: SlicedBuild<T>, forget: () => void): T | undefined {
  try {
    return build.result();
  } catch (err) {
    forget();
    throw err;
  }
}

/** Listings shorter than this are built in one go: a step would cost more than it saves. */
export const SLICED_BUILD_MIN = 1000;

/** Rows made per yield: making one costs ~1–10 µs, checking the clock ~50 ns. */
export const ROWS_PER_YIELD = 256;

/**
 * `items` sorted by `compare` (stable), in steps: runs of RUN items sorted at once, then merged
 * pairwise, yielding every ROWS_PER_YIELD·4 items moved. Sorting 100,000 rows in one go took
 * ~60–100 ms of event loop.
 */
export function* sortInSteps<T>(items: T[], compare: (a: T, b: T) => number): BuildSteps<T[]> {
  const RUN = 512;
  const n = items.length;
  let from = items.slice();
  for (let at = 0; at < n; at += RUN) {
    const run = from.slice(at, at + RUN).sort(compare);
    for (let k = 0; k < run.length; k++) from[at + k] = run[k];
    yield;
  }
  let to: T[] = new Array<T>(n);
  const budget = ROWS_PER_YIELD * 4;
  for (let width = RUN; width < n; width *= 2) {
    let moved = 0;
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid || j < hi) {
        // Ties take the left run's item first: stable, like Array.prototype.sort.
        if (j >= hi || (i < mid && compare(from[i], from[j]) <= 0)) to[k++] = from[i++];
        else to[k++] = from[j++];
        if (++moved >= budget) {
          moved = 0;
          yield;
        }
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
