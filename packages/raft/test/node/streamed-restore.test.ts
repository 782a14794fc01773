// Issue #34: a state machine with restoreFrom() is restored from a snapshot's pieces, never from the
// bytes joined: on an install (the pieces of a transfer) and on a restart (the stored snapshot read
// a piece at a time from LevelStorage, whose load then leaves the bytes on disk). It ends with the
// same state, its restore() is never called, and the restart logs its progress.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryNetwork, LevelStorage, RaftNode, type RaftNodeOptions, type SnapshotMeta, type SnapshotSource, type StateMachine } from '@registry/raft';
import { bytes, text, waitFor, writeTo } from './cluster-harness';

class PieceFsm implements StateMachine {
  items: string[] = [];
  joined = 0;
  /** Pieces each restoreFrom() read. */
  streamed: number[] = [];

  apply(_index: number, data: Uint8Array): unknown {
    this.items.push(text(data));
    return this.items.length;
  }

  snapshot(): Uint8Array {
    return bytes(JSON.stringify(this.items));
  }

  restore(data: Uint8Array, _meta: SnapshotMeta): void {
    this.joined++;
    this.items = JSON.parse(text(data));
  }

  async restoreFrom(source: SnapshotSource, _meta: SnapshotMeta): Promise<void> {
    let json = '';
    for (let i = 0; i < source.chunks; i++) json += text(await source.read(i));
    this.items = JSON.parse(json);
    this.streamed.push(source.chunks);
  }
}

const TUNING: Partial<RaftNodeOptions> = { tickMs: 20, snapshotThreshold: 10, trailingLogs: 0, snapshotChunkBytes: 32 };

let dir: string;
let nodes: RaftNode[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'raft-streamed-restore-'));
});
afterEach(async () => {
  for (const n of nodes) await n.stop();
  nodes = [];
  rmSync(dir, { recursive: true, force: true });
});

function logger(lines: string[]): NonNullable<RaftNodeOptions['logger']> {
  const log = (_o: unknown, msg?: string) => void lines.push(String(msg));
  return { debug: log, info: log, warn: log, error: log };
}

test('an installed snapshot and a restart restore from pieces, never joined', async () => {
  const network = new InMemoryNetwork();
  const fsms = [1, 2, 3].map(() => new PieceFsm());
  const storages = [1, 2, 3].map((i) => new LevelStorage({ path: join(dir, `n${i}`) }));
  const transports = [1, 2, 3].map((i) => network.transport(`n${i}:1`));
  for (let i = 0; i < 3; i++) nodes.push(await RaftNode.create({ id: `n${i + 1}`, storage: storages[i], transport: transports[i], fsm: fsms[i], ...TUNING }));
  const config = nodes.map((n, i) => ({ id: n.id, address: transports[i].address }));
  await Promise.all(nodes.map((n) => n.bootstrap(config)));
  nodes.forEach((n) => n.start());
  await waitFor(() => nodes.some((n) => n.leaderReady()), 10_000, 'a leader');
  network.isolate(transports[2].address);
  // Through whichever of the two leads (20 ms ticks: a stalled fsync can cost a leader its office).
  const two = () => [0, 1].map((i) => ({ node: nodes[i], fsm: fsms[i] }));
  for (let i = 0; i < 60; i++) await writeTo(two, `command-${String(i).padStart(3, '0')}`);
  const stats = (n: RaftNode) => n.stats() as { lastSnapshotIndex: number; snapshotsInstalled: number };
  await waitFor(() => nodes.slice(0, 2).every((n) => stats(n).lastSnapshotIndex >= 50), 10_000, 'snapshots on both');
  network.heal();

  await waitFor(() => fsms[2].items.length === 60, 15_000, 'n3 caught up').catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(nodes.map((n) => n.stats()))}`);
  });
  expect(stats(nodes[2]).snapshotsInstalled).toBeGreaterThan(0);
  expect(fsms[2].streamed.length).toBeGreaterThan(0);
  // In pieces: the storage's (a snapshot file is read 1 MiB at a time; this one is smaller).
  expect(fsms[2].streamed[0]).toBeGreaterThanOrEqual(1);
  expect(fsms[2].joined).toBe(0);

  // n3 restarts on what it stored: the snapshot is read a piece at a time.
  await nodes[2].stop();
  const lines: string[] = [];
  const again = new PieceFsm();
  nodes[2] = await RaftNode.create({ id: 'n3', storage: new LevelStorage({ path: join(dir, 'n3') }), transport: network.transport('n3:2'), fsm: again, logger: logger(lines), ...TUNING });
  expect(again.joined).toBe(0);
  expect(again.streamed).toHaveLength(1);
  expect(again.streamed[0]).toBeGreaterThanOrEqual(1);
  expect(again.items.length).toBeGreaterThanOrEqual(50);
  expect(again.items.slice(0, 3)).toEqual(['command-000', 'command-001', 'command-002']);
  expect(lines).toContain('raft: restoring the stored snapshot');
  expect(lines).toContain('raft: restored the stored snapshot');
});
