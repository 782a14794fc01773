import { estimatedRtt } from '@registry/store';
import { coord, Driver } from './support/driver';

describe('coordinates', () => {
  test('coordinate.update stores coordinates only for known nodes', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1' });
    expect(d.coordinates([{ Node: 'N1', Coord: coord([1, 2]) }, { Node: 'ghost', Coord: coord([3]) }])).toBe(true);
    expect(d.store.coordinate('n1')).toEqual(coord([1, 2]));
    expect(d.store.coordinate('ghost')).toBeUndefined();
    expect(d.store.coordinateNodes().value).toEqual([{ Node: 'n1', Segment: '', Coord: coord([1, 2]) }]);
    expect(d.store.coordinateNodes().index).toBe(2);
  });

  test('a malformed coordinate refuses the whole batch', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1' });
    d.register({ Node: 'n2', Address: '2' });
    const bad = { Vec: [1, Number.NaN], Error: 1, Adjustment: 0, Height: 0 };
    expect(String(d.coordinates([{ Node: 'n1', Coord: coord([1]) }, { Node: 'n2', Coord: bad }]))).toContain('Invalid coordinate for node "n2"');
    expect(d.store.coordinate('n1')).toBeUndefined();
  });

  test('an unchanged coordinate does not move the coordinates index', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1' });
    d.coordinates([{ Node: 'n1', Coord: coord([1]) }]);
    d.coordinates([{ Node: 'n1', Coord: coord([1]) }]);
    expect(d.store.keyIndex('coordinates')).toBe(2);
  });

  test('estimated RTT is the Euclidean distance plus heights, adjusted when that stays positive', () => {
    expect(estimatedRtt(coord([0, 0]), coord([3, 4]))).toBeCloseTo(5);
    expect(estimatedRtt(coord([0], 0.5), coord([3, 4], 0.25))).toBeCloseTo(5.75);
    expect(estimatedRtt(coord([0], 0, 1), coord([3, 4], 0, -0.5))).toBeCloseTo(5.5);
    expect(estimatedRtt(coord([0], 0, -10), coord([3, 4]))).toBeCloseTo(5);
    expect(estimatedRtt({ Vec: [0, 0], Error: 0, Adjustment: 0, Height: 0 }, coord([0]))).toBeUndefined();
  });

  test('sortByDistance orders by RTT from a node, stably, with uncoordinated nodes last', () => {
    const d = new Driver();
    for (const n of ['me', 'far', 'near', 'none', 'mid', 'mid2']) d.register({ Node: n, Address: n });
    d.coordinates([
      { Node: 'me', Coord: coord([0]) },
      { Node: 'far', Coord: coord([0.9]) },
      { Node: 'near', Coord: coord([0.1]) },
      { Node: 'mid', Coord: coord([0.5]) },
      { Node: 'mid2', Coord: coord([-0.5]) },
    ]);
    const items = ['none', 'far', 'mid2', 'near', 'mid', 'me'];
    expect(d.store.sortByDistance('me', items, (x) => x)).toEqual(['me', 'near', 'mid2', 'mid', 'far', 'none']);
    expect(d.store.sortByDistance('none', items, (x) => x)).toEqual(items);
    const nodes = d.store.catalogNodes({}).value;
    expect(d.store.sortByDistance('ME', nodes, (n) => n.Node).map((n) => n.Node)).toEqual(['me', 'near', 'mid', 'mid2', 'far', 'none']);
  });
});
