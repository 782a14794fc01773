// The first build of a large listing runs in steps (catalog/listing-steps.ts, issue #16): a reader
// that can wait (Store.tryRead) gets { pending } and reads again when the one build is
// done; writes landing between two steps are followed afterwards. Whatever is written meanwhile,
// the answer then equals what a store built from scratch with the same writes answers, byte for
// byte, and a reader that cannot wait gets the same answer by finishing the build at once.
import { kvEntryOut, Store, type Command } from '@registry/store';
import { buildWithWritesBetweenSteps, lane, LoggedStore, readWaiting, tryDeferred, type Read } from './support/listing-steps';

const pad = (i: number) => String(i).padStart(5, '0');

function registerNode(i: number, status: string, output: string): Command {
  return {
    type: 'catalog.register',
    req: {
      Node: `Node-${pad(i)}`,
      Address: `10.0.${i >> 8}.${i & 255}`,
      NodeMeta: { rack: `r${i % 7}` },
      Service: { ID: `web-${i % 3}`, Service: 'web', Port: 8000 + (i % 50), Tags: ['v1'] },
      Check: { CheckID: `web-alive-${i % 3}`, Name: 'web alive', Status: status, ServiceID: `web-${i % 3}`, Output: output },
    },
  };
}

/** A second instance of `web` on the same node (so a node holds rows next to each other). */
function registerSecond(i: number): Command {
  return { type: 'catalog.register', req: { Node: `Node-${pad(i)}`, SkipNodeUpdate: true, Service: { ID: `web-z${i}`, Service: 'web', Port: 9000, Tags: ['v1'] } } };
}

const deregisterNode = (i: number): Command => ({ type: 'catalog.deregister', req: { Node: `Node-${pad(i)}` } });
const kvSet = (key: string, value: string): Command => ({ type: 'kv.apply', op: { Verb: 'set', Key: key, Value: Buffer.from(value), Flags: 0 } });
const kvDel = (key: string): Command => ({ type: 'kv.apply', op: { Verb: 'delete', Key: key } });

class Fixture extends LoggedStore {
  constructor(
    seed: number,
    readonly size: number,
  ) {
    super(seed);
    for (let i = 0; i < size; i++) {
      this.apply(registerNode(i, 'passing', 'ok'));
      if (i % 5 === 0) this.apply(registerSecond(i));
      this.apply(kvSet(`app/${pad(i)}`, `v${i}`));
    }
    for (let i = 0; i < 30; i++) this.apply(kvSet(`apps/${i}`, 'beside the prefix'));
  }

  /** A few random writes: nodes come, go and change health; keys are written and deleted. */
  writeSome(): void {
    for (let k = this.rand(4); k >= 0; k--) {
      const i = this.rand(this.size + this.size / 10);
      switch (this.rand(6)) {
        case 0:
          this.apply(deregisterNode(i));
          break;
        case 1:
          this.apply(registerSecond(i));
          break;
        case 2:
          this.apply(kvDel(`app/${pad(i)}`));
          break;
        case 3:
          this.apply(kvSet(`app/${pad(i)}`, `w${this.rand(1000)}`));
          break;
        default:
          this.apply(registerNode(i, ['passing', 'warning', 'critical'][this.rand(3)], `out ${this.rand(1000)}`));
      }
    }
  }
}

const READS: Record<string, Read> = {
  nodes: (s) => s.catalogNodes(),
  health: (s) => s.healthService('web'),
  kv: (s) => s.kvRecurse('app/'),
};

describe.each(Object.keys(READS))('the first build of the %s listing, in steps', (kind) => {
  const read = READS[kind];

  test.each([1, 2, 3, 4, 5, 6])('writes between its steps (seed %i): the answer equals a from-scratch build', async (seed) => {
    const size = 2500;
    const f = new Fixture(seed, size);
    const { value, steps } = await buildWithWritesBetweenSteps(f, read);
    expect(steps).toBeGreaterThan(3);
    // The listing then follows writes as before.
    expect(JSON.stringify(value)).toBe(JSON.stringify(read(f.fromScratch())));
    f.writeSome();
    f.writeSome();
    expect(JSON.stringify(read(f.store))).toBe(JSON.stringify(read(f.fromScratch())));
  });
});

test.each(Object.keys(READS))('thousands of writes between two steps of a %s build (more than a listing follows): built again, still exact', async (kind) => {
  const read = READS[kind];
  const size = 1500;
  const f = new Fixture(41, size);
  const first = tryDeferred(f.store, read);
  expect('pending' in first).toBe(true);
  await lane.grant();
  // More changes than a listing follows one by one (512 changed nodes or keys), and for the nodes
  // more than the catalog's journal remembers (4,096): the listing must build again.
  for (let i = 0; i < 5000; i++) f.apply(i % 2 ? kvSet(`app/${pad(i % size)}`, `flood ${i}`) : registerNode(i % size, 'warning', `flood ${i}`));
  let rebuilt = false;
  let value: unknown;
  for (let attempt = 0; attempt < 5 && value === undefined; attempt++) {
    const again = tryDeferred(f.store, read);
    if ('value' in again) value = again.value;
    else {
      if (attempt > 0) rebuilt = true;
      let done = false;
      void again.pending.then(() => (done = true));
      while (!done) await lane.grant();
    }
  }
  expect(rebuilt).toBe(true);
  expect(JSON.stringify(value)).toBe(JSON.stringify(read(f.fromScratch())));
});

test('the answers of a build in steps equal independent orderings (sort by name; the tag-filtered path; a fresh walk)', async () => {
  const size = 2000;
  const f = new Fixture(11, size);
  const nodes = (await buildWithWritesBetweenSteps(f, READS.nodes)).value as ReturnType<Store['catalogNodes']>;
  const names = f.store.catalogNodes({ nodeMeta: {} }).value.map((n) => n.Node);
  expect(nodes.value.map((n) => n.Node)).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
  const health = (await buildWithWritesBetweenSteps(f, READS.health)).value as ReturnType<Store['healthService']>;
  // Every instance is tagged v1: the tag-filtered read takes the path that selects and sorts anew.
  expect(JSON.stringify(health)).toBe(JSON.stringify(f.store.healthService('web', { tags: ['v1'] })));
  const kv = (await buildWithWritesBetweenSteps(f, READS.kv)).value as ReturnType<Store['kvRecurse']>;
  const fresh = f.store.kvList('app/');
  expect(kv.value).toEqual(fresh.value.map((e) => kvEntryOut(e)));
  expect(kv.index).toBe(fresh.index);
});

test('readers of a listing being built wait for the one build; a reader that cannot wait finishes it at once', async () => {
  const f = new Fixture(21, 3000);
  const a = tryDeferred(f.store, READS.health);
  const b = tryDeferred(f.store, READS.health);
  expect('pending' in a && 'pending' in b).toBe(true);
  if (!('pending' in a) || !('pending' in b)) return;
  expect(b.pending).toBe(a.pending);
  const before = lane.steps;
  await lane.grant();
  await lane.grant();
  expect(lane.steps).toBe(before + 2);
  f.writeSome();
  // Not through tryRead: the rest of the build runs now, and the writes are followed.
  const direct = JSON.stringify(READS.health(f.store));
  expect(direct).toBe(JSON.stringify(READS.health(f.fromScratch())));
  let settled = false;
  void a.pending.then(() => (settled = true));
  await Promise.resolve();
  await Promise.resolve();
  expect(settled).toBe(true);
  // The lane's turn the build was waiting for finds it done and takes no step.
  await lane.grant();
  expect(lane.steps).toBe(before + 3);
  expect(JSON.stringify(readWaiting(f.store, READS.health))).toBe(direct);
});

test('a small listing answers at once to a read that can wait (nothing pending below 1,000 rows)', () => {
  const f = new Fixture(31, 300);
  for (const read of Object.values(READS)) expect('value' in tryDeferred(f.store, read)).toBe(true);
});
