import { CommandError } from '@registry/store';
import { Driver, NODE_ID_A, NODE_ID_B } from './support/driver';

function errorOf(result: unknown): string {
  expect(result).toBeInstanceOf(CommandError);
  return (result as CommandError).message;
}

describe('catalog.register shapes and defaults', () => {
  test('a node, service and check are stored with Consul defaults', () => {
    const d = new Driver('east');
    expect(
      d.register({
        Node: 'n1',
        Address: '10.0.0.1',
        Service: { Service: 'web' },
        Check: { Name: 'web alive', ServiceID: 'web' },
      }),
    ).toBe(true);
    const entry = d.store.healthService('web').value[0]!;
    expect(entry.Node).toEqual({
      ID: '', Node: 'n1', Address: '10.0.0.1', Datacenter: 'east',
      TaggedAddresses: null, Meta: null, CreateIndex: 1, ModifyIndex: 1,
    });
    expect(entry.Service).toEqual({
      ID: 'web', Service: 'web', Tags: [], Address: '', Meta: {}, Port: 0,
      Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, ProxyDestination: '',
      Proxy: {}, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
    });
    expect('Kind' in entry.Service).toBe(false);
    expect(entry.Checks).toEqual([
      {
        Node: 'n1', CheckID: 'web alive', Name: 'web alive', Status: 'critical', Notes: '', Output: '',
        ServiceID: 'web', ServiceName: 'web', ServiceTags: [], Definition: {}, CreateIndex: 1, ModifyIndex: 1,
      },
    ]);
  });

  test('output objects keep Consul field order', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web', Kind: 'connect-proxy', Port: 1, Proxy: { DestinationServiceName: 'db' } } });
    expect(Object.keys(d.store.catalogNodes({}).value[0]!)).toEqual([
      'ID', 'Node', 'Address', 'Datacenter', 'TaggedAddresses', 'Meta', 'CreateIndex', 'ModifyIndex',
    ]);
    expect(Object.keys(d.store.catalogService('web', {}).value[0]!)).toEqual([
      'ID', 'Node', 'Address', 'Datacenter', 'TaggedAddresses', 'NodeMeta', 'ServiceKind', 'ServiceID', 'ServiceName',
      'ServiceTags', 'ServiceAddress', 'ServiceWeights', 'ServiceMeta', 'ServicePort', 'ServiceEnableTagOverride',
      'ServiceProxyDestination', 'ServiceProxy', 'ServiceConnect', 'CreateIndex', 'ModifyIndex',
    ]);
    expect(Object.keys(d.store.catalogNode('n1').value!.Services.web!)).toEqual([
      'Kind', 'ID', 'Service', 'Tags', 'Address', 'Meta', 'Port', 'Weights', 'EnableTagOverride', 'ProxyDestination',
      'Proxy', 'Connect', 'CreateIndex', 'ModifyIndex',
    ]);
  });

  test('the check node defaults to the request node and the store datacenter is stamped on the node', () => {
    const d = new Driver();
    d.register({ Datacenter: 'elsewhere', Node: 'n1', Address: 'a', Checks: [{ CheckID: 'c', Name: 'C', Status: 'passing' }] });
    expect(d.store.healthNode('n1').value.map((c) => [c.Node, c.CheckID, c.Name, c.Status])).toEqual([['n1', 'c', 'C', 'passing']]);
    expect(d.store.catalogNodes({}).value[0]!.Datacenter).toBe('dc1');
  });

  test('the check status is stored as given, even if it is not a known state', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Check: { Name: 'c', Status: 'bogus' } });
    expect(d.store.healthState('bogus', {}).value).toHaveLength(1);
  });

  test('service fields, weights and connect settings are stored and read back', () => {
    const d = new Driver();
    d.register({
      Node: 'n1', Address: 'a', TaggedAddresses: { wan: '1.2.3.4' }, NodeMeta: { env: 'prod' },
      Service: {
        ID: 'web-1', Service: 'web', Tags: ['v1', 'blue'], Address: '10.1.1.1', Meta: { version: '1' }, Port: 8080,
        Weights: { Passing: 5 }, EnableTagOverride: true, Connect: { Native: true },
      },
    });
    const [sn] = d.store.catalogService('web', {}).value;
    expect(sn).toMatchObject({
      TaggedAddresses: { wan: '1.2.3.4' }, NodeMeta: { env: 'prod' }, ServiceID: 'web-1', ServiceTags: ['v1', 'blue'],
      ServiceAddress: '10.1.1.1', ServiceMeta: { version: '1' }, ServicePort: 8080,
      ServiceWeights: { Passing: 5, Warning: 0 }, ServiceEnableTagOverride: true, ServiceConnect: { Native: true },
    });
  });

  test.each([
    [{ Passing: 0, Warning: 1 }],
    [{ Passing: 1, Warning: -1 }],
    [{ Passing: 70000, Warning: 1 }],
    [{ Passing: 2, Warning: 65536 }],
  ])('invalid weights %j are replaced by the default', (Weights) => {
    const d = new Driver();
    expect(d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web', Weights } })).toBe(true);
    expect(d.store.catalogService('web', {}).value[0]!.ServiceWeights).toEqual({ Passing: 1, Warning: 1 });
  });

  test('a connect proxy keeps only the non-empty proxy fields; ProxyDestination duplicates the destination', () => {
    const d = new Driver();
    d.register({
      Node: 'n1', Address: 'a',
      Service: { Kind: 'connect-proxy', Service: 'web-proxy', Port: 21000, Proxy: { DestinationServiceName: 'web', LocalServicePort: 8080, Config: {}, Upstreams: [] } },
    });
    const [sn] = d.store.catalogService('web-proxy', {}).value;
    expect(sn!.ServiceKind).toBe('connect-proxy');
    expect(sn!.ServiceProxy).toEqual({ DestinationServiceName: 'web', LocalServicePort: 8080 });
    expect(sn!.ServiceProxyDestination).toBe('web');
  });

  test('the deprecated ProxyDestination names the destination of a proxy', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { Kind: 'connect-proxy', Service: 'p', Port: 1, ProxyDestination: 'web' } });
    expect(d.store.catalogService('web', { connect: true }).value.map((s) => s.ServiceID)).toEqual(['p']);
  });

  test('check definitions keep non-empty fields and print durations the Go way', () => {
    const d = new Driver();
    d.register({
      Node: 'n1', Address: 'a',
      Check: { Name: 'http', Definition: { HTTP: 'http://x/health', Header: { A: ['1'] }, Method: 'GET', Interval: '10000ms', Timeout: 1_500_000_000, DeregisterCriticalServiceAfter: '90m', TCP: '' } },
    });
    expect(d.store.healthNode('n1').value[0]!.Definition).toEqual({
      HTTP: 'http://x/health', Header: { A: ['1'] }, Method: 'GET', Interval: '10s', Timeout: '1.5s', DeregisterCriticalServiceAfter: '1h30m0s',
    });
  });
});

describe('catalog.register validation', () => {
  test.each([
    ['a missing node', { Node: '', Address: 'a' }, 'Must provide node'],
    ['a missing address', { Node: 'n1' }, 'Must provide address if SkipNodeUpdate is not set'],
    ['a short node ID', { Node: 'n1', Address: 'a', ID: 'abc' }, 'Bad node ID: uuid string is wrong length'],
    ['a misshapen node ID', { Node: 'n1', Address: 'a', ID: '11111111x2222-3333-4444-555555555555' }, 'Bad node ID: uuid is improperly formatted'],
    ['a service ID without name', { Node: 'n1', Address: 'a', Service: { ID: 'x' } }, 'Must provide service name with ID'],
    ['an unspecified service address', { Node: 'n1', Address: 'a', Service: { Service: 'web', Address: '0.0.0.0' } }, 'Invalid service address'],
    ['an unspecified IPv6 service address', { Node: 'n1', Address: 'a', Service: { Service: 'web', Address: '::' } }, 'Invalid service address'],
    ['a wrongly typed field', { Node: 'n1', Address: 'a', Service: { Service: 'web', Port: 'eighty' } }, 'Invalid field Service.Port: expected a number'],
  ] as const)('refuses %s', (_what, req, message) => {
    const d = new Driver();
    expect(errorOf(d.register(req as never))).toBe(message);
    expect(d.store.catalogNodes({}).value).toEqual([]);
  });

  test('reports every connect proxy problem at once', () => {
    const d = new Driver();
    const msg = errorOf(d.register({ Node: 'n1', Address: 'a', Service: { Kind: 'connect-proxy', Service: 'p', Connect: { Native: true } } }));
    expect(msg).toContain('3 errors occurred');
    expect(msg).toContain('Proxy.DestinationServiceName must be non-empty for Connect proxy services');
    expect(msg).toContain('Port must be set for a Connect proxy');
    expect(msg).toContain('A Proxy cannot also be Connect Native, only typical services');
  });

  test.each([
    ['Key cannot be blank', { '': 'x' }],
    ['Key contains invalid characters', { 'a.b': 'x' }],
    ['Key is too long (limit: 128 characters)', { ['k'.repeat(129)]: 'x' }],
    ["Key prefix 'registry-' is reserved for internal use", { 'registry-version': 'x' }],
    ['Value is too long (limit: 512 characters)', { k: 'v'.repeat(513) }],
    ['Node metadata cannot contain more than 64 key/value pairs', Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']))],
  ])('refuses service meta: %s', (reason, Meta) => {
    const d = new Driver();
    expect(errorOf(d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web', ID: 'web-1', Meta } }))).toBe(
      `failed inserting service: Invalid Service Meta for node n1 and serviceID web-1: ${reason}`,
    );
  });

  test('a node name held by another node ID is refused, case-insensitively', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', ID: NODE_ID_A });
    expect(errorOf(d.register({ Node: 'N1', Address: 'b', ID: NODE_ID_B }))).toBe(
      `failed inserting node: Error while renaming Node ID: "${NODE_ID_B}": Node name N1 is reserved by node ${NODE_ID_A} with name n1`,
    );
    expect(d.store.catalogNode('n1').value!.Node.Address).toBe('a');
  });

  test('a check naming another node is refused', () => {
    const d = new Driver();
    expect(errorOf(d.register({ Node: 'n1', Address: 'a', Check: { Node: 'n2', Name: 'c' } }))).toBe('check node "n2" does not match node "n1"');
  });

  test('a check for a service not on the node is refused', () => {
    const d = new Driver();
    expect(errorOf(d.register({ Node: 'n1', Address: 'a', Check: { Name: 'c', ServiceID: 'web' } }))).toBe(
      'failed inserting check: Missing service registration on node "n1"',
    );
  });

  test('a check may name a service registered earlier or in the same request, ignoring case', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { Service: 'db' } });
    expect(d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web' }, Checks: [{ Name: 'c1', ServiceID: 'DB' }, { Name: 'c2', ServiceID: 'web' }] })).toBe(true);
    expect(d.store.healthChecks('db', {}).value.map((c) => [c.CheckID, c.ServiceID])).toEqual([['c1', 'db']]);
  });

  test('a check without name or ID is refused', () => {
    const d = new Driver();
    expect(errorOf(d.register({ Node: 'n1', Address: 'a', Check: {} }))).toBe('Must provide check name or CheckID');
  });

  test('a refused multi-check registration leaves nothing behind', () => {
    const d = new Driver();
    const result = d.register({
      Node: 'n1', Address: 'a', Service: { Service: 'web' },
      Checks: [{ Name: 'ok' }, { Name: 'ok2', ServiceID: 'web' }, { Name: 'bad', ServiceID: 'nope' }],
    });
    expect(result).toBeInstanceOf(CommandError);
    expect(d.store.catalogNodes({}).value).toEqual([]);
    expect(d.store.catalogServices({}).value).toEqual({});
    expect(d.store.healthState('any', {}).value).toEqual([]);
    expect(d.store.keyIndex('nodes')).toBe(0);
    expect(d.store.lastIndex).toBe(1);
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('a refused update leaves the earlier registration untouched', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web', Port: 80 } });
    d.register({ Node: 'n1', Address: 'b', Service: { Service: 'web', Port: 81 }, Check: { Name: 'c', ServiceID: 'missing' } });
    expect(d.store.catalogService('web', {}).value.map((s) => [s.Address, s.ServicePort, s.ModifyIndex])).toEqual([['a', 80, 1]]);
  });
});

describe('catalog.register updates', () => {
  test('re-registering identical data moves no ModifyIndex and no watch key', () => {
    const d = new Driver();
    const req = {
      Node: 'n1', Address: 'a', NodeMeta: { b: '2', a: '1' }, Service: { Service: 'web', Tags: ['x'], Meta: { m: '1' } },
      Checks: [{ Name: 'c', ServiceID: 'web', Status: 'passing', Definition: { Interval: '10s' } }],
    };
    d.register(req);
    const fired = jest.fn();
    d.store.watch(['nodes', 'services', 'checks', 'node:n1', 'service:web'], fired);
    expect(d.register({ ...req, NodeMeta: { a: '1', b: '2' } })).toBe(true);
    expect(fired).not.toHaveBeenCalled();
    expect(d.store.lastIndex).toBe(2);
    const [entry] = d.store.healthService('web', {}).value;
    expect([entry!.Node.ModifyIndex, entry!.Service.ModifyIndex, entry!.Checks[0]!.ModifyIndex]).toEqual([1, 1, 1]);
    expect(d.store.healthService('web', {}).index).toBe(1);
  });

  test('any nested difference is a change: a meta value, a meta key more or less, tag order', () => {
    const d = new Driver();
    const base = { Node: 'n1', Address: 'a', NodeMeta: { a: '1' }, Service: { Service: 'web', Tags: ['x', 'y'], Meta: { m: '1' } } };
    d.register(base); // 1
    const nodeIndex = () => d.store.catalogNode('n1').value!.Node.ModifyIndex;
    const serviceIndex = () => d.store.healthService('web', {}).value[0]!.Service.ModifyIndex;
    d.register({ ...base, NodeMeta: { a: '2' } }); // 2: a value
    expect([nodeIndex(), serviceIndex()]).toEqual([2, 1]);
    d.register({ ...base, NodeMeta: { a: '2', b: '1' } }); // 3: one key more
    expect(nodeIndex()).toBe(3);
    d.register({ ...base, NodeMeta: { b: '1' } }); // 4: one key less, as many as before
    expect(nodeIndex()).toBe(4);
    d.register({ ...base, NodeMeta: { b: '1' }, Service: { ...base.Service, Tags: ['y', 'x'] } }); // 5: tag order
    expect([nodeIndex(), serviceIndex()]).toEqual([4, 5]);
    d.register({ ...base, NodeMeta: { b: '1' }, Service: { ...base.Service, Tags: ['y', 'x'], Meta: { m: '1' } } }); // 6: nothing
    expect([nodeIndex(), serviceIndex(), d.store.lastIndex]).toEqual([4, 5, 6]);
  });

  test('a changed check keeps its CreateIndex and takes the new ModifyIndex', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Check: { Name: 'c', Status: 'passing' } });
    d.register({ Node: 'n1', Address: 'a', Check: { Name: 'c', Status: 'warning' } });
    expect(d.store.healthNode('n1').value.map((c) => [c.Status, c.CreateIndex, c.ModifyIndex])).toEqual([['warning', 1, 2]]);
  });

  test('SkipNodeUpdate leaves an existing node alone but still creates a missing one', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', NodeMeta: { k: 'v' } });
    d.register({ Node: 'n1', SkipNodeUpdate: true, Service: { Service: 'web' } });
    expect(d.store.catalogNode('n1').value!.Node).toMatchObject({ Address: 'a', Meta: { k: 'v' }, ModifyIndex: 1 });
    expect(d.register({ Node: 'n2', SkipNodeUpdate: true })).toBe(true);
    expect(d.store.catalogNode('n2').value!.Node.Address).toBe('');
  });

  test('re-registering a known node ID under a new name renames the node and drops the old name with its services', () => {
    const d = new Driver();
    d.register({ Node: 'old', Address: 'a', ID: NODE_ID_A, Service: { Service: 'web' }, Check: { Name: 'c' } });
    d.coordinates([{ Node: 'old', Coord: { Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 0 } }]);
    expect(d.register({ Node: 'new', Address: 'b', ID: NODE_ID_A })).toBe(true);
    expect(d.store.catalogNodes({}).value.map((n) => [n.Node, n.ID])).toEqual([['new', NODE_ID_A]]);
    expect(d.store.catalogService('web', {}).value).toEqual([]);
    expect(d.store.healthNode('old').value).toEqual([]);
    expect(d.store.coordinate('old')).toBeUndefined();
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('a request with an ID adopts a node that had none; one without an ID keeps the known ID', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { Service: 'web' } });
    d.register({ Node: 'n1', Address: 'a', ID: NODE_ID_A });
    expect(d.store.catalogNode('n1').value!.Node.ID).toBe(NODE_ID_A);
    expect(d.store.catalogService('web', {}).value).toHaveLength(1);
    d.register({ Node: 'n1', Address: 'b' });
    expect(d.store.catalogNode('n1').value!.Node).toMatchObject({ ID: NODE_ID_A, Address: 'b' });
  });

  test('renaming a service moves the instance from the old name to the new one', () => {
    const d = new Driver();
    d.register({ Node: 'n1', Address: 'a', Service: { ID: 's1', Service: 'web' }, Check: { Name: 'c', ServiceID: 's1' } });
    d.register({ Node: 'n1', Address: 'a', Service: { ID: 's1', Service: 'api' } });
    expect(d.store.catalogService('web', {}).value).toEqual([]);
    expect(d.store.catalogService('api', {}).value.map((s) => s.ServiceID)).toEqual(['s1']);
    expect(d.store.healthChecks('api', {}).value.map((c) => c.ServiceName)).toEqual(['api']);
    expect(d.store.catalogServices({}).value).toEqual({ api: [] });
  });
});
