// The log owns the bytes of what it was given: a proposal is often a view into a caller's larger
// working buffer (msgpackr packs into one, at advancing positions), which the log would otherwise
// keep alive, whole, until a snapshot compacts the entry (at 100,000 catalog nodes such buffers
// were 170 MiB behind a 40 MiB log on the leader), and which its owner may later write over.
import { EntryType, InMemoryNetwork, MemoryStorage, RaftNode, type Entry, type HardState } from '@registry/raft';
import { Cluster, ListFsm, text, waitFor } from './cluster-harness';

const nodes: RaftNode[] = [];
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.stop();
});

test('proposals that are views into a larger buffer are stored as copies owning only their bytes', async () => {
  const net = new InMemoryNetwork();
  const appended: Entry[] = [];
  const storage = new MemoryStorage();
  const append = storage.append.bind(storage);
  storage.append = (hard: HardState | undefined, entries: Entry[]) => {
    appended.push(...entries);
    return append(hard, entries);
  };
  const fsm = new ListFsm();
  const node = await RaftNode.create({ id: 'a', storage, transport: net.transport('a:1'), fsm, tickMs: 20 });
  nodes.push(node);
  await node.bootstrap([{ id: 'a', address: 'a:1' }]);
  node.start();
  await waitFor(() => node.leaderReady(), 10_000, 'leadership');

  // One 64 KiB working buffer, each proposal packed at the next position, as msgpackr does.
  const work = new Uint8Array(64 << 10);
  const proposals: Promise<unknown>[] = [];
  let at = 0;
  for (let i = 0; i < 50; i++) {
    const encoded = new TextEncoder().encode(`proposal-${i}`);
    work.set(encoded, at);
    proposals.push(node.propose(work.subarray(at, at + encoded.length)));
    at += encoded.length;
  }
  await Promise.all(proposals);
  // The owner writes over its buffer once the proposals are done with.
  work.fill(0x7a);

  const expected = Array.from({ length: 50 }, (_, i) => `proposal-${i}`);
  expect(fsm.items).toEqual(expected);
  const stored = appended.filter((e) => e.type === EntryType.Normal && e.data.byteLength > 0);
  expect(stored.map((e) => text(e.data))).toEqual(expected);
  // No stored entry keeps the 64 KiB working buffer alive: their bytes are in the log's own
  // chunks (entry-bytes.ts), which the state machine may keep views into.
  for (const e of stored) {
    expect(e.data.buffer).not.toBe(work.buffer);
    expect(e.data.buffer).toBeInstanceOf(SharedArrayBuffer);
  }
});

test("a follower's entries own their bytes, not the frame that brought them, and so do the applied ones", async () => {
  // Over TCP: a follower's entries arrive as views into a decoded frame.
  const seen = new Map<ListFsm, Uint8Array[]>();
  const apply = ListFsm.prototype.apply;
  const spy = jest.spyOn(ListFsm.prototype, 'apply').mockImplementation(function (this: ListFsm, index: number, data: Uint8Array) {
    if (!seen.has(this)) seen.set(this, []);
    seen.get(this)!.push(data);
    return apply.call(this, index, data);
  });
  const cluster = await Cluster.start(3);
  try {
    const leader = await cluster.leader();
    for (let i = 0; i < 20; i++) await leader.node.propose(new TextEncoder().encode(`value-${i}`));
    await waitFor(() => cluster.members.every((m) => m.fsm.items.length === 20), 10_000, 'applied everywhere');
    for (const m of cluster.members) {
      const values = seen.get(m.fsm)!.filter((d) => d.byteLength > 0);
      expect(values.map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `value-${i}`));
      // Each is a view into one of the log's chunks: what the state machine keeps of it stays there.
      for (const d of values) expect(d.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
  } finally {
    spy.mockRestore();
    await cluster.shutdown();
  }
});
