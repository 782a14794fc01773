import { CommandError } from '@registry/store';
import { coord, Driver } from './support/driver';

function seeded(): Driver {
  const d = new Driver();
  d.register({
    Node: 'n1', Address: 'a', Service: { ID: 'web-1', Service: 'web' },
    Checks: [{ Name: 'node-ok' }, { Name: 'web-ok', ServiceID: 'web-1' }],
  });
  d.register({ Node: 'n1', Address: 'a', Service: { Service: 'db' } });
  return d;
}

describe('catalog.deregister', () => {
  test('ServiceID removes that service and its checks, and wins over CheckID', () => {
    const d = seeded();
    expect(d.deregister({ Node: 'n1', ServiceID: 'WEB-1', CheckID: 'node-ok' })).toBe(true);
    expect(d.store.catalogService('web', {}).value).toEqual([]);
    expect(d.store.healthNode('n1').value.map((c) => c.CheckID)).toEqual(['node-ok']);
    expect(d.store.catalogService('db', {}).value).toHaveLength(1);
  });

  test('CheckID alone removes only that check', () => {
    const d = seeded();
    expect(d.deregister({ Node: 'n1', CheckID: 'web-ok' })).toBe(true);
    expect(d.store.healthNode('n1').value.map((c) => c.CheckID)).toEqual(['node-ok']);
    expect(d.store.catalogService('web', {}).value).toHaveLength(1);
  });

  test('Node alone removes the node with its services, checks and coordinate', () => {
    const d = seeded();
    d.coordinates([{ Node: 'n1', Coord: coord([1]) }]);
    expect(d.deregister({ Node: 'N1' })).toBe(true);
    expect(d.store.catalogNodes({}).value).toEqual([]);
    expect(d.store.catalogServices({}).value).toEqual({});
    expect(d.store.healthState('any', {}).value).toEqual([]);
    expect(d.store.coordinate('n1')).toBeUndefined();
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('unknown nodes, services and checks still answer true and change nothing', () => {
    const d = seeded();
    const fired = jest.fn();
    d.store.watch(['nodes', 'services', 'checks', 'node:n1'], fired);
    expect(d.deregister({ Node: 'n1', ServiceID: 'nope' })).toBe(true);
    expect(d.deregister({ Node: 'n1', CheckID: 'nope' })).toBe(true);
    expect(d.deregister({ Node: 'ghost' })).toBe(true);
    expect(fired).not.toHaveBeenCalled();
  });

  test('a missing node name is refused', () => {
    const d = seeded();
    expect(d.deregister({ Node: '' })).toEqual(new CommandError('Must provide node'));
  });
});
