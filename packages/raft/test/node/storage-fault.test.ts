// A server whose storage fails (a full disk, no file descriptors left) must neither die for good
// nor acknowledge anything it could not write: it refuses work with the cause, takes no part in
// Raft while the write fails, retries the same write, and carries on once it succeeds.
import {
  InMemoryNetwork,
  RaftNode,
  StorageFaultError,
  type InMemoryTransport,
  type Message,
  type SnapshotMeta,
  type StateMachine,
  type StorageFault,
  type StorageRecovery,
} from '@registry/raft';
import { bytes, text, waitFor } from './cluster-harness';
import { FaultyStorage } from './faulty-storage';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Member {
  id: string;
  node: RaftNode;
  storage: FaultyStorage;
  transport: InMemoryTransport;
  items: string[];
  /** Safety violations seen: sends or applies of something not durable here. */
  violations: string[];
  /** Raft messages sent while this server was faulted. */
  sentWhileFaulted: number;
  faults: StorageFault[];
  recoveries: StorageRecovery[];
}

const members: Member[] = [];
afterEach(async () => {
  for (const m of members.splice(0)) {
    await m.node.stop();
    await m.transport.close();
  }
});

/** Checks, as each message leaves, that it promises nothing the sender's disk does not hold. */
function checkSend(m: Member, msg: Message): void {
  const d = m.storage;
  const faulted = m.node.storageFault()?.kind === 'log';
  if (faulted) m.sentWhileFaulted++;
  if (msg.type === 'prevote' || msg.type === 'prevoteResp') return; // they carry a term not (yet) ours
  if (msg.term > d.durableHard.term) m.violations.push(`${m.id} sent ${msg.type} in term ${msg.term} with term ${d.durableHard.term} on disk`);
  if (msg.type === 'voteResp' && msg.granted && (d.durableHard.vote !== msg.to || d.durableHard.term !== msg.term)) {
    m.violations.push(`${m.id} granted a vote to ${msg.to} in term ${msg.term} that is not on disk`);
  }
  if (msg.type === 'appendResp' && msg.success && msg.matchIndex > d.durableLastIndex) {
    m.violations.push(`${m.id} acknowledged index ${msg.matchIndex} with ${d.durableLastIndex} on disk`);
  }
}

async function startCluster(n: number, tuning: { snapshotThreshold?: number; trailingLogs?: number } = {}): Promise<Member[]> {
  const net = new InMemoryNetwork();
  const group: Member[] = [];
  for (let i = 1; i <= n; i++) {
    const id = `n${i}`;
    const transport = net.transport(`${id}:1`);
    const storage = new FaultyStorage();
    const m = { id, storage, transport, items: [] as string[], violations: [] as string[], sentWhileFaulted: 0, faults: [], recoveries: [] } as unknown as Member;
    const fsm: StateMachine = {
      apply(index: number, data: Uint8Array) {
        if (index > storage.durableLastIndex) m.violations.push(`${id} applied ${index} with ${storage.durableLastIndex} on disk`);
        if (m.node.storageFault()?.kind === 'log') m.violations.push(`${id} applied ${index} while faulted`);
        m.items.push(text(data));
        return m.items.length;
      },
      snapshot: () => bytes(JSON.stringify(m.items)),
      restore(data: Uint8Array, _meta: SnapshotMeta) {
        m.items = JSON.parse(text(data)) as string[];
      },
    };
    const send = transport.send.bind(transport);
    transport.send = (to, msg) => {
      checkSend(m, msg);
      send(to, msg);
    };
    // Elections in 300–600 ms: quick, yet not set off by a loaded machine's event-loop lag.
    m.node = await RaftNode.create({ id, storage, transport, fsm, tickMs: 20, electionTicks: 15, ...tuning });
    m.node.on('storage-fault', (f: StorageFault) => m.faults.push(f));
    m.node.on('storage-recovered', (r: StorageRecovery) => m.recoveries.push(r));
    group.push(m);
    members.push(m);
  }
  const servers = group.map((m) => ({ id: m.id, address: m.transport.address }));
  await Promise.all(group.map((m) => m.node.bootstrap(servers)));
  group.forEach((m) => m.node.start());
  return group;
}

async function leaderOf(group: Member[], timeoutMs = 5000): Promise<Member> {
  let found: Member | undefined;
  await waitFor(() => {
    const leaders = group.filter((m) => m.node.leaderReady());
    found = leaders.length === 1 ? leaders[0] : undefined;
    return found !== undefined;
  }, timeoutMs, 'a single ready leader');
  return found!;
}

/** Proposes through whichever server leads, retrying while there is none or it is faulted. */
async function write(group: Member[], value: string, timeoutMs = 5000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leader = group.find((m) => m.node.isLeader());
    try {
      if (!leader) throw new Error('no leader');
      return await leader.node.propose(bytes(value));
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(20);
    }
  }
}

function expectSafe(group: Member[]): void {
  expect(group.flatMap((m) => m.violations)).toEqual([]);
}

test('a follower whose disk fills refuses work with the cause, acknowledges nothing unwritten, and resumes without a restart', async () => {
  const group = await startCluster(3);
  const leader = await leaderOf(group);
  for (let i = 0; i < 10; i++) await leader.node.propose(bytes(`a${i}`));
  const f = group.find((m) => m !== leader)!;
  await waitFor(() => f.items.length === 10);

  f.storage.fail();
  // Two of three still make a quorum: writes keep committing.
  for (let i = 0; i < 20; i++) await leader.node.propose(bytes(`b${i}`));
  await waitFor(() => f.node.storageFault() !== null, 5000, 'the follower to report a fault');
  const fault = f.node.storageFault()!;
  expect(fault.kind).toBe('log');
  expect(fault.message).toBe('raft storage failed: ENOSPC: IO error: /data/db/000042.log: No space left on device');
  expect(f.faults).toHaveLength(1);
  expect((f.node.stats() as { storageFault: StorageFault }).storageFault.message).toBe(fault.message);

  // It refuses work, naming the cause, and does not count as a leader.
  await expect(f.node.propose(bytes('x'))).rejects.toThrow('raft storage failed: ENOSPC');
  await expect(f.node.readBarrier(500)).rejects.toBeInstanceOf(StorageFaultError);
  expect(f.node.isLeader()).toBe(false);
  // It still names the leader, so requests can be forwarded there.
  expect(f.node.leader()?.id).toBe(leader.id);

  // While it fails it retries (with backoff: 100, 200, 400 ms…), applies nothing and sends nothing.
  const applied = f.node.appliedIndex();
  const faultedAt = Date.now();
  await waitFor(() => f.storage.failures >= 4, 5000, 'three retries');
  expect(Date.now() - faultedAt).toBeGreaterThanOrEqual(250); // backing off, not spinning
  expect(f.node.storageFault()!.retries).toBeGreaterThanOrEqual(3);
  expectSafe(group);
  expect(f.node.appliedIndex()).toBe(applied);
  expect(f.items.length).toBeLessThanOrEqual(10);
  expect(f.sentWhileFaulted).toBe(0);
  expect(f.node.lastContactMs()).toBeGreaterThanOrEqual(250);

  // The disk is freed: it writes what it held, takes part again and catches up.
  f.storage.heal();
  await waitFor(() => f.node.storageFault() === null, 5000, 'recovery');
  expect(f.recoveries).toHaveLength(1);
  expect(f.recoveries[0]).toMatchObject({ kind: 'log', message: fault.message });
  await waitFor(() => f.items.length === 30, 5000, 'catch-up');
  await leader.node.propose(bytes('c'));
  await waitFor(() => group.every((m) => m.items.length === 31));
  for (const m of group) expect(m.items).toEqual(leader.items);
  expect(f.node.appliedIndex()).toBe(leader.node.appliedIndex());
  expectSafe(group);
});

test('a leader whose disk fills stops leading; the others elect a new leader and keep committing; it rejoins when healed', async () => {
  const group = await startCluster(3);
  const old = await leaderOf(group);
  for (let i = 0; i < 5; i++) await old.node.propose(bytes(`a${i}`));
  await waitFor(() => group.every((m) => m.items.length === 5));

  old.storage.fail();
  // The proposal's entry cannot be written here: it fails with the cause (its outcome is unknown:
  // the append went out to the followers before the leader's own write).
  const inFlight = old.node.propose(bytes('in-flight'));
  await expect(inFlight).rejects.toThrow(/^raft storage failed: ENOSPC: .*No space left on device/);
  await expect(inFlight).rejects.toMatchObject({ name: 'StorageFaultError', outcomeUnknown: true });
  expect(old.node.isLeader()).toBe(false);
  expect(old.node.leaderReady()).toBe(false);
  await expect(old.node.propose(bytes('refused'))).rejects.toMatchObject({ name: 'StorageFaultError', outcomeUnknown: false });
  await expect(old.node.transferLeadership()).rejects.toBeInstanceOf(StorageFaultError);

  // The others elect a new leader (the faulted one went silent) and keep accepting writes.
  const next = await leaderOf(group.filter((m) => m !== old), 8000);
  expect(next).not.toBe(old);
  for (let i = 0; i < 10; i++) await write(group, `b${i}`, 8000);
  // The faulted server learns who leads from the traffic it drops, so it can forward there.
  await waitFor(() => old.node.leader()?.id === next.id, 5000, 'the faulted server to name the new leader');
  expect(old.items).toHaveLength(5);
  expect(old.sentWhileFaulted).toBe(0);
  expectSafe(group);

  old.storage.heal();
  await waitFor(() => old.node.storageFault() === null, 5000, 'recovery');
  await write(group, 'after', 8000);
  await waitFor(() => group.every((m) => m.items.at(-1) === 'after'), 5000, 'everyone to apply the last write');
  for (const m of group) expect(m.items).toEqual(next.items);
  expect(old.node.isLeader()).toBe(false);
  expect(old.node.term()).toBe(next.node.term());
  // Every value at most once; every acknowledged one present.
  expect(new Set(next.items).size).toBe(next.items.length);
  for (const v of ['a0', 'a4', 'b0', 'b9', 'after']) expect(next.items).toContain(v);
  expectSafe(group);
});

test('a cluster whose disks all fill has no leader and refuses writes with the cause; freed, it commits again', async () => {
  const group = await startCluster(3);
  await leaderOf(group);
  await write(group, 'before');
  const leader = await leaderOf(group);
  group.forEach((m) => m.storage.fail());
  // The next write makes every server try to write.
  await expect(leader.node.propose(bytes('doomed'))).rejects.toThrow('raft storage failed: ENOSPC');
  await waitFor(() => group.every((m) => m.node.storageFault() !== null), 5000);
  await sleep(300);
  expect(group.filter((m) => m.node.isLeader())).toHaveLength(0);
  for (const m of group) await expect(m.node.propose(bytes('x'))).rejects.toBeInstanceOf(StorageFaultError);
  for (const m of group) expect((m.node.stats() as { role: string }).role).toBeDefined(); // not stopped

  group.forEach((m) => m.storage.heal());
  await write(group, 'after', 10_000);
  await waitFor(() => group.every((m) => m.items.at(-1) === 'after'), 5000);
  for (const m of group) expect(m.items).toEqual(group[0].items);
  expect(group[0].items[0]).toBe('before');
  expectSafe(group);
});

test('a failed snapshot write does not stop the node: it keeps committing, reports the fault and retries', async () => {
  const group = await startCluster(3, { snapshotThreshold: 20, trailingLogs: 5 });
  const leader = await leaderOf(group);
  leader.storage.fail(undefined, ['saveSnapshot']);
  for (let i = 0; i < 60; i++) await leader.node.propose(bytes(`v${i}`));
  await waitFor(() => leader.node.storageFault() !== null, 5000);
  expect(leader.node.storageFault()).toMatchObject({ kind: 'snapshot', message: expect.stringContaining('ENOSPC') });
  expect(leader.node.isLeader()).toBe(true);
  expect((leader.node.stats() as { snapshotsTaken: number }).snapshotsTaken).toBe(0);

  leader.storage.heal();
  await waitFor(() => leader.node.storageFault() === null, 15_000, 'a snapshot retry to succeed');
  expect(leader.recoveries).toMatchObject([{ kind: 'snapshot' }]);
  expect((leader.node.stats() as { snapshotsTaken: number }).snapshotsTaken).toBeGreaterThanOrEqual(1);
  await leader.node.propose(bytes('after'));
  await waitFor(() => group.every((m) => m.items.length === 61));
  for (const m of group) expect(m.items).toEqual(leader.items);
  expectSafe(group);
});
