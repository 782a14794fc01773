// GET /v1/catalog/nodes is kept sorted between reads (catalog/node-listing.ts): whatever happens
// between two reads, the listing equals the table.
import { Store, type Command } from '@registry/store';

const register = (node: string): Command => ({ type: 'catalog.register', req: { Node: node, Address: '10.0.0.1' } });
const deregister = (node: string): Command => ({ type: 'catalog.deregister', req: { Node: node } });
const names = (s: Store) => s.catalogNodes().value.map((n) => n.Node);

test('a node registered and deregistered between two reads takes no other node with it', () => {
  const s = new Store();
  let i = 0;
  for (const n of ['a', 'c', 'e']) s.apply(++i, register(n));
  expect(names(s)).toEqual(['a', 'c', 'e']);
  s.apply(++i, register('b'));
  s.apply(++i, deregister('b'));
  s.apply(++i, register('d'));
  s.apply(++i, deregister('d'));
  s.apply(++i, register('z'));
  s.apply(++i, deregister('z'));
  expect(names(s)).toEqual(['a', 'c', 'e']);
});

test('random registers and deregisters between reads: the listing always equals a fresh sort', () => {
  const s = new Store();
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const live = new Set<string>();
  let index = 0;
  for (let round = 0; round < 200; round++) {
    for (let k = rand(6); k >= 0; k--) {
      const node = `n${rand(40)}`;
      if (rand(3) === 0) {
        s.apply(++index, deregister(node));
        live.delete(node);
      } else {
        s.apply(++index, register(node));
        live.add(node);
      }
    }
    expect(names(s)).toEqual([...live].sort());
  }
});
