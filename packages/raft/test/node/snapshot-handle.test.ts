// State machines that hand out point-in-time snapshot handles (hashicorp/raft's FSMSnapshot): the
// driver persists them in the background while it goes on applying, writes what persist() gave (the
// state at the handle's index), releases the handle on stop() or when an installed snapshot covers
// it (and then never writes it over the newer one), and survives a failing persist().
import {
  InMemoryNetwork,
  MemoryStorage,
  RaftNode,
  type FSMSnapshot,
  type InMemoryTransport,
  type RaftNodeOptions,
  type SnapshotMeta,
  type StateMachine,
} from '@registry/raft';
import { bytes, text, waitFor } from './cluster-harness';

/** A handle whose persist() waits for open() (or fails, if told to). */
class Handle implements FSMSnapshot {
  released = false;
  costMs = 1;
  // (Declared before the promises that set them: a later declaration would reset them.)
  private opened!: () => void;
  private releasedReject!: (err: Error) => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));
  private readonly releasedWith = new Promise<never>((_, reject) => (this.releasedReject = reject));

  constructor(
    readonly index: number,
    private readonly items: readonly string[],
    private readonly fail: boolean,
    /** false: persist() goes on after release() and resolves once opened. */
    private readonly honoursRelease = true,
  ) {
    this.releasedWith.catch(() => undefined);
  }

  open(): void {
    this.opened();
  }

  async persist(): Promise<Uint8Array> {
    await (this.honoursRelease ? Promise.race([this.gate, this.releasedWith]) : this.gate);
    if (this.fail) throw new Error('persist failed');
    return bytes(JSON.stringify(this.items));
  }

  release(): void {
    this.released = true;
    this.releasedReject(new Error('released'));
  }
}

/** A list of applied commands; snapshot() captures it (a copy of the list) at once. */
class HandleFsm implements StateMachine {
  items: string[] = [];
  handles: Handle[] = [];
  /** Whether handles wait for open() (else they persist at once). */
  gated = false;
  honoursRelease = true;
  failNext = 0;
  private index = 0;

  apply(index: number, data: Uint8Array): unknown {
    this.index = index;
    this.items.push(text(data));
    return this.items.length;
  }

  snapshot(): FSMSnapshot {
    const handle = new Handle(this.index, [...this.items], this.failNext > 0, this.honoursRelease);
    if (this.failNext > 0) this.failNext--;
    this.handles.push(handle);
    if (!this.gated) handle.open();
    return handle;
  }

  restore(data: Uint8Array, meta: SnapshotMeta): void {
    this.items = JSON.parse(text(data));
    this.index = meta.index;
  }
}

interface Server {
  id: string;
  node: RaftNode;
  fsm: HandleFsm;
  storage: MemoryStorage;
  transport: InMemoryTransport;
}

let servers: Server[] = [];
let network: InMemoryNetwork;

async function start(n: number, tuning: Partial<RaftNodeOptions>): Promise<Server[]> {
  network = new InMemoryNetwork();
  servers = [];
  for (let i = 1; i <= n; i++) {
    const id = `n${i}`;
    const transport = network.transport(`${id}:1`);
    const fsm = new HandleFsm();
    const storage = new MemoryStorage();
    const node = await RaftNode.create({ id, storage, transport, fsm, tickMs: 20, ...tuning });
    servers.push({ id, node, fsm, storage, transport });
  }
  const config = servers.map((s) => ({ id: s.id, address: s.transport.address }));
  await Promise.all(servers.map((s) => s.node.bootstrap(config)));
  servers.forEach((s) => s.node.start());
  return servers;
}

async function leader(): Promise<Server> {
  let found: Server | undefined;
  await waitFor(() => (found = servers.find((s) => s.node.leaderReady())) !== undefined, 10_000, 'a leader');
  return found!;
}

const stats = (s: Server) => s.node.stats() as { snapshotsTaken: number; lastSnapshotIndex: number; appliedIndex: number };

afterEach(async () => {
  for (const s of servers) {
    s.fsm.handles.forEach((h) => h.open());
    await s.node.stop();
  }
  servers = [];
});

test('entries keep being applied while a handle persists; what is written is the state at its index', async () => {
  const [only] = await start(1, { snapshotThreshold: 20, trailingLogs: 5 });
  only.fsm.gated = true;
  await leader();
  for (let i = 0; i < 25; i++) await only.node.propose(bytes(`a${i}`));
  await waitFor(() => only.fsm.handles.length === 1, 5_000, 'a snapshot handle');
  const handle = only.fsm.handles[0];
  // The handle is still persisting: 40 more entries commit and are applied meanwhile.
  for (let i = 0; i < 40; i++) await only.node.propose(bytes(`b${i}`));
  expect(only.fsm.items).toHaveLength(65);
  expect(stats(only).snapshotsTaken).toBe(0);
  expect(only.fsm.handles).toHaveLength(1); // one snapshot at a time
  handle.open();
  await waitFor(() => stats(only).snapshotsTaken === 1, 5_000, 'the snapshot written');
  expect(handle.released).toBe(true);
  expect(stats(only).lastSnapshotIndex).toBe(handle.index);
  const stored = await only.storage.load();
  expect(stored.snapshot?.meta.index).toBe(handle.index);
  const state: string[] = JSON.parse(text(stored.snapshot!.data));
  expect(state).toEqual(only.fsm.items.slice(0, state.length));
  expect(state).toContain('a0');
  expect(state).not.toContain('b0');
  // The log after the snapshot still holds everything applied since.
  expect(stored.entries[stored.entries.length - 1].index).toBeGreaterThanOrEqual(stats(only).appliedIndex);
});

test('stop() releases a handle that is still persisting and nothing is written', async () => {
  const [only] = await start(1, { snapshotThreshold: 10 });
  only.fsm.gated = true;
  await leader();
  for (let i = 0; i < 12; i++) await only.node.propose(bytes(`v${i}`));
  await waitFor(() => only.fsm.handles.length === 1, 5_000, 'a snapshot handle');
  const stopping = only.node.stop();
  await stopping; // resolves although persist() would never have finished by itself
  expect(only.fsm.handles[0].released).toBe(true);
  expect(stats(only).snapshotsTaken).toBe(0);
});

test('a persist() that fails is retried later and the node keeps going', async () => {
  const [only] = await start(1, { snapshotThreshold: 10, trailingLogs: 2 });
  only.fsm.failNext = 1;
  await leader();
  for (let i = 0; i < 12; i++) await only.node.propose(bytes(`v${i}`));
  await waitFor(() => only.fsm.handles.length === 1 && only.fsm.handles[0].released, 5_000, 'the failed handle released');
  expect(stats(only).snapshotsTaken).toBe(0);
  // After the back-off (1 s), the next entries bring another snapshot, which succeeds.
  await waitFor(
    () => {
      void only.node.propose(bytes('more')).catch(() => undefined);
      return stats(only).snapshotsTaken === 1;
    },
    8_000,
    'a snapshot after the retry',
  );
  expect(only.fsm.handles.length).toBeGreaterThanOrEqual(2);
});

test('the cost a handle reports spaces snapshots like a synchronous one', async () => {
  const [only] = await start(1, { snapshotThreshold: 10, trailingLogs: 2 });
  await leader();
  const original = only.fsm.snapshot.bind(only.fsm);
  only.fsm.snapshot = () => Object.assign(original(), { costMs: 1_000 }); // → 100 s between spaced snapshots
  for (let i = 0; i < 60; i++) await only.node.propose(bytes(`v${i}`));
  await waitFor(() => stats(only).snapshotsTaken >= 1, 5_000, 'the first snapshot');
  // Not one per 10 entries: the next only once 8 × 10 have been applied.
  expect(stats(only).snapshotsTaken).toBe(1);
  for (let i = 0; i < 40; i++) await only.node.propose(bytes(`w${i}`));
  await waitFor(() => stats(only).snapshotsTaken === 2, 5_000, 'a snapshot forced by the log bound');
});

test.each([
  ['stops at release()', true],
  ['ignores release() and resolves later', false],
])('a handle covered by an installed snapshot is released and never written over it (a persist() that %s)', async (_what, honours) => {
  await start(3, { snapshotThreshold: 20, trailingLogs: 5 });
  const lead = await leader();
  const follower = servers.find((s) => s !== lead)!;
  follower.fsm.gated = true; // the follower's own snapshot will hang in persist()
  follower.fsm.honoursRelease = honours;
  for (let i = 0; i < 25; i++) await lead.node.propose(bytes(`a${i}`));
  await waitFor(() => follower.fsm.handles.length === 1, 5_000, "the follower's snapshot handle");
  const hanging = follower.fsm.handles[0];

  // Cut the follower off; the others move on and compact their logs past it.
  network.isolate(follower.transport.address);
  for (let i = 0; i < 100; i++) await lead.node.propose(bytes(`b${i}`));
  await waitFor(() => stats(lead).lastSnapshotIndex > hanging.index + 5, 5_000, 'the leader compacting');
  network.heal();

  await waitFor(() => follower.fsm.items.length === lead.fsm.items.length, 10_000, 'the follower caught up by a snapshot');
  expect(hanging.released).toBe(true);
  hanging.open(); // too late: it was released
  await new Promise((r) => setTimeout(r, 100));
  const stored = await follower.storage.load();
  expect(stored.snapshot!.meta.index).toBeGreaterThan(hanging.index);
  const state: string[] = JSON.parse(text(stored.snapshot!.data));
  expect(state.length).toBeGreaterThan(25);
  expect(state).toEqual(lead.fsm.items.slice(0, state.length));
  expect(follower.fsm.items).toEqual(lead.fsm.items);
  expect(stats(follower).snapshotsTaken).toBe(0);
});
