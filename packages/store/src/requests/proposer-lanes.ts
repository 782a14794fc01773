// Request ids as two numbers: the proposer's lane and a sequence number. The RPC layer makes ids as
// `<proposer prefix>.<sequence in base 36>` (server rpc/request-ids.ts), one prefix per process, so
// the window can keep a number pair per request instead of retaining one id string each: no string
// hashed per write, no 100,000 strings for the garbage collector to trace and promote. Any other
// id (older formats, hand-made ids in tests) still works through lane 0, whose "sequence" is a
// serial number handed out per distinct id.
import { ShardedMap } from '../sharded-map';

/** Lane 0: ids not of the `<prefix>.<base36>` form, kept whole. */
export const OTHER_LANE = 0;

/** The ids of the window at one moment: each lane's prefix, and any id by its lane and sequence. */
export interface FrozenIds {
  readonly prefixes: readonly string[];
  idOf(lane: number, seq: number): string;
}

/** A base-36 sequence of at most 10 digits stays below 2^53 (36^10 ≈ 3.7e15), so it is exact in a double. */
const MAX_DIGITS = 10;

/**
 * The sequence number of `id` (`<prefix>.<base36>` in canonical form: lower case, no leading zero),
 * or -1. Canonical only, so that `prefix + '.' + seq.toString(36)` gives back exactly `id`.
 */
function sequenceOf(id: string, dot: number): number {
  const digits = id.length - dot - 1;
  if (dot <= 0 || digits < 1 || digits > MAX_DIGITS) return -1;
  if (digits > 1 && id.charCodeAt(dot + 1) === 48) return -1;
  let seq = 0;
  for (let i = dot + 1; i < id.length; i++) {
    const c = id.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : -1;
    if (d < 0) return -1;
    seq = seq * 36 + d;
  }
  return seq;
}

/**
 * The proposers with requests in the window, numbered. A lane is freed when its last request leaves
 * the window (a restarted process has a new prefix; old ones must not pile up) and its number reused.
 */
export class ProposerLanes {
  private readonly byPrefix = new Map<string, number>();
  /** Lane → prefix ('' for a free lane and for lane 0). */
  private prefixes: string[] = [''];
  /** Lane → requests of it in the window. */
  private live: number[] = [0];
  private free: number[] = [];
  /** The last lane looked up: nearly every write of a burst comes through the same proposer. */
  private lastPrefix = '';
  private lastLane = -1;
  /** Lane 0's ids by serial, and their serials (sharded: a full window of them is 100,000 keys, sharded-map.ts). */
  private readonly otherIds = new ShardedMap<number, string>();
  private readonly otherSerials = new ShardedMap<string, number>();
  private nextSerial = 1;

  /** Set by find()/intern(): the lane of the id just looked at. */
  lane = 0;

  /**
   * The sequence of `id` with `this.lane` set, or -1 when the window cannot hold it: a prefix not
   * seen (nothing of it is in the window) or an id of lane 0 never recorded.
   */
  find(id: string): number {
    const dot = id.lastIndexOf('.');
    const seq = sequenceOf(id, dot);
    if (seq < 0) {
      this.lane = OTHER_LANE;
      return this.otherSerials.get(id) ?? -1;
    }
    const lane = this.laneOfPrefix(id, dot);
    if (lane === undefined) return -1;
    this.lane = lane;
    return seq;
  }

  /** Like find(), but makes the lane (or lane 0's serial) when there is none yet. */
  intern(id: string): number {
    const dot = id.lastIndexOf('.');
    const seq = sequenceOf(id, dot);
    if (seq < 0) {
      this.lane = OTHER_LANE;
      let serial = this.otherSerials.get(id);
      if (serial === undefined) {
        serial = this.nextSerial++;
        this.otherSerials.set(id, serial);
        this.otherIds.set(serial, id);
      }
      return serial;
    }
    let lane = this.laneOfPrefix(id, dot);
    if (lane === undefined) {
      const prefix = id.slice(0, dot);
      lane = this.free.pop() ?? this.prefixes.length;
      this.prefixes[lane] = prefix;
      this.live[lane] = 0;
      this.byPrefix.set(prefix, lane);
      this.lastPrefix = prefix;
      this.lastLane = lane;
    }
    this.lane = lane;
    return seq;
  }

  private laneOfPrefix(id: string, dot: number): number | undefined {
    if (dot === this.lastPrefix.length && this.lastLane > 0 && id.startsWith(this.lastPrefix)) return this.lastLane;
    const lane = this.byPrefix.get(id.slice(0, dot));
    if (lane !== undefined) {
      this.lastPrefix = this.prefixes[lane];
      this.lastLane = lane;
    }
    return lane;
  }

  /** A request of `lane` entered the window. */
  added(lane: number): void {
    this.live[lane]++;
  }

  /** A request of `lane` (with sequence `seq`) left the window. */
  removed(lane: number, seq: number): void {
    if (lane === OTHER_LANE) {
      const id = this.otherIds.get(seq);
      this.otherIds.delete(seq);
      if (id !== undefined) this.otherSerials.delete(id);
      this.live[OTHER_LANE]--;
      return;
    }
    if (--this.live[lane] > 0) return;
    this.byPrefix.delete(this.prefixes[lane]);
    this.prefixes[lane] = '';
    this.free.push(lane);
    if (this.lastLane === lane) this.lastLane = -1;
  }

  /** The id a (lane, seq) pair stands for. */
  idOf(lane: number, seq: number): string {
    return lane === OTHER_LANE ? (this.otherIds.get(seq) ?? '') : `${this.prefixes[lane]}.${seq.toString(36)}`;
  }

  /** A copy that keeps answering idOf() for the requests now in the window (a snapshot in progress). */
  frozen(): FrozenIds {
    const prefixes = this.prefixes.slice();
    const others = this.live[OTHER_LANE] > 0 ? new Map(this.otherIds) : undefined;
    return { prefixes, idOf: (lane, seq) => (lane === OTHER_LANE ? (others?.get(seq) ?? '') : `${prefixes[lane]}.${seq.toString(36)}`) };
  }

  /** Problems with the bookkeeping, given each lane's count of requests in the window. */
  invariants(counted: Map<number, number>): string[] {
    const problems: string[] = [];
    for (let lane = 0; lane < this.live.length; lane++) {
      if ((counted.get(lane) ?? 0) !== this.live[lane]) problems.push(`request lane ${lane} counts ${this.live[lane]} requests, the window holds ${counted.get(lane) ?? 0}`);
    }
    if (this.otherIds.size !== this.live[OTHER_LANE] || this.otherSerials.size !== this.live[OTHER_LANE]) problems.push('the window\'s other ids and its lane 0 hold different requests');
    return problems;
  }
}
