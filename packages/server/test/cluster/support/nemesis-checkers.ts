/**
 * Checkers for the nemesis test (nemesis.test.ts) that the register linearizability checker does
 * not cover: create-if-absent outcomes against the final state, per-client monotonic registers
 * (a write must never be overtaken by an older one of the same client) and lock holding
 * intervals (no two clients at once). Pure functions over recorded outcomes, unit-tested in
 * kit/nemesis-checkers.test.ts.
 *
 * Outcomes follow the linearizability checker's vocabulary: `ok` happened and the client saw
 * the answer, `fail` certainly did not happen, `info` may or may not have happened.
 */

export type Outcome = 'ok' | 'fail' | 'info';

// ---------------------------------------------------------------------------------------------
// Create-if-absent (`PUT /v1/kv/<fresh key>?cas=0`)

export interface CreateRecord {
  key: string;
  outcome: Outcome;
  /** The server's answer for `ok` outcomes: `true` created, `false` the key already existed. */
  answer?: boolean;
}

export interface CreateVerdict {
  /** Answered `false` although nobody else ever wrote the (fresh) key, yet the key exists: applied and denied. */
  appliedButFalse: string[];
  /** Answered `false` and the key does not exist: the server denied a create that nothing could have prevented. */
  falseAndAbsent: string[];
  /** Answered `true` but the key is missing afterwards: an acknowledged write was lost. */
  lost: string[];
  /** A key that exists although its create certainly failed (4xx, connection refused). */
  failedButPresent: string[];
  /** Keys found under the prefix that no client ever tried to create. */
  phantom: string[];
}

/**
 * Every key is fresh: one create attempt, by one client, and no other writer. So `true` must
 * leave the key in place and `false` is only legitimate if... never: nothing else could have
 * made it exist. A `false` on a key that then exists means the create was applied (perhaps
 * twice, the second time answering `false`).
 */
export function checkCreates(records: readonly CreateRecord[], existing: ReadonlySet<string>): CreateVerdict {
  const verdict: CreateVerdict = { appliedButFalse: [], falseAndAbsent: [], lost: [], failedButPresent: [], phantom: [] };
  const tried = new Set<string>();
  for (const r of records) {
    if (tried.has(r.key)) throw new Error(`create key ${r.key} was tried twice: keys must be fresh`);
    tried.add(r.key);
    const present = existing.has(r.key);
    if (r.outcome === 'ok' && r.answer === true && !present) verdict.lost.push(r.key);
    if (r.outcome === 'ok' && r.answer === false) (present ? verdict.appliedButFalse : verdict.falseAndAbsent).push(r.key);
    if (r.outcome === 'fail' && present) verdict.failedButPresent.push(r.key);
  }
  for (const key of existing) if (!tried.has(key)) verdict.phantom.push(key);
  return verdict;
}

export function createViolations(v: CreateVerdict): number {
  return v.appliedButFalse.length + v.falseAndAbsent.length + v.lost.length + v.failedButPresent.length + v.phantom.length;
}

// ---------------------------------------------------------------------------------------------
// One writer per register, writing strictly increasing sequence numbers

export interface SeqWrite {
  seq: number;
  outcome: Outcome;
}

export interface SeqRead {
  /** The highest sequence number acknowledged to this client when the read was sent. */
  ackedBefore: number;
  /** The highest sequence number this client had sent (in any outcome) when the read completed. */
  attemptedBefore: number;
  /** What the read saw (`null`: the instance did not exist). */
  observed: number | null;
}

export interface SeqVerdict {
  /** The final value is older than the last acknowledged write (or missing): lost, or overwritten by an older re-applied write. */
  olderThanAcked: Array<{ owner: string; final: number | null; lastAcked: number }>;
  /** The final value is a write that certainly failed, or was never sent. */
  phantomFinal: Array<{ owner: string; final: number }>;
  /** A read (after an acknowledged write) saw an older value, or one never sent. */
  badReads: Array<{ owner: string; read: SeqRead }>;
}

/**
 * Register `owner` was written only by its own sequential client, with increasing `seq`. The
 * final value must be the last acknowledged write or a later one whose outcome was unknown —
 * never an older one: an unknown write whose client has moved on must not land after a newer
 * write (that is what re-sending an old write after its client was answered does). A read sent
 * after an acknowledged write must see that write or a later attempt.
 */
export function checkSeqRegisters(
  registers: ReadonlyMap<string, { writes: readonly SeqWrite[]; reads: readonly SeqRead[]; final: number | null }>,
): SeqVerdict {
  const verdict: SeqVerdict = { olderThanAcked: [], phantomFinal: [], badReads: [] };
  for (const [owner, { writes, reads, final }] of registers) {
    for (let i = 1; i < writes.length; i++) {
      if ((writes[i] as SeqWrite).seq <= (writes[i - 1] as SeqWrite).seq) throw new Error(`register ${owner}: sequence numbers must increase`);
    }
    const acked = writes.filter((w) => w.outcome === 'ok');
    const lastAcked = acked.length > 0 ? (acked[acked.length - 1] as SeqWrite).seq : 0;
    const possible = new Set(writes.filter((w) => w.outcome !== 'fail').map((w) => w.seq));
    if (final === null ? lastAcked > 0 : final < lastAcked) verdict.olderThanAcked.push({ owner, final, lastAcked });
    else if (final !== null && !possible.has(final)) verdict.phantomFinal.push({ owner, final });
    for (const read of reads) {
      const seen = read.observed ?? 0;
      if (seen < read.ackedBefore || seen > read.attemptedBefore || (read.observed !== null && !possible.has(read.observed))) {
        verdict.badReads.push({ owner, read });
      }
    }
  }
  return verdict;
}

export function seqViolations(v: SeqVerdict): number {
  return v.olderThanAcked.length + v.phantomFinal.length + v.badReads.length;
}

// ---------------------------------------------------------------------------------------------
// Lock holders

export interface Hold {
  client: number | string;
  /** When the client learnt it holds the lock (its acquire answered `true`, or a read showed its session). */
  from: number;
  /** When it stopped acting as holder (it sent the release). */
  to: number;
}

export interface Overlap {
  a: Hold;
  b: Hold;
}

/**
 * Pairs of holding intervals of different clients that overlap. Times are from one clock
 * (event order in the test process), so `from` of one client's hold between `from` and `to` of
 * another's means both acted as holders at once. Touching intervals (equal instants) do not
 * count. Intervals of one client must not overlap each other either (that is a client bug).
 */
export function lockOverlaps(holds: readonly Hold[]): Overlap[] {
  for (const h of holds) if (!(h.from <= h.to)) throw new Error(`hold of client ${h.client} ends (${h.to}) before it starts (${h.from})`);
  const sorted = [...holds].sort((x, y) => x.from - y.from || x.to - y.to);
  const overlaps: Overlap[] = [];
  // Sweep: every earlier hold still open when a hold starts overlaps it.
  const open: Hold[] = [];
  for (const h of sorted) {
    for (let i = open.length - 1; i >= 0; i--) if ((open[i] as Hold).to <= h.from) open.splice(i, 1);
    for (const o of open) {
      if (o.client === h.client) throw new Error(`client ${h.client} holds twice at once: [${o.from}, ${o.to}] and [${h.from}, ${h.to}]`);
      overlaps.push({ a: o, b: h });
    }
    open.push(h);
  }
  return overlaps;
}

// ---------------------------------------------------------------------------------------------
// Tallies for the summary lines

export class Tally {
  readonly counts = new Map<string, number>();

  add(name: string, n = 1): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + n);
  }

  get(name: string): number {
    return this.counts.get(name) ?? 0;
  }

  /** `a 3, b 0, c 12` in the order given (missing names count 0), then any others. */
  format(order: readonly string[] = []): string {
    const names = [...order, ...[...this.counts.keys()].filter((k) => !order.includes(k)).sort()];
    return names.map((n) => `${n} ${this.get(n)}`).join(', ');
  }
}
