// Who leads, as this server tells the world (hashicorp/raft's leader state and LeaderCh observers):
// the leader the last 'leader' event named, when a leader was last heard from (lastContactMs, the
// stranger filter's lease), and whether there ever was one. The node decides who leads (the core,
// or a storage fault's view: raft-node.ts leader()); this remembers and announces it.
import type { NodeId, ServerInfo } from '../core/types';
import { monotonicMs } from '../monotonic-clock';

export class LeaderWatch {
  /** The core's leader at its last soft state. */
  private coreLeader: NodeId | null;
  /** The leader id last announced by a 'leader' event. */
  private announced: NodeId | null;
  private lastContact = 0;
  private ever = false;

  constructor(
    initial: NodeId | null,
    private readonly self: NodeId,
    /** The leader as the node reports it now (raft-node.ts leader()). */
    private readonly current: () => ServerInfo | null,
    private readonly emit: (leader: ServerInfo | null) => void,
  ) {
    this.coreLeader = initial;
    this.announced = initial;
  }

  get everHadLeader(): boolean {
    return this.ever;
  }

  /** The core names `leader` (a Ready's soft state). */
  coreChanged(leader: NodeId | null): void {
    if (leader === this.coreLeader) return;
    this.coreLeader = leader;
    if (leader !== null) {
      this.ever = true;
      if (leader !== this.self) this.lastContact = monotonicMs();
    }
    this.announce();
  }

  /** The leader of our term sent us something. */
  heard(): void {
    this.lastContact = monotonicMs();
  }

  /** Milliseconds since a leader was last heard from (Infinity: never). */
  sinceContactMs(): number {
    return this.lastContact === 0 ? Infinity : monotonicMs() - this.lastContact;
  }

  /** Emits 'leader' when the node names another server than it last did. */
  announce(): void {
    const leader = this.current();
    const id = leader?.id ?? null;
    if (id === this.announced) return;
    this.announced = id;
    this.emit(leader);
  }
}
