import { Driver } from './support/driver';

describe('catalog reads', () => {
  test('catalogNodes orders by case-folded name and filters on node meta', () => {
    const d = new Driver();
    d.register({ Node: 'b', Address: '2', NodeMeta: { env: 'prod', rack: '1' } });
    d.register({ Node: 'A', Address: '1', NodeMeta: { env: 'dev' } });
    d.register({ Node: 'c', Address: '3', NodeMeta: { env: 'prod' } });
    expect(d.store.catalogNodes({}).value.map((n) => n.Node)).toEqual(['A', 'b', 'c']);
    expect(d.store.catalogNodes({ nodeMeta: { env: 'prod' } }).value.map((n) => n.Node)).toEqual(['b', 'c']);
    expect(d.store.catalogNodes({ nodeMeta: { env: 'prod', rack: '1' } }).value.map((n) => n.Node)).toEqual(['b']);
    expect(d.store.catalogNodes({ nodeMeta: { env: 'PROD' } }).value).toEqual([]);
  });

  test('catalogServices unions and deduplicates tags per service, [] for untagged ones', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1', NodeMeta: { env: 'prod' }, Service: { ID: 'w1', Service: 'web', Tags: ['a', 'b'] } });
    d.register({ Node: 'n2', Address: '2', Service: { ID: 'w2', Service: 'web', Tags: ['b', 'c'] } });
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'db' } });
    const all = d.store.catalogServices({}).value;
    expect(Object.keys(all).sort()).toEqual(['db', 'web']);
    expect(all.db).toEqual([]);
    expect([...all.web!].sort()).toEqual(['a', 'b', 'c']);
    expect(d.store.catalogServices({ nodeMeta: { env: 'prod' } }).value).toEqual({ web: ['a', 'b'] });
  });

  test('catalogService matches names case-insensitively, orders by node then service ID, and ANDs tags ignoring case', () => {
    const d = new Driver();
    d.register({ Node: 'n2', Address: '2', Service: { ID: 'w-b', Service: 'web', Tags: ['v1', 'Blue'] } });
    d.register({ Node: 'n2', Address: '2', Service: { ID: 'w-a', Service: 'web', Tags: ['v1'] } });
    d.register({ Node: 'N1', Address: '1', Service: { ID: 'w-z', Service: 'Web', Tags: ['v2', 'blue'] } });
    const ids = (tags?: string[]) => d.store.catalogService('WEB', tags ? { tags } : {}).value.map((s) => `${s.Node}/${s.ServiceID}`);
    expect(ids()).toEqual(['N1/w-z', 'n2/w-a', 'n2/w-b']);
    expect(ids(['blue'])).toEqual(['N1/w-z', 'n2/w-b']);
    expect(ids(['BLUE', 'v1'])).toEqual(['n2/w-b']);
    expect(ids(['missing'])).toEqual([]);
  });

  test('catalogService filters on the node meta of each instance', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1', NodeMeta: { env: 'prod' }, Service: { Service: 'web' } });
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'web' } });
    expect(d.store.catalogService('web', { nodeMeta: { env: 'prod' } }).value.map((s) => s.Node)).toEqual(['n1']);
  });

  test('catalogNode returns the node with its services by ID, or null when unknown', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1', Service: { ID: 'b', Service: 'web' } });
    d.register({ Node: 'n1', Address: '1', Service: { ID: 'a', Service: 'db', Tags: ['x'] } });
    const out = d.store.catalogNode('N1').value!;
    expect(out.Node.Node).toBe('n1');
    expect(Object.keys(out.Services)).toEqual(['a', 'b']);
    expect(out.Services.a).toMatchObject({ ID: 'a', Service: 'db', Tags: ['x'] });
    expect(d.store.catalogNode('nope').value).toBeNull();
  });

  test('results are fresh copies: mutating them does not change the store', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1', NodeMeta: { k: 'v' }, Service: { Service: 'web', Tags: ['t'], Meta: { m: '1' } } });
    const first = d.store.catalogService('web', {}).value[0]!;
    first.ServiceTags.push('evil');
    first.ServiceMeta.m = 'evil';
    first.NodeMeta!.k = 'evil';
    const again = d.store.catalogService('web', {}).value[0]!;
    expect([again.ServiceTags, again.ServiceMeta, again.NodeMeta]).toEqual([['t'], { m: '1' }, { k: 'v' }]);
  });
});

describe('connect lookups', () => {
  function mesh(): Driver {
    const d = new Driver();
    d.register({ Node: 'n1', Address: '1', Service: { Service: 'web', Port: 80 } });
    d.register({
      Node: 'n1', Address: '1',
      Service: { Kind: 'connect-proxy', ID: 'web-proxy', Service: 'web-sidecar-proxy', Port: 21000, Proxy: { DestinationServiceName: 'Web', DestinationServiceID: 'web', Config: { bind: 1 } } },
    });
    d.register({ Node: 'n2', Address: '2', Service: { Service: 'web', Port: 81, Connect: { Native: true } } });
    d.register({ Node: 'n2', Address: '2', Service: { Kind: 'connect-proxy', Service: 'db-proxy', Port: 21001, Proxy: { DestinationServiceName: 'db' } } });
    return d;
  }

  test('connect=true returns proxies whose destination is the service plus its Connect-native instances', () => {
    const d = mesh();
    const found = d.store.catalogService('web', { connect: true }).value;
    expect(found.map((s) => `${s.Node}/${s.ServiceID}/${s.ServicePort}`)).toEqual(['n1/web-proxy/21000', 'n2/web/81']);
    expect(found[0]!.ServiceProxy).toEqual({ DestinationServiceName: 'Web', DestinationServiceID: 'web', Config: { bind: 1 } });
    expect(d.store.healthService('web', { connect: true }).value.map((e) => e.Service.ID)).toEqual(['web-proxy', 'web']);
  });

  test('a proxy that changes destination moves to the new service’s connect lookup', () => {
    const d = mesh();
    d.register({ Node: 'n2', Address: '2', Service: { Kind: 'connect-proxy', Service: 'db-proxy', Port: 21001, Proxy: { DestinationServiceName: 'web' } } });
    expect(d.store.catalogService('db', { connect: true }).value).toEqual([]);
    expect(d.store.catalogService('web', { connect: true }).value).toHaveLength(3);
  });
});

describe('health reads', () => {
  function cluster(): Driver {
    const d = new Driver();
    d.register({
      Node: 'n2', Address: '2', Service: { Service: 'web', Tags: ['a'] },
      Checks: [{ Name: 'serfHealth', Status: 'passing' }, { CheckID: 'web-z', Name: 'z', ServiceID: 'web', Status: 'passing' }, { CheckID: 'web-a', Name: 'a', ServiceID: 'web', Status: 'passing' }],
    });
    d.register({
      Node: 'n1', Address: '1', NodeMeta: { env: 'prod' }, Service: { Service: 'web' },
      Checks: [{ Name: 'serfHealth', Status: 'warning' }, { Name: 'web-ok', ServiceID: 'web', Status: 'passing' }],
    });
    d.register({
      Node: 'n3', Address: '3', Service: { Service: 'web' },
      Checks: [{ Name: 'serfHealth', Status: 'passing' }, { Name: 'web-bad', ServiceID: 'web', Status: 'critical' }],
    });
    d.register({ Node: 'n4', Address: '4', Service: { Service: 'web' } });
    d.register({ Node: 'n3', Address: '3', Service: { Service: 'db' }, Check: { Name: 'db-ok', ServiceID: 'db', Status: 'passing' } });
    return d;
  }

  test('healthService lists node-level checks first, then the instance’s, each by check ID', () => {
    const d = cluster();
    const entries = d.store.healthService('web', {}).value;
    expect(entries.map((e) => e.Node.Node)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(entries[1]!.Checks.map((c) => c.CheckID)).toEqual(['serfHealth', 'web-a', 'web-z']);
    expect(entries[2]!.Checks.map((c) => c.CheckID)).toEqual(['serfHealth', 'web-bad']);
    expect(entries[3]!.Checks).toEqual([]);
    expect(entries[1]!.Checks[1]).toMatchObject({ ServiceID: 'web', ServiceName: 'web', ServiceTags: ['a'] });
  });

  test('passing drops instances with any non-passing check, node-level checks included', () => {
    const d = cluster();
    // n1's node check warns and n3's service check is critical; n4 has no checks at all.
    expect(d.store.healthService('web', { passing: true }).value.map((e) => e.Node.Node).sort()).toEqual(['n2', 'n4']);
  });

  test('passing reorders survivors the way Consul does (the tail is swapped into each hole)', () => {
    const d = cluster();
    expect(d.store.healthService('web', { passing: true }).value.map((e) => e.Node.Node)).toEqual(['n4', 'n2']);
  });

  test('healthService applies tag and node meta filters', () => {
    const d = cluster();
    expect(d.store.healthService('web', { tags: ['A'] }).value.map((e) => e.Node.Node)).toEqual(['n2']);
    expect(d.store.healthService('web', { nodeMeta: { env: 'prod' } }).value.map((e) => e.Node.Node)).toEqual(['n1']);
  });

  test('healthNode accepts a node name or node ID and orders checks by ID', () => {
    const d = cluster();
    const id = '11111111-2222-3333-4444-555555555555';
    d.register({ Node: 'n5', Address: '5', ID: id, Checks: [{ Name: 'b' }, { Name: 'A' }] });
    expect(d.store.healthNode('n5').value.map((c) => c.CheckID)).toEqual(['A', 'b']);
    expect(d.store.healthNode(id.toUpperCase()).value.map((c) => c.CheckID)).toEqual(['A', 'b']);
    expect(d.store.healthNode('nope').value).toEqual([]);
  });

  test('healthChecks returns the checks of every instance of a service, by node then check ID', () => {
    const d = cluster();
    expect(d.store.healthChecks('web', {}).value.map((c) => `${c.Node}/${c.CheckID}`)).toEqual(['n1/web-ok', 'n2/web-a', 'n2/web-z', 'n3/web-bad']);
    expect(d.store.healthChecks('web', { nodeMeta: { env: 'prod' } }).value.map((c) => c.CheckID)).toEqual(['web-ok']);
    expect(d.store.healthChecks('nope', {}).value).toEqual([]);
  });

  test('healthState matches the status exactly, with any meaning every check', () => {
    const d = cluster();
    expect(d.store.healthState('critical', {}).value.map((c) => `${c.Node}/${c.CheckID}`)).toEqual(['n3/web-bad']);
    expect(d.store.healthState('Passing', {}).value).toEqual([]);
    expect(d.store.healthState('any', {}).value.map((c) => `${c.Node}/${c.CheckID}`)).toEqual([
      'n1/serfHealth', 'n1/web-ok', 'n2/serfHealth', 'n2/web-a', 'n2/web-z', 'n3/db-ok', 'n3/serfHealth', 'n3/web-bad',
    ]);
    expect(d.store.healthState('warning', { nodeMeta: { env: 'prod' } }).value.map((c) => c.CheckID)).toEqual(['serfHealth']);
    expect(d.store.healthState('passing', {}).value.every((c) => Array.isArray(c.ServiceTags))).toBe(true);
  });
});
