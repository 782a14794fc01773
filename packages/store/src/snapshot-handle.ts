// A point-in-time handle on the store's state (hashicorp/raft's FSMSnapshot): Store.openSnapshot()
// makes one cheaply on the apply path, and persist() serialises it later, in slices of a few ms
// between further applies, into exactly the bytes the state had at the handle's index.
//
// How the handle keeps seeing its index while the store moves on (every table's capture() says it
// for itself): rows are never changed in place — a write stores a new record object — so a handle
// holds references, not copies. Taking one copies the *spine* of each table (an array of row
// references per map, ~1 ms per 100,000 rows; no row is copied or encoded); containers that writes do
// change in place are copy-on-write (the catalog's per-node service and check maps) or keep a
// pre-image of what they change while a handle is open (the KV slots).
import { performance } from 'node:perf_hooks';
import { encodePieceSteps, encodeSteps, runSliced, runSlicedPieces, runSync, type Fields, type SliceOptions } from './snapshot-stream';

export class SnapshotReleasedError extends Error {
  constructor() {
    super('snapshot handle released before it was persisted');
    this.name = 'SnapshotReleasedError';
  }
}

export interface PersistOptions extends Pick<SliceOptions, 'sliceMs' | 'pause'> {
  /** Items written per step (default 256); tests use 1 to interleave writes between items. */
  step?: number;
}

export interface PieceOptions extends PersistOptions {
  /** About how many bytes each piece handed to the sink holds (default 1 MiB). */
  pieceBytes?: number;
}

/** Where persistTo() writes (Raft's SnapshotSink): the piece's memory is reused once write() resolves. */
export interface PieceSink {
  write(piece: Uint8Array): Promise<void>;
}

/** Pieces of bytes already serialised are handed out at most this large. */
const PIECE_BYTES = 1 << 20;

export class StoreSnapshot {
  private steps: Generator<void, Uint8Array, void> | null = null;
  private result: Uint8Array | null = null;
  private persisting: Promise<Uint8Array> | null = null;
  /** A persistTo() under way: the encoding is going to a sink, never to one buffer. */
  private streaming: Promise<void> | null = null;
  private tree: Fields | null;
  private released = false;
  private captured = true;
  private busy = 0;

  /**
   * `unhold` gives back what the capture holds in the live tables (pre-images being recorded);
   * `expectedSize` is the likely size in bytes (the previous snapshot's), `sized` hears the real one.
   */
  constructor(
    /** The Raft index this snapshot is the state of. */
    readonly index: number,
    tree: Fields,
    private readonly unhold: () => void,
    private readonly expectedSize = 0,
    private readonly sized: (bytes: number) => void = () => undefined,
  ) {
    this.tree = tree;
  }

  /** Event-loop milliseconds serialising has taken so far (all of it once persist() resolved). */
  get costMs(): number {
    return this.busy;
  }

  /**
   * The state as of `index`, serialised in slices of about `sliceMs` (default 4 ms) that yield to
   * the event loop; writes may be applied to the store meanwhile. Calling it again returns the same
   * promise. Rejects with SnapshotReleasedError if release() comes first.
   */
  persist(opts: PersistOptions = {}): Promise<Uint8Array> {
    if (this.persisting) return this.persisting;
    if (this.streaming) return Promise.reject(new Error('snapshot is being persisted to a sink'));
    if (this.result) return (this.persisting = Promise.resolve(this.result));
    if (this.released) return Promise.reject(new SnapshotReleasedError());
    const steps = this.stepsFor(opts.step);
    this.persisting = runSliced(steps, { sliceMs: opts.sliceMs, pause: opts.pause, stop: () => (this.released ? new SnapshotReleasedError() : null) }).then(
      ({ value, busyMs }) => {
        this.busy += busyMs;
        // bytes() may have run the remaining steps meanwhile; the bytes are then its.
        return this.result ?? this.finish(value);
      },
      (err: unknown) => {
        this.drop();
        throw err;
      },
    );
    return this.persisting;
  }

  /**
   * The same bytes, written into `sink` in pieces of about `pieceBytes` while the encoding runs in
   * slices (as persist()): the snapshot never exists as one buffer. The next piece is encoded into
   * the same memory once the sink's write() resolves. Rejects with SnapshotReleasedError if
   * release() comes first, or with the sink's error. Once only (persist() and bytes() refuse meanwhile).
   */
  persistTo(sink: PieceSink, opts: PieceOptions = {}): Promise<void> {
    if (this.streaming || this.persisting || this.steps) return Promise.reject(new Error('snapshot is already being persisted'));
    if (this.released) return Promise.reject(new SnapshotReleasedError());
    if (this.result) {
      const bytes = this.result;
      return (this.streaming = (async () => {
        for (let at = 0; at < bytes.length; at += PIECE_BYTES) await sink.write(bytes.subarray(at, at + PIECE_BYTES));
      })());
    }
    const steps = encodePieceSteps(this.tree, opts.step, opts.pieceBytes);
    const stop = () => (this.released ? new SnapshotReleasedError() : null);
    this.streaming = runSlicedPieces(steps, (piece) => sink.write(piece), { sliceMs: opts.sliceMs, pause: opts.pause, stop }).then(
      ({ busyMs, bytes }) => {
        this.busy += busyMs;
        this.drop();
        this.sized(bytes);
      },
      (err: unknown) => {
        this.drop();
        throw err;
      },
    );
    return this.streaming;
  }

  /** The same bytes, serialised now in one go (blocking for as long as that takes). */
  bytes(): Uint8Array {
    if (this.result) return this.result;
    if (this.streaming) throw new Error('snapshot is being persisted to a sink');
    if (this.released) throw new SnapshotReleasedError();
    const started = performance.now();
    // Finishes a persist() under way too: it then resolves with these bytes at its next slice.
    const value = runSync(this.stepsFor());
    this.busy += performance.now() - started;
    return this.finish(value);
  }

  /** Done with the handle: stops a persist() under way and lets the store stop keeping its state. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.drop();
  }

  private stepsFor(step?: number): Generator<void, Uint8Array, void> {
    if (!this.steps) this.steps = encodeSteps(this.tree, step, this.expectedSize);
    return this.steps;
  }

  private finish(value: Uint8Array): Uint8Array {
    this.result = value;
    this.drop();
    this.sized(value.length);
    return value;
  }

  /** The bytes exist (or never will): the captured state and its pre-images can go. */
  private drop(): void {
    this.tree = null;
    if (this.captured) {
      this.captured = false;
      this.unhold();
    }
  }
}
