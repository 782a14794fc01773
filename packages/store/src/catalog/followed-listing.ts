// The loop shared by the catalog's kept listings (node-rows.ts, node-listing.ts): answer from what
// is kept after following the nodes the catalog's journal names (CatalogTable.nodeChangesSince),
// or — when the journal cannot tell (first read, a restored table) or names more nodes than are
// worth following — build anew in steps (listing-steps.ts) from the state and journal position
// taken when the build started, then follow the writes made meanwhile like any others. What a
// listing keeps, how it builds and how it follows one node are its own.
import type { CatalogTable } from './catalog-table';
import { resultOf, SLICED_BUILD_MIN, SlicedBuild, type BuildSteps, type ListingBuilds } from './listing-steps';

/** The first of `rows` (sorted by key) whose key is ≥ `key`: where a node's rows start or would go. */
export function lowerBound(rows: readonly { key: string }[], key: string): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export abstract class FollowedListing<B, T> {
  /** The table's node version what is kept reflects; -1 before the first build. */
  private version = -1;
  /** A full build while it runs in steps; `version`: the table's when it took its inputs. */
  private build: { steps: SlicedBuild<B>; version: number } | undefined;

  constructor(
    protected readonly catalog: CatalogTable,
    /** More changed nodes than this since the last read: one full build instead. */
    private readonly maxFollowed: number,
    /** The store's builds in steps (its lane; which reads wait). */
    private readonly builds: ListingBuilds,
  ) {}

  /**
   * The answer in order. Do not modify. To a read that waits for builds (ListingBuilds.tryRead)
   * while a build runs in steps: what is kept now, a stand-in that read drops.
   */
  update(): readonly T[] {
    for (;;) {
      if (this.build !== undefined && !this.install(this.build)) return this.answer();
      const changes = this.catalog.nodeChangesSince(this.version);
      const changed = changes.keys === null || this.version < 0 ? null : new Set(changes.keys);
      if (changed !== null && changed.size <= this.maxFollowed) {
        for (const nodeKey of changed) this.follow(nodeKey);
        this.version = changes.version;
        return this.answer();
      }
      // Built, then (next turn of this loop) the changes made during the build followed.
      this.startBuild(changes.version);
    }
  }

  /** Whether a full build is under way (the listing then holds no answer of its own yet: keep it). */
  get building(): boolean {
    return this.build !== undefined;
  }

  /** The steps of a full build from the table as it is now, and how many inputs it takes (small ones run at once). */
  protected abstract buildSteps(): { steps: BuildSteps<B>; inputs: number };
  /** Keeps what a full build made. */
  protected abstract adopt(built: B): void;
  /** Brings what is kept for node `nodeKey` in line with the table. */
  protected abstract follow(nodeKey: string): void;
  /** What a read hands out, as kept now. */
  protected abstract answer(): readonly T[];

  private startBuild(version: number): void {
    const { steps: gen, inputs } = this.buildSteps();
    const steps = new SlicedBuild(gen, this.builds);
    if (inputs < SLICED_BUILD_MIN) steps.finish();
    this.build = { steps, version };
  }

  /** Keeps what `build` made; false when the reader waits for it instead. */
  private install(build: { steps: SlicedBuild<B>; version: number }): boolean {
    const built = resultOf(build.steps, () => (this.build = undefined));
    if (built === undefined) return false;
    this.adopt(built);
    this.version = build.version;
    this.build = undefined;
    return true;
  }
}
