// The Raft safety properties (Raft §5.2–§5.4, Figure 3), checked against what
// the simulated servers persist, elect and apply. Every check is O(new data),
// so it can run after every simulation step.
import { EntryType, type Entry, type HardState, type NodeId } from '../../src/core/types';

const utf8 = new TextDecoder();

export class SafetyViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetyViolation';
  }
}

export function entryIdentity(entry: Entry): string {
  const kind = entry.type === EntryType.Normal ? 'n' : entry.type === EntryType.Noop ? 'noop' : 'conf';
  return `${kind}@${entry.term}:${utf8.decode(entry.data)}`;
}

/** The state-machine digest after applying `identity` on top of `digest` (FNV-1a). */
export function nextDigest(digest: number, identity: string): number {
  let h = (digest ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < identity.length; i++) {
    h ^= identity.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

interface CommittedEntry {
  term: number;
  identity: string;
  /** The lowest current term of a server that saw it committed: it was committed in this term or earlier. */
  seenCommittedInTerm: number;
}

export class SafetyChecker {
  private readonly leaderOfTerm = new Map<number, NodeId>();
  /** Log Matching: (index, term) → the entry and the term of the entry before it. */
  private readonly logEntries = new Map<string, { identity: string; prevTerm: number }>();
  private readonly committed = new Map<number, CommittedEntry>();
  /** State Machine Safety: the digest of the applied prefix ending at each index. */
  private readonly digests = new Map<number, number>();
  private maxCommittedSeen = 0;
  private readonly readsIssued = new Map<number, { node: NodeId; mustSee: number }>();

  /** A property of the run other than the ones below failed (e.g. a learner led). */
  fail(message: string): never {
    throw new SafetyViolation(message);
  }

  /** Election Safety: at most one leader per term. */
  onLeader(node: NodeId, term: number): void {
    const other = this.leaderOfTerm.get(term);
    if (other !== undefined && other !== node) {
      throw new SafetyViolation(`Election Safety: ${other} and ${node} both led term ${term}`);
    }
    this.leaderOfTerm.set(term, node);
  }

  /** Leader Completeness: a new leader of `term` holds every entry committed in an earlier term. */
  checkLeaderCompleteness(node: NodeId, term: number, lastIndex: number, termAt: (i: number) => number | undefined): void {
    for (const [index, c] of this.committed) {
      if (c.seenCommittedInTerm >= term) continue;
      if (index > lastIndex) {
        throw new SafetyViolation(`Leader Completeness: leader ${node} of term ${term} lacks committed entry ${index} (log ends at ${lastIndex})`);
      }
      const t = termAt(index);
      // undefined below lastIndex: compacted into the leader's snapshot, checked by digest.
      if (t !== undefined && t !== c.term) {
        throw new SafetyViolation(`Leader Completeness: leader ${node} of term ${term} has term ${t} at ${index}, committed was term ${c.term}`);
      }
    }
  }

  /** Persistent state only moves forward: term, a vote within a term, and commit. */
  onHardState(node: NodeId, before: HardState, after: HardState): void {
    if (after.term < before.term) throw new SafetyViolation(`${node}: term went back on disk ${before.term} → ${after.term}`);
    if (after.term === before.term && before.vote !== null && after.vote !== before.vote) {
      throw new SafetyViolation(`${node}: voted twice in term ${after.term} (${before.vote}, then ${after.vote})`);
    }
    if (after.commit < before.commit) throw new SafetyViolation(`${node}: commit went back on disk ${before.commit} → ${after.commit}`);
  }

  /** Log Matching: entries with the same index and term are identical and have identical prefixes. */
  onEntryPersisted(node: NodeId, entry: Entry, prevTerm: number): void {
    const key = `${entry.index}:${entry.term}`;
    const identity = entryIdentity(entry);
    const seen = this.logEntries.get(key);
    if (seen === undefined) {
      this.logEntries.set(key, { identity, prevTerm });
    } else if (seen.identity !== identity || seen.prevTerm !== prevTerm) {
      throw new SafetyViolation(
        `Log Matching: ${node} holds ${identity} (after term ${prevTerm}) at ${entry.index}, another server ${seen.identity} (after term ${seen.prevTerm})`,
      );
    }
  }

  onCommitted(node: NodeId, entry: Entry, nodeTerm: number): void {
    const identity = entryIdentity(entry);
    const seen = this.committed.get(entry.index);
    if (seen === undefined) {
      this.committed.set(entry.index, { term: entry.term, identity, seenCommittedInTerm: nodeTerm });
    } else if (seen.identity !== identity) {
      throw new SafetyViolation(`State Machine Safety: ${node} committed ${identity} at ${entry.index}, another server ${seen.identity}`);
    } else {
      seen.seenCommittedInTerm = Math.min(seen.seenCommittedInTerm, nodeTerm);
    }
    this.maxCommittedSeen = Math.max(this.maxCommittedSeen, entry.index);
  }

  /** State Machine Safety: every server's applied prefix ending at `index` has the same digest. */
  onApplied(node: NodeId, index: number, digest: number): void {
    const seen = this.digests.get(index);
    if (seen === undefined) this.digests.set(index, digest);
    else if (seen !== digest) throw new SafetyViolation(`State Machine Safety: ${node}'s state after applying ${index} differs from another server's`);
  }

  /** A linearizable read must reflect every write any server had applied before it was issued. */
  onReadIssued(node: NodeId, ctx: number): void {
    this.readsIssued.set(ctx, { node, mustSee: this.maxCommittedSeen });
  }

  onReadState(node: NodeId, ctx: number, index: number): void {
    const issued = this.readsIssued.get(ctx);
    if (!issued || issued.node !== node) throw new SafetyViolation(`${node} got a ReadState for a read it did not issue (${ctx})`);
    if (index < issued.mustSee) {
      throw new SafetyViolation(`ReadIndex: read ${ctx} on ${node} got index ${index}, but ${issued.mustSee} was committed before it was issued`);
    }
    this.readsIssued.delete(ctx);
  }

  onReadFailed(ctx: number): void {
    this.readsIssued.delete(ctx);
  }

  get highestCommitted(): number {
    return this.maxCommittedSeen;
  }
}
