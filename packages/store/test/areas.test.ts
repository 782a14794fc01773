// The areas table through the store's commands: validation that needs the state, updates, learned
// servers, blocking keys and snapshots.
import { Store, type AreaInput, type AreaServer } from '@registry/store';
import { Driver } from './support/driver';

const A1 = '11111111-0000-4000-8000-000000000001';
const A2 = '11111111-0000-4000-8000-000000000002';

function area(id: string, peer: string, extra: Partial<AreaInput> = {}): AreaInput {
  return { ID: id, PeerDatacenter: peer, RetryJoin: null, UseTLS: false, ...extra };
}

function server(id: string, dc = 'dc2'): AreaServer {
  return { ID: id, Node: `node-${id}`, Address: `10.0.0.${id.length}:8300`, Datacenter: dc, Build: '0.1.0' };
}

describe('network areas in the store', () => {
  test('create answers the ID and the area reads back without Raft indexes', () => {
    const d = new Driver('dc1');
    expect(d.apply({ type: 'area.create', area: area(A1, 'dc2', { RetryJoin: ['10.0.0.1'] }) })).toEqual({ ID: A1 });
    expect(d.store.areaList().value).toEqual([{ ID: A1, PeerDatacenter: 'dc2', RetryJoin: ['10.0.0.1'], UseTLS: false }]);
    expect(d.store.areaGet(A1.toUpperCase()).value).toEqual({ ID: A1, PeerDatacenter: 'dc2', RetryJoin: ['10.0.0.1'], UseTLS: false });
    expect(d.store.areaGet(A2).value).toBeNull();
    expect(d.store.areaList().index).toBe(1);
  });

  test('a peer datacenter is required, may not be the local one, and has at most one area', () => {
    const d = new Driver('dc1');
    expect(String(d.apply({ type: 'area.create', area: area(A1, '') }))).toContain('PeerDatacenter');
    expect(String(d.apply({ type: 'area.create', area: area(A1, 'DC1') }))).toContain('local datacenter');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    expect(String(d.apply({ type: 'area.create', area: area(A2, 'dc2') }))).toContain('already exists');
    expect(String(d.apply({ type: 'area.create', area: area(A1, 'dc3') }))).toContain(`Area ID ${A1} already exists`);
    expect(d.store.areaList().value).toHaveLength(1);
  });

  test('update changes UseTLS, reports an unknown area, and a no-op update moves no index', () => {
    const d = new Driver('dc1');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    expect(d.apply({ type: 'area.update', id: A1, UseTLS: true })).toEqual({ ID: A1 });
    expect(d.store.areaGet(A1).value?.UseTLS).toBe(true);
    expect(d.store.areaGet(A1).index).toBe(2);
    d.apply({ type: 'area.update', id: A1, UseTLS: true });
    expect(d.store.areaGet(A1).index).toBe(2);
    expect(d.apply({ type: 'area.update', id: A2, UseTLS: true })).toEqual({ notFound: A2 });
  });

  test('delete removes the area and its learned servers, and answers whether it existed', () => {
    const d = new Driver('dc1');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    d.apply({ type: 'area.servers', id: A1, upsert: [server('s1')] });
    expect(d.apply({ type: 'area.delete', id: A1 })).toBe(true);
    expect(d.apply({ type: 'area.delete', id: A1 })).toBe(false);
    expect(d.store.areaServers().value).toEqual([]);
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('learned servers are merged by ID, must be in the peer datacenter, and do not move the areas index', () => {
    const d = new Driver('dc1');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    d.apply({ type: 'area.servers', id: A1, upsert: [server('s1'), server('s2')] });
    d.apply({ type: 'area.servers', id: A1, upsert: [{ ...server('s2'), Node: 'renamed' }], remove: ['s1'] });
    expect(d.store.areaServers().value).toEqual([{ AreaID: A1, PeerDatacenter: 'dc2', Servers: [{ ...server('s2'), Node: 'renamed' }] }]);
    expect(d.store.areaList().index).toBe(1);
    expect(d.store.areaServers().index).toBe(3);
    expect(String(d.apply({ type: 'area.servers', id: A1, upsert: [server('s3', 'dc3')] }))).toContain('not the area\'s peer');
    // Unchanged servers write nothing a blocking reader would wake for.
    d.apply({ type: 'area.servers', id: A1, upsert: [{ ...server('s2'), Node: 'renamed' }] });
    expect(d.store.areaServers().index).toBe(3);
    // A join racing a delete: no area, nothing written.
    expect(d.apply({ type: 'area.servers', id: A2, upsert: [server('s9')] })).toBe(false);
  });

  test('an area write wakes area watchers; a server write does not', () => {
    const d = new Driver('dc1');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    let woke = 0;
    d.store.watch(d.store.areaList().keys, () => woke++);
    d.apply({ type: 'area.servers', id: A1, upsert: [server('s1')] });
    expect(woke).toBe(0);
    d.apply({ type: 'area.update', id: A1, UseTLS: true });
    expect(woke).toBe(1);
  });

  test('areas and their servers survive a snapshot and restore', () => {
    const d = new Driver('dc1');
    d.apply({ type: 'area.create', area: area(A1, 'dc2', { RetryJoin: ['h:1'] }) });
    d.apply({ type: 'area.servers', id: A1, upsert: [server('s1')] });
    const copy = new Store({ datacenter: 'dc1' });
    copy.restore(d.store.snapshot());
    expect(copy.areaList()).toEqual(d.store.areaList());
    expect(copy.areaServers()).toEqual(d.store.areaServers());
    expect(copy.checkInvariants()).toEqual([]);
  });

  test('malformed commands are refused without a change', () => {
    const d = new Driver('dc1');
    expect(String(d.apply({ type: 'area.create', area: { ...area(A1, 'dc2'), RetryJoin: [3] } as any }))).toContain('RetryJoin');
    d.apply({ type: 'area.create', area: area(A1, 'dc2') });
    expect(String(d.apply({ type: 'area.servers', id: A1, upsert: [{ ID: 's1' }] as any }))).toContain('Address');
    expect(d.store.areaServers().value[0].Servers).toEqual([]);
  });
});
