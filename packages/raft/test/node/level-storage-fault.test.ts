// A RaftNode on LevelStorage on a real full disk: a small tmpfs mounted for the test. The node must
// refuse work with the cause and carry on once space is freed, without a restart, keeping every
// write it acknowledged. (The storages themselves on a full disk: full-disk-storage.test.ts.)
import { join } from 'node:path';
import { LevelStorage, RaftNode, InMemoryNetwork, type StorageFault } from '@registry/raft';
import { bytes, ListFsm, waitFor } from './cluster-harness';
import { Tmpfs } from '../support/tmpfs';

const disk = Tmpfs.mount('raft-enospc-', 3);
const mnt = disk.dir;
const mounted = disk.mounted;
const skipReason = disk.skipReason;

// The filler of the running test is removed after it whatever happens.
afterEach(() => disk.free());
afterAll(() => disk.unmount());

test('RaftNode on a full disk refuses writes with the cause, does not stop, and commits again once space is freed', async () => {
  if (!mounted) return console.warn(skipReason);
  const dir = join(mnt, 'node');
  const net = new InMemoryNetwork();
  const open = async () => {
    const fsm = new ListFsm();
    const node = await RaftNode.create({ id: 'solo', storage: new LevelStorage({ path: dir }), transport: net.transport(`solo-${Date.now()}:1`), fsm, tickMs: 10, electionTicks: 5 });
    return { node, fsm };
  };
  let { node, fsm } = await open();
  await node.bootstrap([{ id: 'solo', address: 'solo:1' }]);
  node.start();
  await waitFor(() => node.leaderReady(), 5000);
  const acked: string[] = [];
  const big = (s: string) => s.padEnd(16 << 10, '.');
  for (let i = 0; i < 5; i++) {
    await node.propose(bytes(big(`v${i}`)));
    acked.push(`v${i}`);
  }

  const faults: StorageFault[] = [];
  node.on('storage-fault', (f: StorageFault) => faults.push(f));
  const full = disk.fill();
  let refusal: Error | undefined;
  for (let i = 5; i < 100 && !refusal; i++) {
    try {
      await node.propose(bytes(big(`v${i}`)));
      acked.push(`v${i}`);
    } catch (err) {
      refusal = err as Error;
    }
  }
  expect(refusal?.message).toMatch(/^raft storage failed: ENOSPC: .*No space left on device/);
  expect(node.storageFault()).toMatchObject({ kind: 'log', message: expect.stringMatching(/^raft storage failed: ENOSPC/) });
  expect(faults).toHaveLength(1);
  await expect(node.propose(bytes('refused'))).rejects.toThrow(/raft storage failed: ENOSPC/);
  expect(node.isLeader()).toBe(false);

  disk.free();
  await waitFor(() => node.storageFault() === null, 5000, 'recovery after the space was freed');
  await waitFor(() => node.leaderReady(), 5000, 'leading again');
  for (let i = 100; i < 105; i++) {
    await node.propose(bytes(big(`v${i}`)));
    acked.push(`v${i}`);
  }
  const applied = fsm.items.map((s) => s.replace(/\.+$/, ''));
  for (const v of acked) expect(applied).toContain(v);

  // Everything acknowledged is on disk: a restart from the directory brings it all back.
  await node.stop();
  ({ node, fsm } = await open());
  node.start();
  await waitFor(() => node.leaderReady(), 5000);
  await node.readBarrier(2000);
  const restored = fsm.items.map((s) => s.replace(/\.+$/, ''));
  for (const v of acked) expect(restored).toContain(v);
  expect(new Set(restored).size).toBe(restored.length);
  await node.stop();
});
