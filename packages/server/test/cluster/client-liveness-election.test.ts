// Issue #16: a new leader's client-liveness duty finds the client agents through the store's check ID
// index (their serfHealth checks), not by walking the catalog. At 100,000 catalog nodes the walk
// built the whole node listing and looked at every node: seconds of event loop right when the new
// leader should start serving. Here 30,000 catalog nodes sit beside a few client agents and servers:
// the duty must take office without ever asking for the node listing, keep a 10 ms timer on time,
// and know exactly the clients the walk found.
import { Store, type Command } from '@registry/store';
import { createLogger } from '../../src/runtime/logger';
import { ClientLiveness, clientsInCatalog, isClientNode } from '../../src/cluster/client-liveness';
import type { LeaderCallsApi } from '../../src/rpc/rpc-api';

const CATALOG_NODES = 30_000;
const CLIENTS = 25;

function build(): { store: Store; apply: (cmd: Command) => void } {
  const store = new Store();
  let index = 0;
  const apply = (cmd: Command) => void store.apply(++index, cmd);
  for (let i = 0; i < CATALOG_NODES; i++) {
    apply({
      type: 'catalog.register',
      req: {
        Node: `ext-${i}`,
        Address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
        Service: { ID: 'web', Service: 'web', Port: 80, Tags: [] },
        Check: { CheckID: 'web-alive', Name: 'web', Status: 'passing', ServiceID: 'web' },
      },
    });
  }
  for (let i = 0; i < CLIENTS; i++) {
    apply({
      type: 'catalog.register',
      req: {
        ID: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        Node: `client-${i}`,
        Address: `192.168.0.${i}`,
        NodeMeta: { role: 'client' },
        Check: { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: i % 4 === 0 ? 'critical' : 'passing', ServiceID: '' },
      },
    });
  }
  // Servers carry serfHealth too, with their `registry` service: not clients.
  for (let i = 0; i < 3; i++) {
    apply({
      type: 'catalog.register',
      req: {
        ID: `11111111-0000-4000-8000-${String(i).padStart(12, '0')}`,
        Node: `server-${i}`,
        Address: `192.168.1.${i}`,
        Service: { ID: 'registry', Service: 'registry', Port: 8300, Tags: [] },
        Check: { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing', ServiceID: '' },
      },
    });
  }
  // A check that differs only in case is not a client's serfHealth (the walk compared exactly).
  apply({ type: 'catalog.register', req: { Node: 'odd', Address: '192.168.2.1', Check: { CheckID: 'SERFHEALTH', Name: 'x', Status: 'passing', ServiceID: '' } } });
  return { store, apply };
}

/** The store, refusing the reads that walk every node. */
function withoutWalks(store: Store): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'catalogNodes') throw new Error('the full node listing was asked for');
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** What the walk over every node (the code before issue #16) found. */
function walked(store: Store) {
  return store.catalogNodes().value.flatMap((n) => {
    if (!isClientNode(store, n.Node)) return [];
    const serf = store.healthNode(n.Node).value.find((c) => c.CheckID === 'serfHealth');
    return [{ id: n.ID ?? '', node: n.Node, address: n.Address, port: 0, status: serf?.Status === 'passing' ? 'alive' : 'failed' }];
  });
}

let fixture: ReturnType<typeof build>;
beforeAll(() => {
  fixture = build();
}, 120_000);

test('a new leader takes office over 30,000 catalog nodes without the node listing, on time, knowing every client', async () => {
  const { store, apply } = fixture;
  const handlers = new Map<string, (args: unknown) => Promise<unknown>>();
  const leaderCalls = {
    handle: (method: string, serve: (args: unknown) => Promise<unknown>) => void handlers.set(method, serve),
    call: () => Promise.reject(new Error('no leader calls here')),
  } as unknown as LeaderCallsApi;
  const writes: Command[] = [];
  let members: { node: string; status: string; id: string; address: string }[] = [];
  const duty = new ClientLiveness({
    store: withoutWalks(store),
    leaderCalls,
    apply: async (cmd) => {
      writes.push(cmd);
      apply(cmd);
    },
    timeoutMs: 60_000,
    logger: createLogger('err', false),
  });

  // A 10 ms ping, as a client's heartbeat or a read would be: it never waits long.
  let longest = 0;
  let last = performance.now();
  const ping = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    duty.start();
    const took = performance.now() - started;
    await new Promise((r) => setTimeout(r, 100));
    expect(took).toBeLessThan(500);
    expect(longest).toBeLessThan(500);
    members = (await handlers.get('Cluster.ClientMembers')!({})) as typeof members;
  } finally {
    clearInterval(ping);
    duty.stop();
  }

  // Every client the walk finds, with its status, and nothing written at election.
  const expected = walked(store);
  expect(expected).toHaveLength(CLIENTS);
  // members() orders by name as plain strings; the walk in the catalog's order.
  const byNode = (a: { node: string }, b: { node: string }) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0);
  expect([...members].sort(byNode)).toEqual([...expected].sort(byNode));
  expect(writes).toEqual([]);
  // The local fallback (members when no leader answers) agrees too.
  expect(clientsInCatalog(withoutWalks(store))).toEqual(expected);
});

test('clients registered, failed and gone after the index was built are found the same way', () => {
  const { store, apply } = fixture;
  apply({ type: 'catalog.deregister', req: { Node: 'client-3' } });
  apply({ type: 'catalog.deregister', req: { Node: 'client-5', CheckID: 'serfHealth' } });
  apply({ type: 'catalog.register', req: { Node: 'client-7', Address: '192.168.0.7', Check: { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'critical', ServiceID: '' } } });
  apply({ type: 'catalog.register', req: { Node: 'ext-17', Address: '10.0.0.17', Check: { CheckID: 'serfHealth', Name: 'Serf Health Status', Status: 'passing', ServiceID: '' } } });
  const found = clientsInCatalog(withoutWalks(store));
  expect(found).toEqual(walked(store));
  expect(found.map((m) => m.node)).toContain('ext-17');
  expect(found.map((m) => m.node)).not.toContain('client-3');
  expect(found.map((m) => m.node)).not.toContain('client-5');
  expect(found.find((m) => m.node === 'client-7')?.status).toBe('failed');
});
