// The first build of a large listing in bounded steps (issue #16). The kept listings (node-listing,
// health-listing, kv/kv-listing) follow a journal of changes once built, but their first build —
// after a start, a snapshot restore, or when the journal can no longer tell — made every output
// and sorted them in one go: ~1 s of event loop for the health of 100,000 instances, ~0.3 s for a
// 100,000-key prefix, during which no write, heartbeat or other read made progress.
//
// A build is a generator that yields every few dozen or hundred rows. A reader that can wait (the
// RPC layer runs endpoints inside deferringBuilds: rpc/settled-read.ts) gets BuildPending when the
// listing it needs is not built: the build then runs a step of ~2 ms at a time, taking turns with
// the large answers' slices in one lane (the HTTP layer installs its lane: useListingLane), and the
// reader runs again when it is done. Every reader of the same listing meanwhile waits for that one
// build. A caller that cannot wait (code reading the store directly: leader duties, tests) finishes
// the build at once, in one go, as before. Builds work from the state when they started and record
// the journal's position then; writes that land between two steps are followed through the journal
// afterwards, like any write.
import { performance } from 'node:perf_hooks';

/** Where build steps take turns (http/slice-lane.ts's SliceLane has this shape). */
export interface StepLane {
  /** Resolves when the caller may run a step; it must call done() after, whatever happens. */
  turn(): Promise<void>;
  done(ms: number): void;
}

/** Without a lane installed (a store outside an agent): one event-loop turn between steps. */
const ownTurns: StepLane = {
  turn: () => new Promise<void>((resolve) => setImmediate(resolve)),
  done: () => undefined,
};

let lane: StepLane = ownTurns;
/** Event-loop time one step may take, as one slice of a large answer (http/sliced-json.ts). */
let stepMs = 2;

/**
 * Build steps take turns in `l` from now on (the HTTP layer's lane of large answers), each taking
 * up to `ms` (tests make them tiny to interleave writes often; a step always makes some progress).
 */
export function useListingLane(l: StepLane, ms = 2): void {
  lane = l;
  stepMs = ms;
}

/** Thrown to a reader that can wait: run the read again once `ready` resolves. */
export class BuildPending extends Error {
  constructor(readonly ready: Promise<void>) {
    super('a large listing is being built');
  }
}

let deferring = 0;

/**
 * Runs `read` allowing listings to throw BuildPending instead of building in one go. Only the
 * synchronous part of `read` counts: a blocking query's later runs finish builds at once.
 */
export function deferringBuilds<T>(read: () => T): T {
  deferring++;
  try {
    return read();
  } finally {
    deferring--;
  }
}

/** A build yields (nothing) between units of work and returns what it built. */
export type BuildSteps<T> = Generator<void, T, void>;

export class SlicedBuild<T> {
  private outcome: { value: T } | { error: unknown } | undefined;
  private built: Promise<void> | undefined;
  private resolveBuilt: (() => void) | undefined;

  constructor(private readonly steps: BuildSteps<T>) {}

  get done(): boolean {
    return this.outcome !== undefined;
  }

  /**
   * What was built: finished in one go if the steps have not, or BuildPending when the caller can
   * wait (inside deferringBuilds).
   */
  result(): T {
    if (this.outcome === undefined && deferring > 0) throw new BuildPending(this.ready());
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
 * build.result(), and `forget` called when the build failed (a bug: the next read starts afresh
 * rather than failing for ever). BuildPending passes through.
 */
export function resultOf<T>(build: SlicedBuild<T>, forget: () => void): T {
  try {
    return build.result();
  } catch (err) {
    if (!(err instanceof BuildPending)) forget();
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
