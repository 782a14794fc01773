// A snapshot whose every piece is in is kept until the driver installs it, whatever transfer comes
// next (snapshot-transfer.ts). The last piece steps the core at once, but the driver reaches the
// Ready that installs it only after the Ready it is still writing: a new transfer starting at offset
// 0 in between (the leader sending again, a new leader) used to drop the assembled pieces, and the
// driver then stored an EMPTY snapshot in their place — the whole log dropped with it — and failed
// to restore it. Here the test plays the leader against one real RaftNode over the in-memory
// network, holding up the follower's log write to open exactly that window.
import {
  InMemoryNetwork,
  MemoryStorage,
  RaftNode,
  type Entry,
  type HardState,
  type RaftStorage,
  type SnapshotData,
  type SnapshotMeta,
  type ServerInfo,
  type StorageSnapshotSink,
} from '@registry/raft';
import { bytes, ListFsm, text, waitFor } from './cluster-harness';

/** The RPC a snapshot's pieces travel by (snapshot-transfer.ts). */
const INSTALL_SNAPSHOT = 'raft.installSnapshot';

/** MemoryStorage whose log writes can be held up, recording the snapshots it stores. */
class HeldStorage extends MemoryStorage {
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  /** Log writes that reached the gate while it was closed. */
  held = 0;
  /** Log writes asked for. */
  appends = 0;
  /** Bytes of every snapshot stored (saved whole or committed from a sink). */
  stored: number[] = [];

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open?.();
    this.gate = null;
  }

  override async append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    this.appends++;
    if (this.gate) {
      this.held++;
      await this.gate;
    }
    return super.append(hardState, entries);
  }

  override async saveSnapshot(meta: SnapshotMeta, data: SnapshotData, compactTo: number): Promise<void> {
    await super.saveSnapshot(meta, data, compactTo);
    this.stored.push((await this.readSnapshot())!.size);
  }

  override createSnapshot(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink {
    const sink = super.createSnapshot(meta, compactTo);
    return {
      get size() {
        return sink.size;
      },
      write: (chunk) => sink.write(chunk),
      commit: async () => {
        await sink.commit();
        this.stored.push((await this.readSnapshot())!.size);
      },
      abort: () => sink.abort(),
    };
  }
}

/** The same storage without createSnapshot: the follower keeps a transfer's pieces in memory. */
function inMemoryPieces(s: HeldStorage): RaftStorage {
  return {
    load: () => s.load(),
    append: (h, e) => s.append(h, e),
    saveSnapshot: (meta, data, compactTo) => s.saveSnapshot(meta, data, compactTo),
    readSnapshot: () => s.readSnapshot(),
    close: () => s.close(),
  };
}

/** How the second transfer comes: who sends it, in which term, and where the follower puts pieces. */
const cases = [
  { what: 'the leader sends again (pieces written into a snapshot sink)', from: 'n1', term: 2, streams: true },
  { what: 'a new leader of a later term sends its own (pieces held in memory)', from: 'n2', term: 3, streams: false },
];

let node: RaftNode | undefined;
afterEach(async () => {
  await node?.stop();
  node = undefined;
});

test.each(cases)('a transfer starting over right after the last piece does not take the assembled snapshot from the core: $what', async ({ from, term, streams }) => {
  const network = new InMemoryNetwork();
  const leader = network.transport('n1:1');
  const next = network.transport('n2:1');
  next.onMessage(() => undefined);
  const answers: string[] = [];
  leader.onMessage((m) => answers.push(m.type));
  const servers: ServerInfo[] = [
    { id: 'n1', address: 'n1:1' },
    { id: 'n2', address: 'n2:1' },
    { id: 'n3', address: 'n3:1' },
  ];
  const storage = new HeldStorage();
  const fsm = new ListFsm();
  // A long election timeout: n3 stays a follower of the test for the whole test.
  node = await RaftNode.create({ id: 'n3', storage: streams ? storage : inMemoryPieces(storage), transport: network.transport('n3:1'), fsm, tickMs: 50, electionTicks: 400 });
  const errors: unknown[] = [];
  node.on('error', (err) => errors.push(err));
  await node.bootstrap(servers);
  node.start();

  // 1. A Ready is being written: n1's heartbeat of term 2 makes n3 store the new term, and that write is held.
  storage.hold();
  leader.send(servers[2], { type: 'heartbeat', from: 'n1', to: 'n3', term: 2, commit: 0 });
  await waitFor(() => storage.held > 0, 5_000, 'the term write reached storage');

  // 2. Meanwhile a whole snapshot arrives in pieces: its last piece steps the core, which installs
  //    it in its next Ready — one the driver reaches only once the write above is done.
  const state = ['alpha', 'beta', 'gamma', 'delta'];
  const data = bytes(JSON.stringify(state));
  const meta: SnapshotMeta = { index: 20, term: 2, configuration: { servers } };
  const piece = (transfer: string, from: number, to: number, sender = 'n1', term = 2) => ({
    from: sender,
    to: 'n3',
    term,
    meta,
    transfer,
    offset: from,
    size: data.length,
    done: to >= data.length,
    data: data.subarray(from, to),
  });
  const half = Math.floor(data.length / 2);
  expect(await leader.call('n3:1', INSTALL_SNAPSHOT, piece('n1/2/20/1', 0, half))).toMatchObject({ ok: true });
  expect(await leader.call('n3:1', INSTALL_SNAPSHOT, piece('n1/2/20/1', half, data.length))).toMatchObject({ ok: true });

  // 3. A transfer starts over at offset 0: the leader's (its probe timed out before n3 answered),
  //    or a new leader's. (Same snapshot here; only its first piece is needed.)
  const sender = from === 'n1' ? leader : next;
  expect(await sender.call('n3:1', INSTALL_SNAPSHOT, piece(`${from}/${term}/20/2`, 0, half, from, term))).toMatchObject({ ok: true });

  // 4. The write completes: the driver reaches the Ready that installs the snapshot.
  storage.release();
  await waitFor(() => fsm.restoredFrom.includes(20) || errors.length > 0 || storage.stored.length > 0, 10_000, 'the snapshot was installed');
  await waitFor(() => fsm.restoredFrom.includes(20) || errors.length > 0, 10_000, 'the snapshot was restored');

  // The snapshot stored is the leader's, whole, and the state machine holds its state.
  expect(storage.stored).toEqual([data.length]);
  const reader = (await storage.readSnapshot())!;
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < reader.chunks; i++) chunks.push(await reader.read(i));
  reader.close();
  expect(reader.meta.index).toBe(20);
  expect(JSON.parse(text(Buffer.concat(chunks)))).toEqual(state);
  expect(fsm.items).toEqual(state);
  expect(errors).toEqual([]);
  if (from === 'n1') await waitFor(() => answers.includes('appendResp'), 5_000, 'n3 acknowledged the snapshot');
});

test('a snapshot the core installs without bytes or pieces is refused, never stored empty', async () => {
  // A leader's Raft message naming a snapshot but carrying no bytes (none of its pieces came):
  // the driver has nothing to store. It used to store an empty snapshot, dropping the whole log.
  const network = new InMemoryNetwork();
  const leader = network.transport('n1:1');
  leader.onMessage(() => undefined);
  const servers: ServerInfo[] = [
    { id: 'n1', address: 'n1:1' },
    { id: 'n3', address: 'n3:1' },
  ];
  const storage = new HeldStorage();
  node = await RaftNode.create({ id: 'n3', storage, transport: network.transport('n3:1'), fsm: new ListFsm(), tickMs: 50, electionTicks: 400 });
  const errors: unknown[] = [];
  node.on('error', (err) => errors.push(err));
  await node.bootstrap(servers);
  node.start();
  const appendsBefore = storage.appends;

  leader.send(servers[1], { type: 'snapshot', from: 'n1', to: 'n3', term: 2, meta: { index: 20, term: 2, configuration: { servers } } });
  await waitFor(() => errors.length > 0, 5_000, 'the node refused the snapshot');

  expect(String(errors[0])).toMatch(/has no pieces; refusing to store it/);
  // Nothing of that Ready was written (the node stopped and closed its storage after refusing).
  expect(storage.stored).toEqual([]);
  expect(storage.appends).toBe(appendsBefore);
});
