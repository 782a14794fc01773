import fc from 'fast-check';
import { CommandError, Store, type Command, type CheckRequest, type QueryResult } from '@registry/store';
import { NODE_ID_A, NODE_ID_B } from './support/driver';

// Small pools of names so random commands collide: renames, clashes, case variants, dangling checks.
// Weights keep most commands valid (about a fifth are refused) so sequences build up real state.
function mostly<T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ weight: 6, arbitrary: usual }, { weight: 1, arbitrary: rare });
}
const nodeName = fc.constantFrom('a', 'A', 'b', 'c');
const nodeId = fc.constantFrom(undefined, undefined, NODE_ID_A, NODE_ID_B);
const serviceName = fc.constantFrom('web', 'Web', 'db');
const serviceId = mostly(fc.constant(undefined), fc.constantFrom('web', 'web-2', 'db', 'proxy'));
const status = fc.constantFrom('passing', 'passing', 'warning', 'critical', undefined);

const check: fc.Arbitrary<CheckRequest> = fc.record(
  {
    CheckID: fc.constantFrom('c1', 'c2', 'serf'),
    ServiceID: mostly(fc.constantFrom('', 'web', 'WEB', 'db'), fc.constantFrom('proxy', 'nope')),
    Status: status,
    Node: mostly(fc.constant(undefined), fc.constantFrom('a', 'b')),
  },
  { requiredKeys: ['CheckID'] },
);

const typicalService = fc.record({
  ID: serviceId,
  Service: serviceName,
  Tags: fc.subarray(['x', 'y', 'X']),
  Port: fc.constantFrom(0, 80),
  Connect: fc.option(fc.record({ Native: fc.boolean() }), { nil: undefined }),
});
const proxyService = fc.record({
  ID: fc.constantFrom('proxy', 'web-proxy'),
  Service: fc.constantFrom('proxy', 'web-proxy'),
  Kind: fc.constant('connect-proxy'),
  Port: mostly(fc.constant(21000), fc.constant(0)),
  Tags: fc.subarray(['x', 'y']),
  Proxy: mostly(fc.record({ DestinationServiceName: serviceName }), fc.constant({})),
});
const service = fc.oneof({ weight: 3, arbitrary: typicalService }, { weight: 1, arbitrary: proxyService });

const register: fc.Arbitrary<Command> = fc
  .record({
    Node: nodeName,
    ID: nodeId,
    Address: mostly(fc.constantFrom('10.0.0.1', '10.0.0.2'), fc.constant('')),
    NodeMeta: fc.option(fc.constantFrom({ env: 'prod' }, { env: 'dev' }), { nil: undefined }),
    SkipNodeUpdate: fc.boolean(),
    Service: fc.option(service, { nil: undefined }),
    Checks: fc.array(check, { maxLength: 2 }),
  })
  .map((req) => ({ type: 'catalog.register', req }));

const deregister: fc.Arbitrary<Command> = fc
  .record({ Node: nodeName, ServiceID: fc.constantFrom(undefined, 'web', 'db', 'proxy'), CheckID: fc.constantFrom(undefined, 'c1', 'serf') })
  .map((req) => ({ type: 'catalog.deregister', req }));

const coordinateUpdate: fc.Arbitrary<Command> = fc
  .array(fc.record({ Node: nodeName, x: fc.constantFrom(0, 0.1, 0.2) }), { minLength: 1, maxLength: 2 })
  .map((us) => ({
    type: 'coordinate.update',
    updates: us.map(({ Node, x }) => ({ Node, Coord: { Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 0 } })),
  }));

const command = fc.oneof({ weight: 5, arbitrary: register }, { weight: 2, arbitrary: deregister }, { weight: 1, arbitrary: coordinateUpdate });

const PROBE_KEYS = ['nodes', 'services', 'checks', 'coordinates', 'node:a', 'node:b', 'node:c', 'service:web', 'service:db', 'connect:web', 'connect:db'];

/** Reads whose answers blocking queries depend on. */
function reads(s: Store): Record<string, QueryResult<unknown>> {
  return {
    nodes: s.catalogNodes({}),
    prodNodes: s.catalogNodes({ nodeMeta: { env: 'prod' } }),
    services: s.catalogServices({}),
    prodServices: s.catalogServices({ nodeMeta: { env: 'prod' } }),
    web: s.catalogService('web', {}),
    webConnect: s.catalogService('web', { connect: true }),
    healthWeb: s.healthService('web', {}),
    healthDbConnect: s.healthService('db', { connect: true }),
    nodeA: s.catalogNode('a'),
    nodeById: s.catalogNode(NODE_ID_A),
    healthNodeB: s.healthNode('b'),
    healthNodeById: s.healthNode(NODE_ID_B),
    checksWeb: s.healthChecks('web', {}),
    stateAny: s.healthState('any', {}),
    stateProdCritical: s.healthState('critical', { nodeMeta: { env: 'prod' } }),
  };
}

describe('random command sequences', () => {
  test('keep invariants, never lower a key index, never change a read without waking its watchers, and leave refusals without effect', () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 30 }), (cmds) => {
        const store = new Store();
        const last = new Map(PROBE_KEYS.map((k) => [k, 0]));
        cmds.forEach((cmd, i) => {
          const before = reads(store);
          const woken = new Set<string>();
          const cancels = Object.entries(before).map(([name, r]) => store.watch(r.keys, () => woken.add(name)));

          const result = store.apply(i + 1, cmd);

          cancels.forEach((cancel) => cancel());
          expect(store.checkInvariants()).toEqual([]);
          for (const k of PROBE_KEYS) {
            expect(store.keyIndex(k)).toBeGreaterThanOrEqual(last.get(k)!);
            last.set(k, store.keyIndex(k));
          }
          const after = reads(store);
          for (const [name, r] of Object.entries(after)) {
            const prev = before[name]!;
            if (result instanceof CommandError) expect({ name, value: r.value }).toEqual({ name, value: prev.value });
            if (JSON.stringify(r.value) !== JSON.stringify(prev.value)) {
              expect({ name, woken: woken.has(name) }).toEqual({ name, woken: true });
              expect(r.index).toBeGreaterThan(prev.index);
            }
          }
        });
        const copy = new Store();
        copy.restore(store.snapshot());
        expect(reads(copy)).toEqual(reads(store));
      }),
      { numRuns: 300, seed: 20241122 },
    );
  });
});
