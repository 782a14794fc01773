// The vocabulary of the pure Raft core: entries, messages, persistent state and
// the Ready batch the core hands to its driver. Nothing here does I/O.

/** A server's stable identity (a node-id UUID kept in its data dir). */
export type NodeId = string;

export enum EntryType {
  /** An opaque command for the state machine. */
  Normal = 0,
  /** Appended by a new leader in its own term before it serves reads (Raft §8). */
  Noop = 1,
  /** A membership change: `data` is an encoded Configuration (see configuration.ts). */
  Config = 2,
}

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  data: Uint8Array;
}

/** One member of the cluster. Addresses travel with ids so a driver can dial them. */
export interface ServerInfo {
  id: NodeId;
  address: string;
  /**
   * A learner (etcd-io/raft's term; Consul's non-voter): it receives the log and may serve reads,
   * but never votes, never stands for election and never counts toward a quorum. Absent: a voter.
   */
  learner?: boolean;
}

/** The voters and learners. Changes one server at a time (Raft thesis §4.1). */
export interface Configuration {
  servers: ServerInfo[];
}

/** What must survive a crash before the core's messages may be sent. */
export interface HardState {
  term: number;
  vote: NodeId | null;
  commit: number;
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /** The configuration in force at `index`. */
  configuration: Configuration;
}

export type Role = 'follower' | 'pre-candidate' | 'candidate' | 'leader';

interface Envelope {
  from: NodeId;
  to: NodeId;
  term: number;
}

/**
 * What a leader's append, heartbeat and snapshot carry and their answers echo, so that the
 * leader can tell a fresh answer from a stale, duplicated or reordered one: `seq` stamps each
 * such message (increasing for as long as the leader's core lives) and the answer returns it.
 */
interface Stamped {
  seq?: number;
}

/**
 * What a follower's answer reports about its log: `lastIndex` is its last index when it
 * answered. An answer to a message stamped after the leader recorded match M that reports a
 * lastIndex below M shows a follower that lost its log (issue #16). Both fields are optional
 * (a server that does not send them is never taken for one that lost its log).
 */
interface Answer extends Stamped {
  lastIndex?: number;
}

export type Message =
  | (Envelope & { type: 'prevote'; lastIndex: number; lastTerm: number })
  | (Envelope & { type: 'prevoteResp'; granted: boolean })
  | (Envelope & { type: 'vote'; lastIndex: number; lastTerm: number; transfer?: boolean })
  | (Envelope & { type: 'voteResp'; granted: boolean })
  | (Envelope & Stamped & { type: 'append'; prevIndex: number; prevTerm: number; entries: Entry[]; commit: number })
  /**
   * success → matchIndex is the follower's last matching index; failure → matchIndex is the
   * rejected prevIndex and hint is where to retry.
   */
  | (Envelope & Answer & { type: 'appendResp'; success: boolean; matchIndex: number; hint: number })
  /** ctx, when set, is a ReadIndex round the leader is confirming. */
  | (Envelope & Stamped & { type: 'heartbeat'; commit: number; ctx?: number })
  | (Envelope & Answer & { type: 'heartbeatResp'; ctx?: number })
  /** The driver attaches the snapshot bytes (`data`) when it sends; the core only names the meta. */
  | (Envelope & Stamped & { type: 'snapshot'; meta: SnapshotMeta; data?: Uint8Array })
  | (Envelope & { type: 'timeoutNow' })
  /** A follower asks the leader for a read index; ctx identifies the request on the follower. */
  | (Envelope & { type: 'readIndex'; ctx: number })
  /** index 0 means refused (the receiver was not a leader ready to serve reads). */
  | (Envelope & { type: 'readIndexResp'; ctx: number; index: number });

export type MessageType = Message['type'];

/** A linearizable read may proceed once the local applied index reaches `index`. */
export interface ReadState {
  ctx: number;
  index: number;
}

export interface SoftState {
  role: Role;
  leader: NodeId | null;
  term: number;
}

/**
 * Everything the driver must do after stepping the core, in this order:
 *  1. persist `snapshot` (if any, and restore the FSM from it), then `hardState` and `entries`
 *     (entries replace any stored entries at the same or higher indexes), in one synced batch;
 *  2. send `messages`;
 *  3. apply `committed` to the state machine, in order;
 *  4. release reads in `readStates` once applied ≥ index;
 *  5. call `advance()`.
 */
export interface Ready {
  softState?: SoftState;
  hardState?: HardState;
  entries: Entry[];
  /** `data` is absent when the snapshot came in pieces: the driver holds those (snapshot-transfer.ts). */
  snapshot?: { meta: SnapshotMeta; data?: Uint8Array };
  messages: Message[];
  committed: Entry[];
  readStates: ReadState[];
  /** ReadIndex requests (by ctx) that cannot be served (no leader, lost leadership). */
  failedReads: number[];
}
