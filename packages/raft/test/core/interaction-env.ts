// The environment behind the data-driven interaction tests (testdata/*.txt), in
// the spirit of etcd-io/raft's rafttest InteractionEnv: a few RaftCores, a disk
// and a state machine per node, and one message queue that is delivered only
// when a test says so. Every step is printed, so a test file reads as a trace.
// Only RaftCore's public API is used.
//
// Commands (ids are 1..n; "ids..." means one or more):
//   add-nodes <n> [pre-vote=false] [check-quorum=false] [election=10] [heartbeat=1]
//             [max-inflight=8] [max-entries=64] [learners=0]
//       n bootstrapped nodes sharing the configuration {1..n}; their first Ready is persisted silently.
//       With learners=k the last k of them are learners (non-voters).
//   conf-change <leader> add|add-learner|remove <id>
//                                  core.proposeConfChange() on the leader (add also promotes a learner)
//   transfer-leadership <from>     (no target) to the most up-to-date voter
//   campaign <id>                  core.campaign() (an election now, skipping pre-vote)
//   tick-election <ids...>         `election` ticks each (exactly one election timeout: random() is 0)
//   tick-heartbeat <ids...>        `heartbeat` ticks each
//   tick <id> <n>                  n ticks
//   propose <id> <data...>         one propose() call with an entry per word
//   read-index <id> <ctx>          core.readIndex(ctx)
//   transfer-leadership <from> <to>
//   compact <id> <index>           snapshot the state machine at index (≤ applied) and compact the log to it
//   wipe <id>                      the node loses its whole disk (log, snapshot, hard state) and its memory,
//                                  and restarts with the same id and empty storage (queued messages survive)
//   process-ready <ids...>         take a Ready: persist, queue its messages, apply, advance
//   deliver-msgs <ids...>          step every queued message addressed to them, in order
//   stabilize [quiet] [ids...]     process-ready and deliver-msgs until nothing moves (default: all);
//                                  quiet prints only the role/term/leader changes
//   isolate <id> / cut <a> <b> / heal
//                                  messages across a cut are dropped when delivered
//   status <ids...>                role, term, leader, commit, applied, last index (and a leader's progress)
//   raft-log <id>                  what the node's disk holds
// Role/term/leader changes caused by a command are printed as "2 -> follower term=2 leader=1".
import { RaftCore, type CoreConfig } from '../../src/core/raft-core';
import { EntryType, type Configuration, type Entry, type HardState, type Message, type NodeId, type SnapshotMeta } from '../../src/core/types';
import type { Command } from './datadriven';
import { formatEntry, formatMessage, formatReady, formatStatus, voters } from './interaction-format';

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** The state machine: the Normal entries applied, with their indexes (so a snapshot can be cut at any applied index). */
type Fsm = { index: number; data: string }[];

interface Node {
  id: NodeId;
  core: RaftCore;
  config: CoreConfig;
  disk: { hardState: HardState; snapshot?: { meta: SnapshotMeta; data: Uint8Array }; entries: Entry[] };
  fsm: Fsm;
}

const STABILIZE_LIMIT = 1000;
/** A role/term/leader change line, as observe() prints it. */
const CHANGE = /^\s*\S+ -> /;

export class InteractionEnv {
  private readonly nodes = new Map<NodeId, Node>();
  private queue: Message[] = [];
  /** Cut links, each as "a b" with a < b. */
  private readonly cuts = new Set<string>();

  handle(cmd: Command): string[] {
    const out: string[] = [];
    const a = cmd.args;
    switch (cmd.name) {
      case 'add-nodes':
        return this.addNodes(Number(a[0]), options(a.slice(1)));
      case 'campaign':
        this.observe(this.node(a[0]), out, (core) => core.campaign());
        break;
      case 'tick-election':
        for (const id of ids(a)) this.tickTimes(this.node(id), this.node(id).config.electionTicks, out);
        break;
      case 'tick-heartbeat':
        for (const id of ids(a)) this.tickTimes(this.node(id), this.node(id).config.heartbeatTicks, out);
        break;
      case 'tick':
        this.tickTimes(this.node(a[0]), int(a[1]), out);
        break;
      case 'propose': {
        const n = this.node(a[0]);
        if (a.length < 2) throw new Error('propose needs data');
        const positions = n.core.propose(a.slice(1).map((d) => utf8Encoder.encode(d)));
        out.push(positions === null ? 'proposal dropped' : `proposed ${positions.map((p) => `${p.term}/${p.index}`).join(' ')}`);
        break;
      }
      case 'read-index':
        this.observe(this.node(a[0]), out, (core) => core.readIndex(int(a[1])));
        break;
      case 'transfer-leadership':
        this.observe(this.node(a[0]), out, (core) => core.transferLeadership(a[1] === undefined ? undefined : this.node(a[1]).id));
        break;
      case 'conf-change': {
        const type = ({ add: 'add', 'add-learner': 'addLearner', remove: 'remove' } as const)[a[1] as 'add' | 'add-learner' | 'remove'];
        if (!type) throw new Error('conf-change needs add, add-learner or remove');
        const target = this.node(a[2]);
        const at = this.node(a[0]).core.proposeConfChange({ type, server: { id: target.id, address: `addr-${target.id}` } });
        out.push(at === null ? 'conf change refused' : `proposed ${at.term}/${at.index}`);
        break;
      }
      case 'compact':
        out.push(...this.compact(this.node(a[0]), int(a[1])));
        break;
      case 'wipe':
        out.push(...this.wipe(this.node(a[0])));
        break;
      case 'process-ready':
        for (const id of ids(a)) out.push(...this.processReady(this.node(id)));
        break;
      case 'deliver-msgs':
        for (const id of ids(a)) out.push(...this.deliver(this.node(id)));
        break;
      case 'stabilize': {
        const quiet = a[0] === 'quiet';
        const which = quiet ? a.slice(1) : a;
        const lines = this.stabilize(which.length > 0 ? which.map((id) => this.node(id)) : [...this.nodes.values()]);
        out.push(...(quiet ? lines.filter((l) => CHANGE.test(l)).map((l) => l.trim()) : lines));
        break;
      }
      case 'isolate': {
        const n = this.node(a[0]);
        const others = [...this.nodes.keys()].filter((id) => id !== n.id);
        for (const other of others) this.cuts.add(link(n.id, other));
        out.push(`${n.id} cut off from ${others.join(' ')}`);
        break;
      }
      case 'cut':
        this.cuts.add(link(this.node(a[0]).id, this.node(a[1]).id));
        out.push(`cut ${a[0]}-${a[1]}`);
        break;
      case 'heal':
        this.cuts.clear();
        out.push('healed');
        break;
      case 'status':
        for (const id of ids(a)) out.push(...formatStatus(this.node(id).core.status()));
        break;
      case 'raft-log':
        out.push(...this.raftLog(this.node(a[0])));
        break;
      default:
        throw new Error(`unknown command '${cmd.name}'`);
    }
    return out.length > 0 ? out : ['ok'];
  }

  // ---------------------------------------------------------------- nodes

  private addNodes(n: number, opts: Map<string, string>): string[] {
    if (!(n >= 1)) throw new Error('add-nodes needs a count');
    if (this.nodes.size > 0) throw new Error('add-nodes runs once per file');
    const flag = (key: string, dflt: boolean) => (opts.has(key) ? opts.get(key) === 'true' : dflt);
    const num = (key: string, dflt: number) => (opts.has(key) ? int(opts.get(key)!) : dflt);
    const known = ['pre-vote', 'check-quorum', 'election', 'heartbeat', 'max-inflight', 'max-entries', 'learners'];
    for (const key of opts.keys()) if (!known.includes(key)) throw new Error(`unknown option '${key}'`);
    const idList = Array.from({ length: n }, (_, i) => String(i + 1));
    const learners = num('learners', 0);
    if (learners >= n) throw new Error('at least one node must be a voter');
    const configuration: Configuration = {
      servers: idList.map((id, i) => (i >= n - learners ? { id, address: `addr-${id}`, learner: true } : { id, address: `addr-${id}` })),
    };
    const out: string[] = [];
    for (const id of idList) {
      const config: CoreConfig = {
        id,
        electionTicks: num('election', 10),
        heartbeatTicks: num('heartbeat', 1),
        preVote: flag('pre-vote', false),
        checkQuorum: flag('check-quorum', false),
        maxInflight: num('max-inflight', 8),
        maxEntriesPerAppend: num('max-entries', 64),
        maxInflightBytes: num('max-inflight-bytes', 16 * 1024 * 1024),
        maxAppendBytes: num('max-append-bytes', 1024 * 1024),
        // Every election timeout is exactly `election` ticks, so tick-election means one timeout.
        random: () => 0,
      };
      const core = new RaftCore(config, { hardState: { term: 0, vote: null, commit: 0 }, entries: [] });
      core.bootstrap(configuration);
      const node: Node = { id, core, config, disk: { hardState: { term: 0, vote: null, commit: 0 }, entries: [] }, fsm: [] };
      this.nodes.set(id, node);
      while (core.hasReady()) this.carryOut(node); // the bootstrap entry, persisted before the story starts
      out.push(...formatStatus(core.status()));
    }
    return out;
  }

  private node(id: string | undefined): Node {
    const n = id === undefined ? undefined : this.nodes.get(id);
    if (!n) throw new Error(`no node '${id}'`);
    return n;
  }

  /** Runs `fn` on the node's core and prints any change of role, term or leader it caused. */
  private observe(n: Node, out: string[], fn: (core: RaftCore) => void, indent = ''): void {
    const before = roleLine(n.core);
    fn(n.core);
    const after = roleLine(n.core);
    if (after !== before) out.push(`${indent}${n.id} -> ${after}`);
  }

  private tickTimes(n: Node, times: number, out: string[]): void {
    for (let i = 0; i < times; i++) this.observe(n, out, (core) => core.tick());
  }

  // ---------------------------------------------------------------- Ready

  private processReady(n: Node): string[] {
    const out = [`> ${n.id} handling Ready`];
    if (!n.core.hasReady()) {
      out.push('  (no Ready)');
      return out;
    }
    const body = this.carryOut(n);
    out.push(...(body.length > 0 ? body : ['(empty Ready)']).map((l) => `  ${l}`));
    return out;
  }

  /** What a driver does with one Ready (types.ts): persist, send, apply, advance. Returns its description. */
  private carryOut(n: Node): string[] {
    const rd = n.core.ready();
    const lines = formatReady(rd);
    if (rd.snapshot) {
      // This harness sends snapshots whole; none here comes without its data.
      const snapshot = { meta: rd.snapshot.meta, data: rd.snapshot.data ?? new Uint8Array(0) };
      n.disk.snapshot = snapshot;
      n.disk.entries = [];
      n.fsm = JSON.parse(utf8.decode(snapshot.data)) as Fsm;
    }
    if (rd.hardState) n.disk.hardState = rd.hardState;
    if (rd.entries.length > 0) {
      const first = rd.entries[0].index;
      n.disk.entries = n.disk.entries.filter((e) => e.index < first).concat(rd.entries);
    }
    for (const m of rd.messages) {
      // The core names a snapshot; the driver attaches the bytes of the one it stored.
      if (m.type === 'snapshot') this.queue.push({ ...m, data: n.disk.snapshot?.data });
      else this.queue.push(m);
    }
    for (const e of rd.committed) {
      if (e.type === EntryType.Normal) n.fsm.push({ index: e.index, data: utf8.decode(e.data) });
    }
    this.observe(n, lines, (core) => core.advance(rd));
    return lines;
  }

  private deliver(n: Node): string[] {
    const mine = this.queue.filter((m) => m.to === n.id);
    if (mine.length === 0) return [];
    this.queue = this.queue.filter((m) => m.to !== n.id);
    const out = [`> ${n.id} receiving messages`];
    for (const m of mine) {
      if (this.cuts.has(link(m.from, m.to))) {
        out.push(`  ${formatMessage(m)} DROPPED`);
        continue;
      }
      out.push(`  ${formatMessage(m)}`);
      this.observe(n, out, (core) => core.step(m), '    ');
    }
    return out;
  }

  private stabilize(nodes: Node[]): string[] {
    const out: string[] = [];
    for (let round = 0; round < STABILIZE_LIMIT; round++) {
      let moved = false;
      for (const n of nodes) {
        if (!n.core.hasReady()) continue;
        out.push(...this.processReady(n));
        moved = true;
      }
      for (const n of nodes) {
        const delivered = this.deliver(n);
        if (delivered.length > 0) moved = true;
        out.push(...delivered);
      }
      if (!moved) return out;
    }
    throw new Error(`not stable after ${STABILIZE_LIMIT} rounds`);
  }

  // ---------------------------------------------------------------- disk

  private compact(n: Node, index: number): string[] {
    const meta = n.core.snapshotMeta(index);
    if (!meta) throw new Error(`no entry ${index} to snapshot at`);
    const data = utf8Encoder.encode(JSON.stringify(n.fsm.filter((e) => e.index <= index)));
    n.core.compact(meta, index);
    n.disk.snapshot = { meta, data };
    n.disk.entries = n.disk.entries.filter((e) => e.index > index);
    return [`snapshot ${meta.term}/${meta.index} ${voters(meta.configuration)}; log compacted to ${index}`];
  }

  /** A lost disk: the node restarts as a brand-new server with the same id (no log, no term, no vote). */
  private wipe(n: Node): string[] {
    n.disk = { hardState: { term: 0, vote: null, commit: 0 }, entries: [] };
    n.fsm = [];
    n.core = new RaftCore(n.config, { hardState: { ...n.disk.hardState }, entries: [] });
    return [`${n.id} restarted with empty storage`, ...formatStatus(n.core.status())];
  }

  private raftLog(n: Node): string[] {
    const out: string[] = [];
    const snap = n.disk.snapshot;
    if (snap) out.push(`snapshot ${snap.meta.term}/${snap.meta.index} ${voters(snap.meta.configuration)}`);
    out.push(...n.disk.entries.map(formatEntry));
    return out.length > 0 ? out : ['(empty)'];
  }
}

function roleLine(core: RaftCore): string {
  const leader = core.role === 'leader' || core.leader === null ? '' : ` leader=${core.leader}`;
  return `${core.role} term=${core.term}${leader}`;
}

function link(a: NodeId, b: NodeId): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

function ids(args: string[]): string[] {
  if (args.length === 0) throw new Error('which node(s)?');
  return args;
}

function int(s: string | undefined): number {
  const n = Number(s);
  if (s === undefined || !Number.isInteger(n)) throw new Error(`'${s}' is not an integer`);
  return n;
}

function options(args: string[]): Map<string, string> {
  const opts = new Map<string, string>();
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new Error(`expected key=value, got '${arg}'`);
    opts.set(arg.slice(0, eq), arg.slice(eq + 1));
  }
  return opts;
}
