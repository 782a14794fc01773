// A follower far behind is caught up by a snapshot sent in pieces (snapshot-transfer.ts): the leader
// reads the stored snapshot a piece at a time and sends each with its offset; the follower restores
// only once the last piece of one transfer is in. A leader lost mid-transfer, or a lost piece,
// makes the transfer start over cleanly (from offset 0, from whoever leads then), and the follower
// never restores the pieces of an unfinished transfer. The state machine streams its snapshots into
// the storage (persistTo), so no server holds a snapshot as one buffer except to restore it. The
// last test runs the same over TCP and LevelStorage with a state machine that returns bytes.
import {
  InMemoryNetwork,
  PIECES_IN_FLIGHT,
  type Caller,
  MemoryStorage,
  RaftNode,
  type FSMSnapshot,
  type InMemoryTransport,
  type RaftNodeOptions,
  type SnapshotMeta,
  type SnapshotSink,
  type StateMachine,
  type Transport,
} from '@registry/raft';
import { bytes, Cluster, text, waitFor, write, writeTo } from './cluster-harness';

/** Applied commands in a list; snapshots stream the list's JSON in 16-byte pieces through one buffer. */
class StreamFsm implements StateMachine {
  items: string[] = [];
  restored: number[] = [];
  streamed = 0;

  apply(_index: number, data: Uint8Array): unknown {
    this.items.push(text(data));
    return this.items.length;
  }

  snapshot(): FSMSnapshot {
    const json = bytes(JSON.stringify(this.items));
    const fsm = this;
    return {
      persist: async () => json,
      async persistTo(sink: SnapshotSink) {
        const buffer = new Uint8Array(16);
        for (let at = 0; at < json.length; at += 16) {
          const piece = json.subarray(at, at + 16);
          buffer.set(piece);
          await sink.write(buffer.subarray(0, piece.length));
          buffer.fill(0); // reused: a sink that kept a reference would store zeros
        }
        fsm.streamed++;
      },
      release: () => undefined,
    };
  }

  restore(data: Uint8Array, meta: SnapshotMeta): void {
    this.items = JSON.parse(text(data));
    this.restored.push(meta.index);
  }
}

interface Piece {
  from: string;
  meta: { index: number };
  transfer: string;
  offset: number;
  done: boolean;
  data: Uint8Array;
}

type PieceHandler = (body: unknown, caller: Caller) => unknown;

/** A transport that lets the test see (and interfere with) the snapshot pieces a server receives. */
function intercepting(inner: InMemoryTransport, onPiece: (piece: Piece, deliver: () => unknown) => unknown): Transport {
  return {
    get address() {
      return inner.address;
    },
    send: (to, m) => inner.send(to, m),
    onMessage: (h) => inner.onMessage(h),
    call: (address, method, body, timeoutMs) => inner.call(address, method, body, timeoutMs),
    handle: (method, h: PieceHandler) =>
      inner.handle(method, method === 'raft.installSnapshot' ? (body: unknown, caller: Caller) => onPiece(body as Piece, () => h(body, caller)) : h),
    close: () => inner.close(),
  };
}

interface Server {
  id: string;
  node: RaftNode;
  fsm: StreamFsm;
  storage: MemoryStorage;
  address: string;
}

let network: InMemoryNetwork;
let servers: Server[] = [];
/** Every piece the lagging follower received, and what it answered. */
let received: { piece: Piece; ok: boolean }[] = [];

const TUNING: Partial<RaftNodeOptions> = { tickMs: 20, snapshotThreshold: 10, trailingLogs: 0, snapshotChunkBytes: 32 };

/** Three servers; `onPiece` sees every piece that reaches n3 (the one the test lets fall behind). */
async function start(onPiece: (piece: Piece, deliver: () => unknown) => unknown): Promise<void> {
  network = new InMemoryNetwork();
  servers = [];
  received = [];
  for (let i = 1; i <= 3; i++) {
    const id = `n${i}`;
    const inner = network.transport(`${id}:1`);
    const transport =
      id === 'n3'
        ? intercepting(inner, (piece, deliver) => {
            // Listed as they arrive; the answer (asynchronous: the piece is written first) fills `ok` in.
            const answered = Promise.resolve(onPiece(piece, deliver) as { ok: boolean });
            const seen = { piece, ok: false };
            received.push(seen);
            return answered.then((answer) => {
              seen.ok = answer.ok;
              return answer;
            });
          })
        : inner;
    const fsm = new StreamFsm();
    const storage = new MemoryStorage();
    const node = await RaftNode.create({ id, storage, transport, fsm, ...TUNING });
    servers.push({ id, node, fsm, storage, address: inner.address });
  }
  const config = servers.map((s) => ({ id: s.id, address: s.address }));
  await Promise.all(servers.map((s) => s.node.bootstrap(config)));
  servers.forEach((s) => s.node.start());
}

const byId = (id: string) => servers.find((s) => s.id === id)!;
const stats = (s: Server) => s.node.stats() as { lastSnapshotIndex: number; appliedIndex: number; snapshotsInstalled: number };

async function leaderOf(candidates: Server[]): Promise<Server> {
  let found: Server | undefined;
  await waitFor(() => (found = candidates.find((s) => s.node.leaderReady())) !== undefined, 10_000, 'a leader');
  return found!;
}

/**
 * n3 is cut off while 60 commands commit through the others and their logs are compacted past
 * everything n3 has; n3 can then only be caught up by a snapshot (of ~600 bytes: ~20 pieces).
 */
async function leaveBehind(): Promise<Server> {
  await leaderOf(servers);
  network.isolate(byId('n3').address);
  // The leader may have been n3: the other two elect one of themselves (and may again, with 20 ms
  // ticks on a loaded machine: each command is written once through whichever of them leads).
  const others = servers.filter((s) => s.id !== 'n3');
  for (let i = 0; i < 60; i++) await writeTo(() => others, `command-${String(i).padStart(3, '0')}`);
  const leader = await leaderOf(others);
  await waitFor(() => others.every((s) => stats(s).lastSnapshotIndex >= 50), 10_000, 'snapshots on both servers');
  expect(others.every((s) => s.fsm.streamed > 0)).toBe(true); // persisted through persistTo into the storage sink
  expect(stats(byId('n3')).appliedIndex).toBeLessThan(10);
  return leader;
}

afterEach(async () => {
  for (const s of servers) await s.node.stop();
  servers = [];
});

test('a leader lost mid-transfer: the new leader sends its snapshot from offset 0 and the follower restores only that', async () => {
  let firstLeader = '';
  let stopping: Promise<void> | null = null;
  await start((piece, deliver) => {
    const answer = deliver();
    // The third piece of the first leader's transfer is the last it sends: it stops (a crash).
    const fromFirst = received.filter((r) => r.piece.from === firstLeader).length + 1;
    if (piece.from === firstLeader && fromFirst === 3 && !stopping) stopping = byId(firstLeader).node.stop();
    return answer;
  });
  const leader = await leaveBehind();
  firstLeader = leader.id;
  const survivor = servers.find((s) => s.id !== 'n3' && s.id !== firstLeader)!;
  network.heal();

  await waitFor(() => stopping !== null, 10_000, 'the first transfer under way');
  await stopping;
  const next = await leaderOf([survivor]);
  for (let i = 0; i < 5; i++) await next.node.propose(bytes(`after-${i}`));
  const n3 = byId('n3');
  await waitFor(() => n3.fsm.items.length === survivor.fsm.items.length, 10_000, 'n3 caught up');
  expect(n3.fsm.items).toEqual(survivor.fsm.items);

  const first = received.filter((r) => r.piece.from === firstLeader);
  const second = received.filter((r) => r.piece.from === survivor.id);
  // At least the three before the stop; those already in flight then (PIECES_IN_FLIGHT) arrive too.
  expect(first.length).toBeGreaterThanOrEqual(3);
  expect(first.length).toBeLessThan(3 + PIECES_IN_FLIGHT);
  expect(first.every((r) => r.ok && !r.piece.done)).toBe(true);
  // Contiguous pieces from offset 0 (the stored snapshot's pieces are the state machine's 16 bytes).
  let at = 0;
  for (const r of first) {
    expect(r.piece.offset).toBe(at);
    at += r.piece.data.length;
  }
  // One transfer from the new leader, from offset 0 to the end, in many pieces.
  expect(new Set(second.map((r) => r.piece.transfer)).size).toBe(1);
  expect(second[0].piece.offset).toBe(0);
  expect(second.length).toBeGreaterThan(5);
  expect(second.every((r) => r.ok)).toBe(true);
  expect(second[second.length - 1].piece.done).toBe(true);
  // Restored once, from the whole snapshot; what n3 stores (that one, or a later one of its own) is
  // its state at the snapshot's index.
  expect(n3.fsm.restored).toHaveLength(1);
  const stored = await n3.storage.load();
  expect(stored.snapshot!.meta.index).toBeGreaterThanOrEqual(n3.fsm.restored[0]);
  const state: string[] = JSON.parse(text(stored.snapshot!.data));
  expect(state.length).toBeGreaterThanOrEqual(50);
  expect(state).toEqual(n3.fsm.items.slice(0, state.length));
});

test('a piece lost on the way: the transfer starts over from offset 0 and completes', async () => {
  let lost = 0;
  await start((piece, deliver) => {
    if (piece.offset === 96 && lost === 0) {
      lost++;
      throw new Error('connection reset'); // as a lost connection: the leader hears an error
    }
    return deliver();
  });
  const leader = await leaveBehind();
  network.heal();
  const n3 = byId('n3');
  await waitFor(() => n3.fsm.items.length === leader.fsm.items.length, 10_000, 'n3 caught up');
  expect(n3.fsm.items).toEqual(leader.fsm.items);
  const transfers = [...new Set(received.map((r) => r.piece.transfer))];
  expect(transfers.length).toBeGreaterThanOrEqual(2);
  const last = received.filter((r) => r.piece.transfer === transfers[transfers.length - 1]);
  expect(last[0].piece.offset).toBe(0);
  expect(last[last.length - 1].piece.done).toBe(true);
  expect(n3.fsm.restored).toHaveLength(1);
});

test('a follower that installs a snapshot while the leader takes a newer one is sent the newer one at once', async () => {
  // The last piece of the first transfer is held until the leader has compacted past that snapshot:
  // the follower's acknowledgement of its install then leaves it needing the newer one.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let holding: (() => void) | null = null;
  const held = new Promise<void>((r) => (holding = r));
  await start((piece, deliver) => {
    if (piece.done && holding) {
      holding();
      holding = null;
      return released.then(deliver);
    }
    return deliver();
  });
  await leaveBehind();
  network.heal();
  await held;
  const first = received[0].piece.meta.index;
  const two = () => servers.filter((s) => s.id !== 'n3');
  for (let i = 0; i < 30; i++) await writeTo(two, `more-${String(i).padStart(3, '0')}`);
  await waitFor(() => two().every((s) => stats(s).lastSnapshotIndex > first), 10_000, 'a newer snapshot on both');
  release();

  // Well inside the 15 s a sender waits for a follower still installing what it was sent.
  const n3 = byId('n3');
  const ahead = two()[0];
  await waitFor(() => n3.fsm.items.length === ahead.fsm.items.length, 5_000, 'n3 caught up');
  expect(n3.fsm.items).toEqual(ahead.fsm.items);
  const snapshots = [...new Set(received.map((r) => r.piece.meta.index))];
  expect(snapshots[0]).toBe(first);
  expect(snapshots[snapshots.length - 1]).toBeGreaterThan(first);
});

test('over TCP with LevelStorage: a restarted follower behind the compacted log is sent the stored snapshot in pieces', async () => {
  const sent: { to: string; pieces: number; bytes: number }[] = [];
  const logger = {
    info: (o: object, msg?: string) => {
      if (msg === 'raft: sent snapshot') sent.push(o as { to: string; pieces: number; bytes: number });
    },
    warn: () => undefined,
    debug: () => undefined,
  };
  const cluster = await Cluster.start(3, { tickMs: 20, snapshotThreshold: 10, trailingLogs: 0, snapshotChunkBytes: 64, logger });
  try {
    await cluster.leader();
    const behind = cluster.members.find((m) => !m.node.isLeader())!;
    await cluster.stop(behind);
    for (let i = 0; i < 80; i++) await write(cluster, `value-${String(i).padStart(3, '0')}`);
    const up = cluster.running();
    await waitFor(() => up.every((m) => (m.node.stats() as { lastSnapshotIndex: number }).lastSnapshotIndex >= 60), 10_000, 'compacted logs');
    await cluster.restart(behind);
    await waitFor(() => behind.fsm.items.length === up[0].fsm.items.length, 15_000, 'the restarted follower caught up');
    expect(behind.fsm.items).toEqual(up[0].fsm.items);
    expect(behind.fsm.restoredFrom.length).toBeGreaterThanOrEqual(1);
    const toBehind = sent.filter((s) => s.to === behind.id);
    expect(toBehind.length).toBeGreaterThanOrEqual(1);
    // ~1 KB of JSON state in pieces of at most 64 bytes.
    expect(toBehind[0].bytes).toBeGreaterThan(640);
    expect(toBehind[0].pieces).toBe(Math.ceil(toBehind[0].bytes / 64));
  } finally {
    await cluster.shutdown();
  }
});
