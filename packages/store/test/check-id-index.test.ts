// Store.healthChecksWithId (issue #16): the nodes carrying a check of a given ID, found through the
// catalog's check ID index instead of a walk of every node. Under random registrations,
// deregistrations (of nodes, services and checks), check changes, renames of a node's case, and a
// snapshot restore, it answers exactly what walking every node's checks answers.
import { Store, type Command } from '@registry/store';

const IDS = ['serfHealth', 'SerfHealth', 'disk', 'web-alive'];

function walk(store: Store, checkId: string): unknown[] {
  const want = checkId.toLowerCase();
  return store
    .catalogNodes()
    .value.flatMap((n) => store.healthNode(n.Node).value.filter((c) => c.CheckID.toLowerCase() === want));
}

class Random {
  constructor(private seed: number) {}
  next(n: number): number {
    this.seed = (this.seed * 1103515245 + 12345) % 2 ** 31;
    return this.seed % n;
  }
}

function randomWrite(r: Random): Command {
  const node = `node-${r.next(60)}`;
  const nodeName = r.next(8) === 0 ? node.toUpperCase() : node;
  const status = ['passing', 'warning', 'critical'][r.next(3)];
  switch (r.next(7)) {
    case 0:
      return { type: 'catalog.deregister', req: { Node: node } };
    case 1:
      return { type: 'catalog.deregister', req: { Node: node, CheckID: IDS[r.next(IDS.length)] } };
    case 2:
      return { type: 'catalog.deregister', req: { Node: node, ServiceID: 'web' } };
    case 3:
      return {
        type: 'catalog.register',
        req: {
          Node: nodeName,
          Address: `10.0.0.${r.next(250)}`,
          Service: { ID: 'web', Service: 'web', Port: 80, Tags: [] },
          Check: { CheckID: 'web-alive', Name: 'web', Status: status, ServiceID: 'web', Output: `o${r.next(9)}` },
        },
      };
    default:
      return {
        type: 'catalog.register',
        req: {
          Node: nodeName,
          Address: `10.0.0.${r.next(250)}`,
          Check: { CheckID: IDS[r.next(IDS.length)], Name: 'node check', Status: status, ServiceID: '', Output: `o${r.next(9)}` },
        },
      };
  }
}

test.each([1, 2, 3, 4])('equals a walk of every node under random writes and a restore (seed %i)', (seed) => {
  const r = new Random(seed);
  const store = new Store();
  let index = 0;
  for (let round = 0; round < 40; round++) {
    for (let k = 0; k < 25; k++) store.apply(++index, randomWrite(r));
    for (const id of [...IDS, 'SERFHEALTH', 'absent']) {
      expect(store.healthChecksWithId(id).value).toEqual(walk(store, id));
    }
    expect(store.checkInvariants()).toEqual([]);
    if (round % 10 === 9) {
      const restored = new Store();
      restored.restore(store.snapshot());
      for (const id of IDS) expect(restored.healthChecksWithId(id).value).toEqual(walk(store, id));
      expect(restored.checkInvariants()).toEqual([]);
    }
  }
  // The writes did exercise the lookup: some nodes carry the check, some do not.
  expect(store.healthChecksWithId('serfHealth').value.length).toBeGreaterThan(0);
  expect(store.healthChecksWithId('serfHealth').value.length).toBeLessThan(store.catalogNodes().value.length);
});

test('the answer is watched under the checks index: a check write moves it', () => {
  const store = new Store();
  store.apply(1, { type: 'catalog.register', req: { Node: 'a', Address: '10.0.0.1', Check: { CheckID: 'serfHealth', Name: 's', Status: 'passing', ServiceID: '' } } });
  const before = store.healthChecksWithId('serfHealth').index;
  store.apply(2, { type: 'catalog.register', req: { Node: 'b', Address: '10.0.0.2', Check: { CheckID: 'serfHealth', Name: 's', Status: 'critical', ServiceID: '' } } });
  const after = store.healthChecksWithId('serfHealth');
  expect(after.index).toBeGreaterThan(before);
  expect(after.value.map((c) => [c.Node, c.Status])).toEqual([
    ['a', 'passing'],
    ['b', 'critical'],
  ]);
});
