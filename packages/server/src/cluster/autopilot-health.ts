// Autopilot's view of the servers (Consul's /v1/operator/autopilot/health), computed on the leader
// from what the servers already track: each server reports its Raft term, last log index and time
// since it last heard from the leader over the RPC port (`autopilot.stats`), and the catalog's
// serfHealth check (kept by server-health.ts) says whether it is alive. A server is healthy when it
// is alive, has heard from the leader within LastContactThreshold, is in the leader's term and
// trails the leader's log by at most MaxTrailingLogs (Consul's autopilot.IsHealthy).
import type { RaftNode, Transport } from '@registry/raft';
import { formatGoDuration, type Store } from '@registry/store';
import type { LeaderCalls } from '../rpc/leader-calls';
import { SERF_CHECK_ID } from './server-health';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Operator.AutopilotHealth': { args: Record<string, never>; reply: AutopilotHealthReply };
  }
}

const STATS_TIMEOUT_MS = 800;

/** What a server says about itself to the leader. */
export interface ServerStats {
  id: string;
  node: string;
  address: string;
  version: string;
  term: number;
  lastIndex: number;
  /** ms since it last heard from a leader (0 on the leader; -1 when it never has). */
  lastContactMs: number;
}

export interface ServerHealthOut {
  ID: string;
  Name: string;
  Address: string;
  SerfStatus: 'alive' | 'failed' | 'none';
  Version: string;
  Leader: boolean;
  LastContact: string;
  LastTerm: number;
  LastIndex: number;
  Healthy: boolean;
  Voter: boolean;
  StableSince: string;
}

export interface AutopilotHealthReply {
  Healthy: boolean;
  FailureTolerance: number;
  Servers: ServerHealthOut[];
}

export interface AutopilotHealthDeps {
  self: { id: string; node: string; address: string };
  version: string;
  raft: RaftNode;
  store: Store;
  transport: Transport;
  leaderCalls: LeaderCalls;
}

export class AutopilotHealth {
  /** Per server: whether it was healthy at the last look, and since when (kept on the leader). */
  private readonly stable = new Map<string, { healthy: boolean; since: Date }>();

  constructor(private readonly deps: AutopilotHealthDeps) {
    deps.transport.handle('autopilot.stats', () => this.stats());
    deps.leaderCalls.handle('Operator.AutopilotHealth', () => this.health());
  }

  stats(): ServerStats {
    const { raft, self, version } = this.deps;
    const contact = raft.lastContactMs();
    return { ...self, version, term: raft.term(), lastIndex: raft.lastIndex(), lastContactMs: Number.isFinite(contact) ? contact : -1 };
  }

  /** Runs on the leader (through the leader calls). */
  async health(): Promise<AutopilotHealthReply> {
    const { raft, store, transport } = this.deps;
    const config = store.autopilotConfig().value;
    const leaderTerm = raft.term();
    const leaderIndex = raft.lastIndex();
    const thresholdMs = config.LastContactThresholdNs / 1e6;
    const servers = await Promise.all(
      raft.configuration().map(async (server): Promise<ServerHealthOut> => {
        const isLeader = server.id === this.deps.self.id;
        let stats: ServerStats | undefined;
        try {
          stats = isLeader ? this.stats() : ((await transport.call(server.address, 'autopilot.stats', null, STATS_TIMEOUT_MS)) as ServerStats);
        } catch {
          stats = undefined;
        }
        const name = stats?.node ?? store.catalogNode(server.id).value?.Node.Node ?? server.id;
        const serf = store.healthNode(name).value.find((c) => c.CheckID === SERF_CHECK_ID);
        const serfStatus = !stats ? 'failed' : serf?.Status === 'critical' ? 'failed' : 'alive';
        const contactMs = isLeader ? 0 : stats && stats.lastContactMs >= 0 ? stats.lastContactMs : Infinity;
        const healthy =
          !!stats &&
          serfStatus === 'alive' &&
          contactMs <= thresholdMs &&
          stats.term === leaderTerm &&
          stats.lastIndex + config.MaxTrailingLogs >= leaderIndex;
        return {
          ID: server.id,
          Name: name,
          Address: server.address,
          SerfStatus: serfStatus,
          Version: stats?.version ?? '',
          Leader: isLeader,
          LastContact: Number.isFinite(contactMs) ? formatGoDuration(Math.round(contactMs * 1e6)) : '-1ns',
          LastTerm: stats?.term ?? 0,
          LastIndex: stats?.lastIndex ?? 0,
          Healthy: healthy,
          Voter: !server.learner,
          StableSince: this.stableSince(server.id, healthy).toISOString(),
        };
      }),
    );
    for (const id of [...this.stable.keys()]) if (!servers.some((s) => s.ID === id)) this.stable.delete(id);
    // Non-voters (learners) are listed, but a quorum is counted among the voters only.
    const voters = servers.filter((s) => s.Voter).length;
    const healthyVoters = servers.filter((s) => s.Healthy && s.Voter).length;
    return {
      Healthy: servers.every((s) => s.Healthy),
      FailureTolerance: Math.max(0, healthyVoters - (Math.floor(voters / 2) + 1)),
      Servers: servers,
    };
  }

  private stableSince(id: string, healthy: boolean): Date {
    const was = this.stable.get(id);
    if (was && was.healthy === healthy) return was.since;
    const now = { healthy, since: new Date() };
    this.stable.set(id, now);
    return now.since;
  }
}
