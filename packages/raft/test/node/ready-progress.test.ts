// A Ready that does not finish says so: while one is in progress nothing the core says goes out,
// so a follower stuck there hears its leader yet answers nothing, and its leader loses quorum with
// no line in either log (dead-server-cleanup in CI). Here the storage's write hangs: the server
// reports the step it is stuck at, and stops once the write completes.
import { InMemoryNetwork, MemoryStorage, RaftNode, type Entry, type HardState, type SnapshotMeta, type StateMachine } from '@registry/raft';
import { bytes, waitFor } from './cluster-harness';

/** Memory storage whose appends wait while `held` is set. */
class HoldingStorage extends MemoryStorage {
  held: Promise<void> | null = null;
  override async append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    if (this.held) await this.held;
    return super.append(hardState, entries);
  }
}

const fsm: StateMachine = {
  apply: () => true,
  snapshot: () => bytes('[]'),
  restore: (_data: Uint8Array, _meta: SnapshotMeta) => undefined,
};

let node: RaftNode | undefined;
afterEach(async () => {
  await node?.stop();
});

test('a ready batch stuck in its storage write is reported with its step, and no more once it completes', async () => {
  const warnings: Array<{ o: Record<string, unknown>; msg?: string }> = [];
  const logger = { info: () => undefined, debug: () => undefined, warn: (o: object, msg?: string) => warnings.push({ o: o as Record<string, unknown>, msg }) };
  const storage = new HoldingStorage();
  node = await RaftNode.create({ id: 'n1', tickMs: 20, storage, transport: new InMemoryNetwork().transport('n1:1'), fsm, logger });
  await node.bootstrap([{ id: 'n1', address: 'n1:1' }]);
  node.start();
  await waitFor(() => node!.leaderReady(), 10_000, 'a leader');

  let release!: () => void;
  storage.held = new Promise<void>((r) => (release = r));
  const proposed = node.propose(bytes('x'));
  await waitFor(() => warnings.some((w) => /ready batch is still in progress/.test(w.msg ?? '')), 15_000, 'the stuck ready reported');
  const report = warnings.find((w) => /ready batch is still in progress/.test(w.msg ?? ''))!;
  expect(report.o).toMatchObject({ id: 'n1', step: 'persist' });
  expect(report.o.readyMs as number).toBeGreaterThanOrEqual(5_000);

  storage.held = null;
  release();
  await expect(proposed).resolves.toBe(true);
  // Only this report counts: on a loaded machine the ticker may warn of event-loop lag meanwhile.
  const stuckReports = () => warnings.filter((w) => /ready batch is still in progress/.test(w.msg ?? '')).length;
  const reported = stuckReports();
  await new Promise((r) => setTimeout(r, 6_000));
  expect(stuckReports()).toBe(reported);
}, 40_000);
