import { Driver } from './support/driver';

function twoServices(): Driver {
  const d = new Driver();
  d.register({ Node: 'n1', Address: '1', Service: { Service: 'web' }, Check: { Name: 'web-ok', ServiceID: 'web', Status: 'passing' } }); // 1
  d.register({ Node: 'n2', Address: '2', Service: { Service: 'db' } }); // 2
  return d;
}

describe('per-key indexes', () => {
  test('a write to db does not move web’s index, and a write to web does', () => {
    const d = twoServices();
    expect(d.store.healthService('web', {}).index).toBe(1);
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'db', Port: 5432 } }); // 3
    expect(d.store.healthService('web', {}).index).toBe(1);
    expect(d.store.catalogService('web', {}).index).toBe(1);
    expect(d.store.healthService('db', {}).index).toBe(3);
    expect(d.store.catalogServices({}).index).toBe(3);
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 80 } }); // 4
    expect(d.store.healthService('web', {}).index).toBe(4);
  });

  test('reads declare the keys they depend on', () => {
    const d = twoServices();
    expect(d.store.catalogNodes({}).keys).toEqual(['nodes']);
    expect(d.store.catalogServices({}).keys).toEqual(['services']);
    expect(d.store.catalogService('Web', {}).keys).toEqual(['service:web']);
    expect(d.store.healthService('web', { connect: true }).keys).toEqual(['connect:web']);
    expect(d.store.catalogNode('N1').keys).toEqual(['node:n1']);
    expect(d.store.healthNode('n1').keys).toEqual(['node:n1']);
    expect(d.store.healthChecks('web', {}).keys).toEqual(['service:web']);
    expect(d.store.healthState('any', {}).keys).toEqual(['checks']);
  });

  test('a node change moves the index of every service on that node, and only those', () => {
    const d = twoServices();
    d.register({ Node: 'n1', Address: '1.1' }); // 3
    expect(d.store.healthService('web', {}).index).toBe(3);
    expect(d.store.healthService('db', {}).index).toBe(2);
    expect(d.store.catalogNodes({}).index).toBe(3);
    expect(d.store.catalogServices({}).index).toBe(2);
  });

  test('a node-level check moves every service on its node; a service check moves only its service', () => {
    const d = twoServices();
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'cache' } }); // 3
    d.register({ Node: 'n2', Address: '2', Check: { Name: 'serfHealth', Status: 'passing' } }); // 4
    expect([d.store.healthService('db', {}).index, d.store.healthService('cache', {}).index, d.store.healthService('web', {}).index]).toEqual([4, 4, 1]);
    d.register({ Node: 'n2', Address: '2', Check: { Name: 'db-ok', ServiceID: 'db' } }); // 5
    expect([d.store.healthService('db', {}).index, d.store.healthService('cache', {}).index]).toEqual([5, 4]);
    expect(d.store.healthState('any', {}).index).toBe(5);
    expect(d.store.healthNode('n2').index).toBe(5);
    expect(d.store.healthNode('n1').index).toBe(1);
  });

  test('a proxy change moves the connect index of its destination, not the plain service index', () => {
    const d = twoServices();
    d.register({ Node: 'n1', Address: '1', Service: { Kind: 'connect-proxy', Service: 'web-proxy', Port: 2, Proxy: { DestinationServiceName: 'web' } } }); // 3
    expect(d.store.catalogService('web', { connect: true }).index).toBe(3);
    expect(d.store.catalogService('web', {}).index).toBe(1);
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'db', Connect: { Native: true } } }); // 4
    expect(d.store.catalogService('db', { connect: true }).index).toBe(4);
    expect(d.store.catalogService('web', { connect: true }).index).toBe(3);
  });

  test('a service that never existed reads the services table index, which is never 0 after a write', () => {
    const d = twoServices();
    expect(d.store.catalogService('ghost', {}).index).toBe(2);
    expect(d.store.catalogNode('ghost').index).toBe(2);
    expect(new Driver().store.catalogService('ghost', {}).index).toBe(0);
  });

  test('a deleted service’s index does not go backwards', () => {
    const d = twoServices();
    d.register({ Node: 'n1', Address: '1', Check: { Name: 'web-ok', ServiceID: 'web', Status: 'critical' } }); // 3
    d.deregister({ Node: 'n1', ServiceID: 'web' }); // 4
    expect(d.store.healthService('web', {}).index).toBe(4);
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'other' } }); // 5
    expect(d.store.healthService('web', {}).index).toBeGreaterThanOrEqual(4);
  });

  test('refused commands move lastIndex but no watch key', () => {
    const d = twoServices();
    d.register({ Node: '', Address: '' }); // 3
    expect(d.store.lastIndex).toBe(3);
    expect(d.store.catalogNodes({}).index).toBe(2);
  });

  test('an index at or below lastIndex is refused without applying', () => {
    const d = twoServices();
    const result = d.store.apply(2, { type: 'catalog.register', req: { Node: 'n9', Address: '9' } });
    expect(String(result)).toContain('not after the last applied index 2');
    expect(d.store.catalogNode('n9').value).toBeNull();
  });
});

describe('watches', () => {
  test('a write fires exactly the watchers of the keys it changed, once, after the state is updated', () => {
    const d = twoServices();
    const seen: string[] = [];
    const web = d.store.healthService('web', {});
    const db = d.store.healthService('db', {});
    d.store.watch(web.keys, () => seen.push(`web@${d.store.healthService('web', {}).index}`));
    d.store.watch(db.keys, () => seen.push('db'));
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 1 } }); // 3
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 2 } }); // 4: the web watcher was one-shot
    expect(seen).toEqual(['web@3']);
  });

  test('cancel stops a watcher from firing', () => {
    const d = twoServices();
    const fired = jest.fn();
    const cancel = d.store.watch(['service:web'], fired);
    cancel();
    cancel();
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 9 } });
    expect(fired).not.toHaveBeenCalled();
    expect(d.store.watcherCount).toBe(0);
  });

  test('a watcher on several keys fires once when several of them change together', () => {
    const d = twoServices();
    const fired = jest.fn();
    d.store.watch(['nodes', 'node:n1', 'service:web'], fired);
    d.register({ Node: 'n1', Address: 'changed' });
    expect(fired).toHaveBeenCalledTimes(1);
  });

  test('a throwing watcher does not stop the apply or the other watchers; its error is reported', () => {
    const errors: unknown[] = [];
    const d = new Driver(undefined, { onWatcherError: (e) => errors.push(e) });
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web' } });
    const other = jest.fn();
    d.store.watch(['service:web'], () => {
      throw new Error('boom');
    });
    d.store.watch(['service:web'], other);
    expect(d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 7 } })).toBe(true);
    expect(other).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([new Error('boom')]);
    expect(d.store.catalogService('web', {}).value[0]!.ServicePort).toBe(7);
  });

  test('10,000 watchers on 1,000 services: a write wakes only the 10 watching its service, quickly', () => {
    const d = new Driver();
    for (let i = 0; i < 1000; i++) d.register({ Node: `n${i % 50}`, Address: 'a', Service: { ID: `s${i}`, Service: `svc${i}` } });
    const fired = new Array<number>(1000).fill(0);
    for (let i = 0; i < 1000; i++) {
      const { keys } = d.store.healthService(`svc${i}`, {});
      for (let j = 0; j < 10; j++) d.store.watch(keys, () => fired[i]!++);
    }
    expect(d.store.watcherCount).toBe(10_000);
    const started = performance.now();
    for (let k = 0; k < 100; k++) d.register({ Node: 'n7', Address: 'a', Service: { ID: 's7', Service: 'svc7', Port: k + 1 } });
    const perWrite = (performance.now() - started) / 100;
    expect(fired[7]).toBe(10);
    expect(fired.reduce((a, b) => a + b, 0)).toBe(10);
    expect(d.store.watcherCount).toBe(9_990);
    expect(perWrite).toBeLessThan(5);
  });

  test('restore wakes every watcher', () => {
    const d = twoServices();
    const snap = d.store.snapshot();
    const fired = jest.fn();
    d.store.watch(['service:web'], fired);
    d.store.watch(['coordinates'], fired);
    d.store.watch([], fired);
    d.store.restore(snap);
    expect(fired).toHaveBeenCalledTimes(3);
  });
});
