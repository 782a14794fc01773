// Ready assembly (the Ready half of etcd-io/raft's RawNode): what the state
// machine produced since the last Ready — entries and hard state to persist, a
// snapshot to install, messages to send, committed entries to apply, read
// results — and the bookkeeping of what the driver was handed and finished.
// RaftCore keeps hasReady()/ready()/advance() as its public face and delegates
// here, passing its current commit index and states; the role state machine
// only ever adds output.
import type { RaftLog } from './log';
import type { HardState, Message, ReadState, Ready, SnapshotMeta, SoftState } from './types';

export class RawNode {
  // Output waiting for the next Ready.
  private messages: Message[] = [];
  private readStates: ReadState[] = [];
  private failedReads: number[] = [];
  /** A snapshot received from the leader, waiting to be handed to the driver. */
  private snapshotToInstall: { meta: SnapshotMeta; data?: Uint8Array } | undefined;

  /** The highest committed index handed out in a Ready. */
  private handedCommitted: number;
  private _applied: number;
  /** The states last handed out: a Ready carries them only when they changed. */
  private lastSoft: SoftState;
  private lastHard: HardState;

  constructor(
    private readonly log: RaftLog,
    applied: number,
    soft: SoftState,
    hard: HardState,
  ) {
    this._applied = applied;
    this.handedCommitted = applied;
    this.lastSoft = soft;
    this.lastHard = hard;
  }

  /** The highest index the driver's state machine holds (applied, or installed with a snapshot). */
  get applied(): number {
    return this._applied;
  }

  addMessage(m: Message): void {
    this.messages.push(m);
  }

  addReadState(ctx: number, index: number): void {
    this.readStates.push({ ctx, index });
  }

  addFailedRead(ctx: number): void {
    this.failedReads.push(ctx);
  }

  /**
   * The log was replaced by a leader's snapshot: the driver installs it, and no committed
   * entry at or below it is handed out (the snapshot already holds their effect).
   */
  installSnapshot(meta: SnapshotMeta, data: Uint8Array | undefined): void {
    this.handedCommitted = meta.index;
    this.snapshotToInstall = data === undefined ? { meta } : { meta, data };
  }

  hasReady(commit: number, soft: SoftState, hard: HardState): boolean {
    return (
      this.messages.length > 0 ||
      this.log.hasUnsent() ||
      commit > this.handedCommitted ||
      this.snapshotToInstall !== undefined ||
      this.readStates.length > 0 ||
      this.failedReads.length > 0 ||
      !sameHard(hard, this.lastHard) ||
      !sameSoft(soft, this.lastSoft)
    );
  }

  /** Hands out everything pending; from now on it counts as handed (see Ready for the driver's duties). */
  ready(commit: number, soft: SoftState, hard: HardState): Ready {
    const rd: Ready = {
      entries: this.log.takeUnsent(),
      messages: this.messages,
      committed: [],
      readStates: this.readStates,
      failedReads: this.failedReads,
    };
    this.messages = [];
    this.readStates = [];
    this.failedReads = [];
    if (!sameSoft(soft, this.lastSoft)) rd.softState = this.lastSoft = soft;
    if (!sameHard(hard, this.lastHard)) rd.hardState = this.lastHard = hard;
    if (this.snapshotToInstall) {
      rd.snapshot = this.snapshotToInstall;
      this.snapshotToInstall = undefined;
    }
    if (commit > this.handedCommitted) {
      rd.committed = this.log.slice(this.handedCommitted + 1, commit);
      this.handedCommitted = commit;
    }
    return rd;
  }

  /** The driver persisted, sent and applied everything in `rd`. */
  advance(rd: Ready): void {
    if (rd.snapshot) {
      this.log.markSnapshotPersisted(rd.snapshot.meta.index, rd.snapshot.meta.term);
      this._applied = Math.max(this._applied, rd.snapshot.meta.index);
    }
    if (rd.entries.length > 0) this.log.markPersisted(rd.entries);
    if (rd.committed.length > 0) this._applied = Math.max(this._applied, rd.committed[rd.committed.length - 1].index);
  }
}

function sameHard(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function sameSoft(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.leader === b.leader && a.term === b.term;
}
