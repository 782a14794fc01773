// What the RPC layer reports about forwarding, for the agent's metrics. rpc/ imports nothing above
// it, so the metrics module implements this interface and the agent hands it to `new Rpc`.

/**
 * What was sent to the leader: a write (`rpc.apply`), a default read forwarded whole (`rpc.read`), a
 * leader call, or a follower's question for the leader's commit index (`rpc.commitIndex`, one per
 * batch of default reads served locally, issue #14).
 */
export type ForwardKind = 'write' | 'read' | 'leader-call' | 'commit-index';

export interface RpcObserver {
  /** A request was sent to the leader over the server port. */
  forwarded(kind: ForwardKind): void;
  /** Sending it failed: no answer came back (connection refused or lost, timeout). */
  forwardFailed(kind: ForwardKind): void;
  /** This server, leading, ran leader call `method` (for another server or itself); `ok`: it succeeded. */
  leaderCallServed(method: string, ok: boolean): void;
}

export const noRpcObserver: RpcObserver = {
  forwarded: () => undefined,
  forwardFailed: () => undefined,
  leaderCallServed: () => undefined,
};
