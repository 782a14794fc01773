// Anti-entropy's comparisons (local/anti-entropy.ts), against an in-memory catalog for one node:
// what differs is written, what matches is not, the servers' and maintenance rows are left alone.
import type { CheckRequest, Command, HealthCheckOut, NodeServiceOut } from '@registry/store';
import { AntiEntropy } from '../../src/local/anti-entropy';
import type { LocalService } from '../../src/local/local-services';
import { createLogger } from '../../src/runtime/logger';

function row(id: string, tags: string[], enableTagOverride = false): NodeServiceOut {
  return { ID: id, Service: id, Tags: tags, Address: '', Meta: {}, Port: 80, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: enableTagOverride, ProxyDestination: '', Proxy: {} as never, Connect: {} as never, CreateIndex: 1, ModifyIndex: 1 };
}
function check(id: string, status: string, serviceId = ''): HealthCheckOut {
  return { Node: 'n1', CheckID: id, Name: id, Status: status, Notes: '', Output: 'out', ServiceID: serviceId, ServiceName: serviceId, ServiceTags: [], Definition: {} as never, CreateIndex: 1, ModifyIndex: 1 };
}
const local = (id: string, tags: string[], enableTagOverride = false): LocalService => ({ service: { ID: id, Service: id, Tags: tags, Port: 80, Meta: {}, EnableTagOverride: enableTagOverride }, checks: [] } as unknown as LocalService);

function setup(services: Record<string, NodeServiceOut>, checks: HealthCheckOut[], mine: LocalService[], myChecks: CheckRequest[]) {
  const writes: Command[] = [];
  const ae = new AntiEntropy({
    node: 'n1',
    services: () => mine,
    checks: () => myChecks,
    view: async () => ({ node: { Node: { Node: 'n1' } as never, Services: services }, checks }),
    apply: async (cmd) => void writes.push(cmd),
    logger: createLogger('error', false),
  });
  return { ae, writes };
}

test('a pass over a catalog that matches the agent writes nothing', async () => {
  const { ae, writes } = setup({ web: row('web', ['a']) }, [check('serfHealth', 'passing'), check('service:web', 'passing', 'web')], [local('web', ['a'])], [{ CheckID: 'service:web', Name: 'service:web', Status: 'passing', Notes: '', Output: 'newer output', ServiceID: 'web' }]);
  expect(await ae.sync()).toEqual({ writes: 0 });
  expect(writes).toEqual([]);
});

test('a missing service and a changed check status are written; strays are removed, serfHealth and maintenance kept', async () => {
  const { ae, writes } = setup(
    { stray: row('stray', []) },
    [check('serfHealth', 'critical'), check('_node_maintenance', 'critical'), check('service:web', 'critical', 'web'), check('lonely', 'passing')],
    [local('web', ['a'])],
    [{ CheckID: 'service:web', Name: 'service:web', Status: 'passing', Notes: '', Output: '', ServiceID: 'web' }],
  );
  expect(await ae.sync()).toEqual({ writes: 4 });
  expect(writes.map((c) => [c.type, JSON.stringify('req' in c ? c.req : {})])).toEqual([
    ['catalog.register', expect.stringContaining('"ID":"web"')],
    ['catalog.deregister', '{"Node":"n1","ServiceID":"stray"}'],
    ['catalog.register', expect.stringContaining('"CheckID":"service:web"')],
    ['catalog.deregister', '{"Node":"n1","CheckID":"lonely"}'],
  ]);
});

test('EnableTagOverride: the catalog\'s tags stand; without it, they are repaired', async () => {
  const keep = setup({ api: row('api', ['retagged'], true) }, [], [local('api', ['own'], true)], []);
  expect(await keep.ae.sync()).toEqual({ writes: 0 });
  const repair = setup({ api: row('api', ['retagged']) }, [], [local('api', ['own'])], []);
  expect(await repair.ae.sync()).toEqual({ writes: 1 });
  expect(JSON.stringify(repair.writes[0])).toContain('"Tags":["own"]');
});

test('before the servers registered the node there is nothing to compare with', async () => {
  const writes: Command[] = [];
  const ae = new AntiEntropy({ node: 'n1', services: () => [local('web', [])], checks: () => [], view: async () => ({ node: null, checks: [] }), apply: async (c) => void writes.push(c), logger: createLogger('error', false) });
  expect(await ae.sync()).toEqual({ writes: 0 });
  expect(writes).toEqual([]);
});
