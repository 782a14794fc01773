// Where each (lane, sequence) pair of the dedup window sits in its ring: an open-addressing hash
// table in one Float64Array (linear probing, backward-shift deletion, at most half full). A Map keyed
// by id strings cost a string hash per write and, at 100,000 entries on every server, a large
// table the garbage collector traces on every major collection; this holds only numbers, outside
// the JavaScript heap, and allocates nothing per write.
//
// Each bucket holds its key beside its value — [sequence, lane × 2^24 + slot + 1] — so a probe, an
// insert and a delete (with its backward shift) touch one or two cache lines of this table and
// nothing else: the window is recorded between much larger pieces of work, with cold caches.

const EMPTY = 0;
/** Slots stay far below 2^24 (the ring never exceeds the count bound's power of two: 2^17). */
const SLOT_SPAN = 2 ** 24;

export class SlotIndex {
  /** Two numbers a bucket: sequence, then tag (lane × SLOT_SPAN + slot + 1; 0 when empty). */
  private buckets: Float64Array;
  private mask: number;

  constructor(capacity: number) {
    this.buckets = new Float64Array(2 * bucketsFor(capacity));
    this.mask = this.buckets.length / 2 - 1;
  }

  /** The slot holding (lane, seq), or -1. */
  find(lane: number, seq: number): number {
    const b = this.buckets;
    for (let i = this.home(lane, seq); ; i = (i + 1) & this.mask) {
      const tag = b[2 * i + 1];
      if (tag === EMPTY) return -1;
      if (b[2 * i] === seq && Math.floor(tag / SLOT_SPAN) === lane) return (tag % SLOT_SPAN) - 1;
    }
  }

  /** Adds (lane, seq) at `slot`; the pair must not be in the table. */
  add(lane: number, seq: number, slot: number): void {
    const b = this.buckets;
    let i = this.home(lane, seq);
    while (b[2 * i + 1] !== EMPTY) i = (i + 1) & this.mask;
    b[2 * i] = seq;
    b[2 * i + 1] = lane * SLOT_SPAN + slot + 1;
  }

  /** Removes (lane, seq) at `slot`; later entries of its run shift back into the gap. */
  remove(lane: number, seq: number, slot: number): void {
    const b = this.buckets;
    const tag = lane * SLOT_SPAN + slot + 1;
    let gap = this.home(lane, seq);
    while (b[2 * gap + 1] !== tag) {
      if (b[2 * gap + 1] === EMPTY) return;
      gap = (gap + 1) & this.mask;
    }
    for (let i = (gap + 1) & this.mask; b[2 * i + 1] !== EMPTY; i = (i + 1) & this.mask) {
      const home = this.home(Math.floor(b[2 * i + 1] / SLOT_SPAN), b[2 * i]);
      // The entry at i may fill the gap only if its home is not cyclically within (gap, i].
      const stays = gap <= i ? home > gap && home <= i : home > gap || home <= i;
      if (stays) continue;
      b[2 * gap] = b[2 * i];
      b[2 * gap + 1] = b[2 * i + 1];
      gap = i;
    }
    b[2 * gap] = 0;
    b[2 * gap + 1] = EMPTY;
  }

  /** Empties the table, sized for `capacity` slots (the ring grew or was compacted: every slot is added again). */
  reset(capacity: number): void {
    this.buckets = new Float64Array(2 * bucketsFor(capacity));
    this.mask = this.buckets.length / 2 - 1;
  }

  /** Entries in the table (a pass over it: for invariants). */
  count(): number {
    let n = 0;
    for (let i = 1; i < this.buckets.length; i += 2) if (this.buckets[i] !== EMPTY) n++;
    return n;
  }

  private home(lane: number, seq: number): number {
    // Runs of 8 consecutive sequences of a lane share 128 bytes of table (a proposer's ids come in
    // order, and leave the window in order): one cache miss per run rather than per request. The
    // runs themselves are scattered by a hash of the lane and the run's number.
    const run = Math.floor(seq / 8);
    let h = Math.imul((run | 0) ^ Math.imul(lane, 0x9e3779b1), 0x85ebca6b) ^ ((run / 4294967296) | 0);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 13;
    return ((h << 3) | (seq & 7)) & this.mask;
  }
}

/** A power of two at least twice `capacity`: probes stay short at half full. */
function bucketsFor(capacity: number): number {
  let n = 16;
  while (n < capacity * 2) n *= 2;
  return n;
}
