// Where `GET /v1/acl/replication` (Consul's ACL.ReplicationStatus) finds its answer: the replication
// loop's own memory on a datacenter's leader (acl-replication.ts), which is not in the replicated
// state. The status is read through a read endpoint (acl-reads.ts `acl.replication-status`) so that
// it travels as every read does — to the leader of the asked datacenter with `?dc=`, from a client
// agent through its servers — rather than as a leader call, which knows no other datacenter.
// Each server's AclReplication publishes its status here keyed by that server's store (one per
// agent, also when several agents run in one process); a server that does not lead has no status to
// give, and the closure then throws NotLeaderError, which sends the read on to the leader (rpc.ts).
import { NotLeaderError } from '@registry/raft';
import type { Store } from '@registry/store';

/** Consul's structs.ACLReplicationStatus, as `GET /v1/acl/replication` shows it. */
export interface AclReplicationStatus {
  Enabled: boolean;
  Running: boolean;
  SourceDatacenter: string;
  /** `policies`, or `tokens` when tokens are replicated too; "" in the primary. */
  ReplicationType: string;
  ReplicatedIndex: number;
  ReplicatedTokenIndex: number;
  /** RFC 3339; the zero time until the first success / error, as Consul's. */
  LastSuccess: string;
  LastError: string;
}

/** A server's status while it leads its datacenter, null while it does not. */
export type ReplicationStatusSource = () => AclReplicationStatus | null;

const sources = new WeakMap<Store, ReplicationStatusSource>();

export function publishReplicationStatus(store: Store, source: ReplicationStatusSource): void {
  sources.set(store, source);
}

/** The leader's status; off the leader (or before the replication duty started there) NotLeaderError. */
export function replicationStatusOf(store: Store): AclReplicationStatus {
  const status = sources.get(store)?.() ?? null;
  if (status === null) throw new NotLeaderError(null);
  return status;
}
