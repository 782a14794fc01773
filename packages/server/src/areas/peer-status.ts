// What this server's own pings say about other servers (Consul's serf probes, reduced to RPC pings):
// alive while they answer, failed after consecutive misses, and the recent round-trip times.
// Kept per server in memory: every server probes for itself, so each answers from its own view.

/** Consecutive missed pings before a server is reported failed. */
export const MISSES_BEFORE_FAILED = 2;
const RTT_SAMPLES = 5;

export type PeerState = 'alive' | 'failed';

interface Entry {
  misses: number;
  rttsMs: number[];
}

export class PeerStatus {
  private readonly entries = new Map<string, Entry>();

  answered(serverId: string, rttMs: number): void {
    const e = this.entry(serverId);
    e.misses = 0;
    e.rttsMs.push(rttMs);
    if (e.rttsMs.length > RTT_SAMPLES) e.rttsMs.shift();
  }

  missed(serverId: string): void {
    this.entry(serverId).misses++;
  }

  /** A server never probed yet counts as alive: it was learned from a server that just answered. */
  state(serverId: string): PeerState {
    return (this.entries.get(serverId)?.misses ?? 0) >= MISSES_BEFORE_FAILED ? 'failed' : 'alive';
  }

  /** Median of the recent round trips in ms, or undefined before any answer. */
  rttMs(serverId: string): number | undefined {
    const samples = this.entries.get(serverId)?.rttsMs ?? [];
    if (samples.length === 0) return undefined;
    const sorted = [...samples].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }

  forget(serverId: string): void {
    this.entries.delete(serverId);
  }

  private entry(serverId: string): Entry {
    let e = this.entries.get(serverId);
    if (!e) this.entries.set(serverId, (e = { misses: 0, rttsMs: [] }));
    return e;
  }
}
