// Real servers in one process: each a RaftNode over a TcpTransport on 127.0.0.1:0 and a
// LevelStorage in its own temp dir, with a state machine that records what it applied.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LevelStorage,
  RaftNode,
  TcpTransport,
  type RaftNodeOptions,
  type RaftStorage,
  type ServerInfo,
  type SnapshotMeta,
  type StateMachine,
} from '@registry/raft';

export const bytes = (s: string) => new TextEncoder().encode(s);
export const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Applies commands by appending them to a list; snapshots are the list as JSON. */
export class ListFsm implements StateMachine {
  items: string[] = [];
  restoredFrom: number[] = [];
  apply(_index: number, data: Uint8Array): unknown {
    this.items.push(text(data));
    return this.items.length;
  }
  snapshot(): Uint8Array {
    return bytes(JSON.stringify(this.items));
  }
  restore(data: Uint8Array, meta: SnapshotMeta): void {
    this.items = JSON.parse(text(data));
    this.restoredFrom.push(meta.index);
  }
}

export interface Member {
  id: string;
  dir: string;
  port: number;
  address: string;
  node: RaftNode;
  transport: TcpTransport;
  fsm: ListFsm;
  running: boolean;
}

type Tuning = Partial<Omit<RaftNodeOptions, 'id' | 'storage' | 'transport' | 'fsm'>>;

export class Cluster {
  readonly members: Member[] = [];
  private readonly dirs: string[] = [];

  constructor(
    private readonly tuning: Tuning = {},
    /** Each server's storage in its data dir (default: a LevelStorage there). */
    private readonly storage: (dir: string, id: string) => RaftStorage = (dir) => new LevelStorage({ path: dir }),
  ) {}

  /** Starts `n` servers and bootstraps them all with the same configuration. */
  static async start(n: number, tuning: Tuning = {}, storage?: (dir: string, id: string) => RaftStorage): Promise<Cluster> {
    const cluster = new Cluster(tuning, storage);
    for (let i = 1; i <= n; i++) await cluster.add(`n${i}`);
    const servers = cluster.servers();
    await Promise.all(cluster.members.map((m) => m.node.bootstrap(servers)));
    cluster.members.forEach((m) => m.node.start());
    return cluster;
  }

  servers(): ServerInfo[] {
    return this.members.map((m) => ({ id: m.id, address: m.address }));
  }

  /** Creates (but does not bootstrap) a server with a fresh data dir; it is started. */
  async add(id: string): Promise<Member> {
    const dir = mkdtempSync(join(tmpdir(), `raft-node-${id}-`));
    this.dirs.push(dir);
    const transport = await TcpTransport.listen({ host: '127.0.0.1', port: 0 });
    const port = Number(transport.address.split(':')[1]);
    const fsm = new ListFsm();
    const node = await RaftNode.create({ id, storage: this.storage(dir, id), transport, fsm, ...this.tuning });
    const member: Member = { id, dir, port, address: transport.address, node, transport, fsm, running: true };
    this.members.push(member);
    return member;
  }

  member(id: string): Member {
    const m = this.members.find((x) => x.id === id);
    if (!m) throw new Error(`no member ${id}`);
    return m;
  }

  running(): Member[] {
    return this.members.filter((m) => m.running);
  }

  async stop(m: Member): Promise<void> {
    if (!m.running) return;
    m.running = false;
    await m.node.stop();
    await m.transport.close();
  }

  /** Restarts a stopped server from its data dir on the same address. */
  async restart(m: Member): Promise<void> {
    m.transport = await TcpTransport.listen({ host: '127.0.0.1', port: m.port });
    m.fsm = new ListFsm();
    m.node = await RaftNode.create({
      id: m.id,
      storage: this.storage(m.dir, m.id),
      transport: m.transport,
      fsm: m.fsm,
      ...this.tuning,
    });
    m.node.start();
    m.running = true;
  }

  /** The single running leader, once there is exactly one and it is ready to serve. */
  async leader(timeoutMs = 10_000): Promise<Member> {
    let found: Member | undefined;
    await waitFor(() => {
      const leaders = this.running().filter((m) => m.node.isLeader());
      found = leaders.length === 1 && leaders[0].node.leaderReady() ? leaders[0] : undefined;
      return found !== undefined;
    }, timeoutMs);
    return found!;
  }

  async shutdown(): Promise<void> {
    for (const m of this.members) await this.stop(m);
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A server as `write` sees it: its node and the values its state machine has applied. */
export interface Writable {
  node: RaftNode;
  fsm: { items: string[] };
}

/**
 * Writes `value` exactly once through whichever of `servers()` leads, waiting while none does.
 * A proposal whose outcome is unknown (its leader was lost in flight) is settled before it is sent
 * again: once a leader has committed an entry of its own term and applied up to its read index, an
 * entry of an earlier term is in its state machine or will never commit. Values must be unique.
 */
export async function writeTo(servers: () => Writable[], value: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const leader = async (): Promise<Writable> => {
    let found: Writable | undefined;
    await waitFor(() => (found = servers().find((s) => s.node.leaderReady())) !== undefined, Math.max(0, deadline - Date.now()), 'a leader');
    return found!;
  };
  for (;;) {
    const sender = await leader();
    try {
      await sender.node.propose(bytes(value));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (await settled(value, leader, deadline)) return;
  }
}

/** Whether `value` was applied, asked of a leader that has caught up with everything committed. */
async function settled(value: string, leader: () => Promise<Writable>, deadline: number): Promise<boolean> {
  for (;;) {
    const judge = await leader();
    try {
      await judge.node.readBarrier();
      return judge.fsm.items.includes(value);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** `writeTo` the running servers of a cluster. */
export function write(cluster: Cluster, value: string, timeoutMs = 10_000): Promise<void> {
  return writeTo(() => cluster.running(), value, timeoutMs);
}
