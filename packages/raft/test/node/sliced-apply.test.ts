// Issue #34: a restart hands the whole log after the snapshot to one Ready (ten thousand entries and
// more at a large state), and a follower cut off for a while gets a long run of committed entries at
// once. They are applied in slices that yield to the event loop, not in one go that holds it: here a
// server restarts on 3,000 entries whose apply costs 0.2 ms each (600 ms in all) and the loop keeps
// turning while they are applied — each entry once, in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { InMemoryNetwork, RaftNode, WalStorage, LevelStorage, type SnapshotMeta, type StateMachine } from '@registry/raft';
import { bytes, text, waitFor } from './cluster-harness';

const ENTRIES = 3_000;
const APPLY_MS = 0.2;

class SlowFsm implements StateMachine {
  items: string[] = [];
  /** Set by the test: called at every apply (the loop-gap meter). */
  onApply: () => void = () => undefined;
  slow = false;

  apply(_index: number, data: Uint8Array): unknown {
    this.onApply();
    if (this.slow) {
      const until = performance.now() + APPLY_MS;
      while (performance.now() < until);
    }
    this.items.push(text(data));
    return this.items.length;
  }

  snapshot(): Uint8Array {
    return bytes(JSON.stringify(this.items));
  }

  restore(data: Uint8Array, _meta: SnapshotMeta): void {
    this.items = JSON.parse(text(data));
  }
}

let dir: string;
let node: RaftNode | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'raft-sliced-apply-'));
});
afterEach(async () => {
  await node?.stop();
  node = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const storage = () => new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }) });

test('a restart re-applies a long log in slices: the event loop turns meanwhile, every entry once and in order', async () => {
  const opts = { id: 'n1', tickMs: 20, snapshotThreshold: 1_000_000 };
  let fsm = new SlowFsm();
  node = await RaftNode.create({ ...opts, storage: storage(), transport: new InMemoryNetwork().transport('n1:1'), fsm });
  await node.bootstrap([{ id: 'n1', address: 'n1:1' }]);
  node.start();
  await waitFor(() => node!.leaderReady(), 10_000, 'a leader');
  for (let i = 0; i < ENTRIES; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, k) => node!.propose(bytes(`command-${String(i + k).padStart(5, '0')}`))));
  }
  expect(fsm.items.length).toBe(ENTRIES);
  await node.stop();

  // The same server again: no snapshot, so the whole log is committed and applied anew.
  fsm = new SlowFsm();
  fsm.slow = true;
  // The meter counts the loop's turns that fall between two applies: applied in one go, the whole
  // log would pass without one; in slices, the loop turns between every two of them.
  let applying = false;
  let turnsWhileApplying = 0;
  let turning = true;
  const turn = () => {
    if (applying) turnsWhileApplying++;
    if (turning) setImmediate(turn);
  };
  setImmediate(turn);
  fsm.onApply = () => {
    applying = fsm.items.length < ENTRIES - 1;
  };
  node = await RaftNode.create({ ...opts, storage: storage(), transport: new InMemoryNetwork().transport('n1:1'), fsm });
  node.start();
  try {
    await waitFor(() => fsm.items.length >= ENTRIES, 30_000, 'the log re-applied');
  } finally {
    turning = false;
  }
  expect(fsm.items).toEqual(Array.from({ length: ENTRIES }, (_, i) => `command-${String(i).padStart(5, '0')}`));
  // 600 ms of applies in slices of ~8 ms: some 75 turns. The count, not a gap in milliseconds, is
  // what is asserted — a busy machine may take the CPU away in the middle of a slice, which makes a
  // gap long but a slice no longer in entries.
  expect(turnsWhileApplying).toBeGreaterThanOrEqual(10);
}, 60_000);
