// A tiny synchronous network for unit tests: cores whose Readies are carried
// out at once (persist = remember, send = queue, apply = record), messages
// delivered in order unless a test drops or holds them.
import { RaftCore, type CoreConfig, type CoreRestore } from '../../src/core/raft-core';
import type { Configuration, Entry, HardState, Message, NodeId, Ready, SnapshotMeta } from '../../src/core/types';

export const ELECTION = 10;
export const HEARTBEAT = 1;

export function configOf(...ids: NodeId[]): Configuration {
  return { servers: ids.map((id) => ({ id, address: `addr-${id}` })) };
}

export function newCore(id: NodeId, overrides: Partial<CoreConfig> = {}, restore?: CoreRestore): RaftCore {
  return new RaftCore(
    {
      id,
      electionTicks: ELECTION,
      heartbeatTicks: HEARTBEAT,
      preVote: true,
      checkQuorum: true,
      maxInflight: 8,
      maxInflightBytes: 16 * 1024 * 1024,
      maxEntriesPerAppend: 64,
      maxAppendBytes: 1024 * 1024,
      random: () => 0,
      ...overrides,
    },
    restore ?? { hardState: { term: 0, vote: null, commit: 0 }, entries: [] },
  );
}

export function data(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function text(entry: Entry): string {
  return new TextDecoder().decode(entry.data);
}

interface NodeRecord {
  core: RaftCore;
  /** Everything handed out in Ready.committed, in order. */
  committed: Entry[];
  readStates: { ctx: number; index: number }[];
  failedReads: number[];
  snapshots: SnapshotMeta[];
  hardState: HardState;
  /** The persisted log (what a restart would load). */
  log: Entry[];
  readies: Ready[];
}

export class TinyNet {
  readonly nodes = new Map<NodeId, NodeRecord>();
  queue: Message[] = [];
  /** Messages for which this returns true are dropped. */
  drop: (m: Message) => boolean = () => false;

  constructor(cores: RaftCore[]) {
    for (const core of cores) this.add(core);
  }

  /** n1..nN, all bootstrapped with the same configuration of `members` (default all). */
  static bootstrapped(n: number, overrides: Partial<CoreConfig> | ((id: NodeId) => Partial<CoreConfig>) = {}, members = n): TinyNet {
    const ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
    const config = configOf(...ids.slice(0, members));
    const net = new TinyNet(ids.map((id) => newCore(id, typeof overrides === 'function' ? overrides(id) : overrides)));
    for (const id of ids.slice(0, members)) net.core(id).bootstrap(config);
    net.settle();
    return net;
  }

  add(core: RaftCore): void {
    this.nodes.set(core.id, {
      core,
      committed: [],
      readStates: [],
      failedReads: [],
      snapshots: [],
      hardState: { term: 0, vote: null, commit: 0 },
      log: [],
      readies: [],
    });
  }

  core(id: NodeId): RaftCore {
    return this.node(id).core;
  }

  node(id: NodeId): NodeRecord {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** Carries out every pending Ready (without delivering the messages). */
  flush(): void {
    for (const n of this.nodes.values()) {
      while (n.core.hasReady()) {
        const rd = n.core.ready();
        n.readies.push(rd);
        if (rd.snapshot) {
          n.snapshots.push(rd.snapshot.meta);
          n.log = [];
        }
        if (rd.hardState) n.hardState = rd.hardState;
        if (rd.entries.length > 0) {
          const first = rd.entries[0].index;
          n.log = n.log.filter((e) => e.index < first).concat(rd.entries);
        }
        for (const m of rd.messages) if (!this.drop(m)) this.queue.push(m);
        n.committed.push(...rd.committed);
        n.readStates.push(...rd.readStates);
        n.failedReads.push(...rd.failedReads);
        n.core.advance(rd);
      }
    }
  }

  /** Delivers queued messages (and what they cause) until nothing moves; bounded. */
  settle(maxRounds = 1000): void {
    for (let round = 0; round < maxRounds; round++) {
      this.flush();
      if (this.queue.length === 0) return;
      const batch = this.queue;
      this.queue = [];
      for (const m of batch) this.nodes.get(m.to)?.core.step(m);
    }
    throw new Error('the network did not settle');
  }

  /** Ticks every node (or those named) `times` times, settling after each tick. */
  tick(times = 1, ids: NodeId[] = [...this.nodes.keys()]): void {
    for (let i = 0; i < times; i++) {
      for (const id of ids) this.core(id).tick();
      this.settle();
    }
  }

  /** Makes `id` leader by an immediate campaign and lets its no-op commit. */
  elect(id: NodeId): void {
    this.core(id).campaign();
    this.settle();
    if (this.core(id).role !== 'leader') throw new Error(`${id} did not win (role ${this.core(id).role})`);
  }

  /** Cuts `id` off from everyone (both directions). */
  isolate(...ids: NodeId[]): void {
    this.drop = (m) => ids.includes(m.from) !== ids.includes(m.to);
  }

  heal(): void {
    this.drop = () => false;
  }

  /** What a restart would load from this node's disk. */
  restoreOf(id: NodeId): CoreRestore {
    const n = this.node(id);
    return { hardState: { ...n.hardState }, snapshot: n.snapshots[n.snapshots.length - 1], entries: n.log.slice() };
  }

  messagesOf(type: Message['type']): Message[] {
    return this.queue.filter((m) => m.type === type);
  }
}
