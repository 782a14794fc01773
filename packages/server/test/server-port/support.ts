// Connections to a server port that send nothing (or what a test chooses), for the flood and
// hostile-peer tests. Each socket's fate is recorded; the caller destroys them all at the end.
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { ClusterHarness } from '../cluster/support/cluster-harness';

export interface IdleSocket {
  socket: Socket;
  connected: boolean;
  closed: boolean;
  closedAt: number;
}

/** Opens `count` connections to 127.0.0.1:`port` from `localAddress`, `batch` at a time; none sends a byte. */
export async function openIdle(port: number, count: number, opts: { localAddress?: string; batch?: number; into?: IdleSocket[] } = {}): Promise<IdleSocket[]> {
  const batch = opts.batch ?? 100;
  const opened: IdleSocket[] = [];
  for (let done = 0; done < count; done += batch) {
    const n = Math.min(batch, count - done);
    await Promise.all(
      Array.from(
        { length: n },
        () =>
          new Promise<void>((resolve) => {
            const s: IdleSocket = { socket: connect({ host: '127.0.0.1', port, localAddress: opts.localAddress }), connected: false, closed: false, closedAt: 0 };
            const timer = setTimeout(resolve, 3_000); // a connect the kernel keeps waiting is not waited for
            s.socket.on('connect', () => {
              s.connected = true;
              clearTimeout(timer);
              resolve();
            });
            s.socket.on('error', () => undefined);
            s.socket.on('close', () => {
              s.closed = true;
              s.closedAt = Date.now();
              clearTimeout(timer);
              resolve();
            });
            opened.push(s);
            opts.into?.push(s);
          }),
      ),
    );
  }
  return opened;
}

export const held = (sockets: readonly IdleSocket[]): IdleSocket[] => sockets.filter((s) => s.connected && !s.closed);

/** The soft descriptor limit of a running process, from /proc. */
export function nofileOf(pid: number): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
  return Number(m?.[1]);
}

/** Server i's Raft stats (/v1/agent/self). */
export async function raftStats(cluster: ClusterHarness, i: number): Promise<{ id: string; role: string; term: number; appliedIndex: number; commitIndex: number; leader: string | null }> {
  const res = await cluster.http(i, 'GET', '/v1/agent/self', undefined, { timeoutMs: 5_000 });
  if (res.status !== 200) throw new Error(`/v1/agent/self on s${i}: ${res.status} ${res.body}`);
  return res.json<{ Stats: { raft: { id: string; role: string; term: number; appliedIndex: number; commitIndex: number; leader: string | null } } }>().Stats.raft;
}

/** The server port's refusals by reason, from the Prometheus metrics of server i. */
export async function refusalCounts(cluster: ClusterHarness, i: number): Promise<Record<string, number>> {
  const res = await cluster.http(i, 'GET', '/v1/agent/metrics?format=prometheus', undefined, { timeoutMs: 5_000 });
  const out: Record<string, number> = {};
  for (const m of res.body.matchAll(/^registry_rpc_refused_total\{reason="([a-z_]+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** Descriptors a running process has open now. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

/** The server port's counted connections (registry_rpc_connections) of server i. */
export async function serverPortConnections(cluster: ClusterHarness, i: number): Promise<number> {
  const res = await cluster.http(i, 'GET', '/v1/agent/metrics?format=prometheus', undefined, { timeoutMs: 5_000 });
  const m = /^registry_rpc_connections (\d+)/m.exec(res.body);
  return m ? Number(m[1]) : -1;
}
