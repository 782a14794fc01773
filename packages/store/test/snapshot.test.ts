import { Store } from '@registry/store';
import { coord, Driver, NODE_ID_A } from './support/driver';

function populated(): Driver {
  const d = new Driver('dc2');
  d.register({
    Node: 'n1', Address: '1', ID: NODE_ID_A, TaggedAddresses: { wan: 'w' }, NodeMeta: { env: 'prod' },
    Service: { ID: 'web-1', Service: 'web', Tags: ['a'], Meta: { v: '1' }, Port: 80, Weights: { Passing: 3, Warning: 2 } },
    Checks: [{ Name: 'serf', Status: 'passing' }, { Name: 'web-ok', ServiceID: 'web-1', Definition: { HTTP: 'http://x', Interval: '10s' } }],
  });
  d.register({ Node: 'n2', Address: '2', Service: { Kind: 'connect-proxy', Service: 'web-proxy', Port: 2, Proxy: { DestinationServiceName: 'web', Upstreams: [{ DestinationName: 'db', LocalBindPort: 9 }] } } });
  d.register({ Node: 'n3', Address: '3', Service: { Service: 'gone' } });
  d.deregister({ Node: 'n3', ServiceID: 'gone' });
  d.coordinates([{ Node: 'n1', Coord: coord([0.1]) }, { Node: 'n2', Coord: coord([0.2]) }]);
  return d;
}

function everyRead(s: Store): unknown {
  return {
    last: s.lastIndex,
    nodes: s.catalogNodes({}),
    services: s.catalogServices({}),
    web: s.catalogService('web', {}),
    webConnect: s.healthService('web', { connect: true }),
    health: s.healthService('web', {}),
    gone: s.catalogService('gone', {}),
    node: s.catalogNode('n1'),
    nodeChecks: s.healthNode(NODE_ID_A),
    checks: s.healthChecks('web', {}),
    state: s.healthState('any', {}),
    coords: s.coordinateNodes(),
    keys: ['nodes', 'services', 'checks', 'coordinates', 'node:n1', 'service:web', 'connect:web', 'service:gone'].map((k) => s.keyIndex(k)),
  };
}

describe('snapshot and restore', () => {
  test('restore(snapshot()) yields a store that answers every read the same way', () => {
    const d = populated();
    const copy = new Store({ datacenter: 'dc2' });
    copy.restore(d.store.snapshot());
    expect(everyRead(copy)).toEqual(everyRead(d.store));
    expect(Buffer.from(copy.snapshot()).equals(Buffer.from(d.store.snapshot()))).toBe(true);
    expect(copy.checkInvariants()).toEqual([]);
  });

  test('a restored store keeps applying from the snapshot’s index with its indexes intact', () => {
    const d = populated();
    const copy = new Store({ datacenter: 'dc2' });
    copy.restore(d.store.snapshot());
    const next = d.store.lastIndex + 1;
    const cmd = { type: 'catalog.register', req: { Node: 'n1', Address: '1.1', ID: NODE_ID_A } } as const;
    expect(copy.apply(next, cmd)).toBe(true);
    expect(d.store.apply(next, cmd)).toBe(true);
    expect(everyRead(copy)).toEqual(everyRead(d.store));
  });

  test('restore replaces the state: indexes may move backwards', () => {
    const early = new Driver();
    early.register({ Node: 'n1', Address: '1' });
    const snap = early.store.snapshot();
    const d = populated();
    d.store.restore(snap);
    expect(d.store.lastIndex).toBe(1);
    expect(d.store.catalogNodes({}).value.map((n) => n.Node)).toEqual(['n1']);
    expect(d.store.catalogService('web', {}).value).toEqual([]);
    expect(d.store.coordinate('n1')).toBeUndefined();
  });

  test('garbage is refused and the store is left as it was', () => {
    const d = populated();
    const before = everyRead(d.store);
    expect(() => d.store.restore(new Uint8Array([1, 2, 3]))).toThrow(/snapshot/);
    expect(everyRead(d.store)).toEqual(before);
  });
});
