// What a RaftNode reports about its own work, for whoever measures it (the server wires it to its
// metrics). hashicorp/raft emits go-metrics from inside the library; here the library stays free of
// any metrics dependency and calls these hooks instead. Every hook is optional and must be cheap:
// they run on the Ready loop.
export interface RaftObserver {
  /**
   * On the leader: a batch of `entries` proposals handed to the core together (one event-loop turn)
   * committed `ms` after it was handed over (hashicorp/raft's raft.commitTime).
   */
  committed?(entries: number, ms: number): void;
  /** `entries` committed entries were applied to the state machine in `ms` (raft.fsm.apply). */
  applied?(entries: number, ms: number): void;
  /** A snapshot of the state machine was taken and written: `ms` from start to on disk, `bytes` long. */
  snapshotTaken?(ms: number, bytes: number): void;
  /**
   * A Raft message was dropped because its sender is not a member of the configuration
   * (stranger-filter.ts says which and why): a hostile or misdirected frame on the server port.
   */
  strangerDropped?(from: string, type: string, why: string): void;
}
