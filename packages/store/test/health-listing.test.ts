// A service's health entries are kept between reads (catalog/health-listing.ts), following the
// table's journal of changed nodes: whatever happens between two reads, the answer equals a fresh
// selection. The fresh one here is the tag-filtered read (every instance carries tag `t`), which
// selects and shapes the instances anew instead of reading the kept listing.
import { Store, type Command } from '@registry/store';

const register = (node: string, service: string, id: string, status: string): Command => ({
  type: 'catalog.register',
  req: {
    Node: node,
    Address: '10.0.0.1',
    Service: { ID: id, Service: service, Port: 80, Tags: ['t'] },
    Check: { CheckID: `${id}-alive`, Name: 'alive', Status: status, ServiceID: id },
  },
});
const nodeCheck = (node: string, status: string): Command => ({
  type: 'catalog.register',
  req: { Node: node, Address: '10.0.0.2', Check: { CheckID: 'serfHealth', Name: 'Serf', Status: status } },
});
const deregisterNode = (node: string): Command => ({ type: 'catalog.deregister', req: { Node: node } });
const deregisterService = (node: string, id: string): Command => ({ type: 'catalog.deregister', req: { Node: node, ServiceID: id } });

function expectFresh(s: Store): void {
  const kept = s.healthService('web').value;
  expect(kept).toEqual(s.healthService('web', { tags: ['t'] }).value);
}

test('random instances, checks and nodes changing between reads: the kept answer always equals a fresh one', () => {
  const s = new Store();
  let seed = 11;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  let index = 0;
  const statuses = ['passing', 'warning', 'critical'];
  for (let round = 0; round < 300; round++) {
    for (let k = rand(8); k >= 0; k--) {
      const node = `n${rand(30)}`;
      switch (rand(6)) {
        case 0:
          s.apply(++index, deregisterNode(node));
          break;
        case 1:
          s.apply(++index, deregisterService(node, `web-${rand(2)}`));
          break;
        case 2:
          s.apply(++index, nodeCheck(node, statuses[rand(3)]));
          break;
        case 3:
          // The same instance ID moves to another service, and back later.
          s.apply(++index, register(node, rand(2) ? 'web' : 'api', `web-${rand(2)}`, statuses[rand(3)]));
          break;
        default:
          s.apply(++index, register(node, 'web', `web-${rand(2)}`, statuses[rand(3)]));
      }
    }
    expectFresh(s);
  }
  expect(s.healthService('web').value.length).toBeGreaterThan(0);
});

test('thousands of changes between two reads (more than the journal holds) still give exactly the table', () => {
  const s = new Store();
  let index = 0;
  for (let n = 0; n < 200; n++) s.apply(++index, register(`n${n}`, 'web', 'web-1', 'passing'));
  expectFresh(s);
  expect(s.catalogNodes().value).toHaveLength(200);
  for (let round = 0; round < 5000; round++) s.apply(++index, nodeCheck(`n${round % 250}`, round % 2 ? 'passing' : 'critical'));
  for (let n = 0; n < 200; n += 7) s.apply(++index, deregisterNode(`n${n}`));
  expectFresh(s);
  const names = s.catalogNodes().value.map((n) => n.Node);
  expect(names).toEqual([...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
  expect(names).toHaveLength(250 - Math.ceil(200 / 7));
});
