// A state machine may answer NotReady for an entry it cannot apply yet (a snapshot restore whose
// state file it must fetch or load first): the driver applies nothing of it nor after it until the
// promise settles, then offers the same entry again — every entry once, in order, and each
// proposer answered with the result of the apply that took.
import { InMemoryNetwork, MemoryStorage, NotReady, RaftNode, type SnapshotMeta, type StateMachine } from '@registry/raft';
import { bytes, text, waitFor } from './cluster-harness';

class WaitingFsm implements StateMachine {
  items: string[] = [];
  offers: string[] = [];
  release: () => void = () => undefined;
  private ready = false;
  private readonly until = new Promise<void>((resolve) => (this.release = resolve));

  apply(_index: number, data: Uint8Array): unknown {
    const item = text(data);
    this.offers.push(item);
    if (item === 'wait' && !this.ready) {
      this.ready = true;
      return new NotReady(this.until);
    }
    this.items.push(item);
    return `applied ${item}`;
  }

  snapshot(): Uint8Array {
    return bytes(JSON.stringify(this.items));
  }

  restore(data: Uint8Array, _meta: SnapshotMeta): void {
    this.items = JSON.parse(text(data));
  }
}

let node: RaftNode | undefined;
afterEach(async () => {
  await node?.stop();
  node = undefined;
});

test('an entry the state machine is not ready for waits, and nothing after it is applied first', async () => {
  const fsm = new WaitingFsm();
  node = await RaftNode.create({ id: 'n1', tickMs: 20, storage: new MemoryStorage(), transport: new InMemoryNetwork().transport('n1:1'), fsm });
  await node.bootstrap([{ id: 'n1', address: 'n1:1' }]);
  node.start();
  await waitFor(() => node!.leaderReady(), 10_000, 'a leader');
  const answers = ['before', 'wait', 'after'].map((item) => node!.propose(bytes(item)));
  await expect(answers[0]).resolves.toBe('applied before');
  await new Promise((r) => setTimeout(r, 300));
  // Offered once and refused; the entry behind it not even offered.
  expect(fsm.offers).toEqual(['before', 'wait']);
  expect(fsm.items).toEqual(['before']);
  expect(node.appliedIndex()).toBeLessThan(node.commitIndex());
  fsm.release();
  await expect(answers[1]).resolves.toBe('applied wait');
  await expect(answers[2]).resolves.toBe('applied after');
  expect(fsm.items).toEqual(['before', 'wait', 'after']);
  expect(fsm.offers).toEqual(['before', 'wait', 'wait', 'after']);
});
