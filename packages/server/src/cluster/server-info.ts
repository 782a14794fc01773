// What servers tell each other about themselves over the RPC port.

export interface ServerFacts {
  id: string;
  /** Server RPC/Raft address, "host:port". */
  address: string;
  node: string;
  datacenter: string;
  bootstrapExpect: number;
  /** A `-non-voter` server: it joins as a Raft learner and is never part of a bootstrap set. */
  nonVoter?: boolean;
  /** `node_meta` of that server: put on its catalog node by the leader (absent from older servers). */
  nodeMeta?: Record<string, string>;
}

/** A server's answer to the leader's `cluster.info` ping. */
export interface InfoReply extends ServerFacts {
  /**
   * Set while this server's Raft storage fails (a full disk, no file descriptors left): the
   * reason, e.g. "raft storage failed: ENOSPC: …". The leader then marks its serfHealth critical
   * with it. Absent from servers that predate it, which counts as healthy.
   */
  storageFault?: string;
  /**
   * This server's wall clock (Date.now()) as it answered, for the leader's clock-offset report
   * (cluster/clock-offsets.ts); never used for a decision. Absent from older servers.
   */
  wallMs?: number;
  /**
   * This server has left (`leave` begun, or its left marker is set: cluster/membership.ts): the
   * leader must not add it back on its own. Absent from older servers.
   */
  left?: boolean;
}

export interface HelloReply extends ServerFacts {
  /** This server already belongs to a cluster (has a Raft configuration). */
  inCluster: boolean;
  leader: { id: string; address: string } | null;
  /** The last index of this server's Raft log (absent from older servers). */
  lastIndex?: number;
  /** This server's Raft configuration (absent from older servers): see forming-cluster.ts. */
  servers?: { id: string; address: string }[];
}

export function hostOf(address: string): string {
  const i = address.lastIndexOf(':');
  const host = i < 0 ? address : address.slice(0, i);
  return host.replace(/^\[|\]$/g, '');
}

export function portOf(address: string): number {
  const i = address.lastIndexOf(':');
  return i < 0 ? 0 : Number(address.slice(i + 1));
}
