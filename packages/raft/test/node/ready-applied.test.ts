// A leader serves reads once it has committed its no-op *and applied it* (node leaderReady()).
// Entries of earlier terms that it learns are committed only when its no-op commits (a restarted
// server's log past its stored commit, or a follower that never heard the old leader's commit) are
// applied in the Ready after that commit; before, leaderReady() was already true in between, and a
// read on a leader restarted in a stream of writes missed writes it had acknowledged before the
// restart (crash-restart.test, a loaded run).
import { InMemoryNetwork, MemoryStorage, RaftNode, type Message, type Transport } from '@registry/raft';
import { bytes, ListFsm, waitFor } from './cluster-harness';

/** A state machine whose apply takes ~1 ms of CPU, so that applying a batch spans many slices. */
class SlowFsm extends ListFsm {
  override apply(index: number, data: Uint8Array): unknown {
    const until = performance.now() + 1;
    while (performance.now() < until);
    return super.apply(index, data);
  }
}

/** Drops what `silenced()` says of the messages `inner` sends. */
function filtered(inner: Transport, silenced: (m: Message) => boolean): Transport {
  return {
    get address() {
      return inner.address;
    },
    send: (to, m) => {
      if (!silenced(m)) inner.send(to, m);
    },
    onMessage: (h) => inner.onMessage(h),
    call: (address, method, body, timeoutMs, options) => inner.call(address, method, body, timeoutMs, options),
    handle: (method, h) => inner.handle(method, h),
    close: () => inner.close(),
  };
}

let nodes: RaftNode[] = [];
afterEach(async () => {
  for (const n of nodes) await n.stop();
  nodes = [];
});

test('a new leader is ready only once it has applied what it learned was committed from its no-op', async () => {
  const network = new InMemoryNetwork();
  const fsms = [1, 2, 3].map(() => new SlowFsm());
  const ids = ['n1', 'n2', 'n3'];
  // Once set, the old leader's news of its commit index (commit-only appends, heartbeats) is lost.
  let quiet: string | null = null;
  const isCommitNews = (m: Message) => m.type === 'heartbeat' || (m.type === 'append' && m.entries.length === 0);
  const transports = ids.map((id) => filtered(network.transport(`${id}:1`), (m) => quiet === id && isCommitNews(m)));
  for (let i = 0; i < 3; i++) nodes.push(await RaftNode.create({ id: ids[i], storage: new MemoryStorage(), transport: transports[i], fsm: fsms[i], tickMs: 20 }));
  const config = nodes.map((n, i) => ({ id: n.id, address: transports[i].address }));
  await Promise.all(nodes.map((n) => n.bootstrap(config)));
  nodes.forEach((n) => n.start());
  await waitFor(() => nodes.some((n) => n.leaderReady()), 10_000, 'a leader');
  const first = nodes.findIndex((n) => n.leaderReady());
  const others = [0, 1, 2].filter((i) => i !== first);

  // A batch that the followers store and acknowledge, committed at the leader, which stops before
  // they hear that it is: they learn it from the next leader's no-op.
  quiet = ids[first];
  const batch = Array.from({ length: 100 }, (_, i) => `w${String(i).padStart(3, '0')}`);
  const last = nodes[first].lastIndex() + batch.length;
  const proposals = batch.map((v) => nodes[first].propose(bytes(v)).catch(() => undefined));
  await waitFor(() => nodes[first].commitIndex() >= last, 10_000, 'the batch committed at the leader');
  network.isolate(`${ids[first]}:1`);
  await nodes[first].stop();
  await Promise.all(proposals);
  expect(others.every((i) => nodes[i].lastIndex() >= last && nodes[i].commitIndex() < last)).toBe(true);

  // Every turn of the loop: the moment a leader is ready, it has applied the whole batch.
  let seen: number | undefined;
  const deadline = Date.now() + 15_000;
  while (seen === undefined && Date.now() < deadline) {
    const ready = others.find((i) => nodes[i].leaderReady());
    if (ready !== undefined) seen = fsms[ready].items.filter((x) => batch.includes(x)).length;
    else await new Promise((r) => setImmediate(r));
  }
  expect(seen).toBe(batch.length);
});
