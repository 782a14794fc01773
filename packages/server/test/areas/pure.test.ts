// The pure parts of network areas: Vivaldi coordinates, datacenter ordering, join addresses,
// address translation, ping bookkeeping and member rows.
import { estimatedRtt } from '@registry/store';
import { VivaldiClient, originCoordinate, VIVALDI } from '../../src/areas/vivaldi-client';
import { orderDatacenters } from '../../src/areas/datacenter-order';
import { joinAddress } from '../../src/areas/join-address';
import { translateAddresses } from '../../src/areas/address-translation';
import { PeerStatus, MISSES_BEFORE_FAILED } from '../../src/areas/peer-status';
import { areaMembers } from '../../src/areas/area-members';

/** A deterministic random source. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('Vivaldi coordinates', () => {
  test('a new coordinate is the origin with the largest error', () => {
    const c = originCoordinate();
    expect(c.Vec).toEqual(new Array(VIVALDI.dimensions).fill(0));
    expect(c.Error).toBe(VIVALDI.errorMax);
  });

  test('two nodes that keep measuring each other converge on their true round trip', () => {
    const rand = seeded(7);
    const a = new VivaldiClient(rand);
    const b = new VivaldiClient(rand);
    const rtt = 0.025;
    for (let i = 0; i < 200; i++) {
      a.observe(b.coordinate, rtt);
      b.observe(a.coordinate, rtt);
    }
    const est = estimatedRtt(a.coordinate, b.coordinate)!;
    expect(Math.abs(est - rtt) / rtt).toBeLessThan(0.1);
    expect(a.coordinate.Error).toBeLessThan(VIVALDI.errorMax);
  });

  test('three nodes place a far one farther than a near one', () => {
    const rand = seeded(11);
    const [x, y, z] = [new VivaldiClient(rand), new VivaldiClient(rand), new VivaldiClient(rand)];
    const rtts: Record<string, number> = { xy: 0.005, xz: 0.05, yz: 0.05 };
    for (let i = 0; i < 300; i++) {
      x.observe(y.coordinate, rtts.xy);
      y.observe(x.coordinate, rtts.xy);
      x.observe(z.coordinate, rtts.xz);
      z.observe(x.coordinate, rtts.xz);
      y.observe(z.coordinate, rtts.yz);
      z.observe(y.coordinate, rtts.yz);
    }
    expect(estimatedRtt(x.coordinate, y.coordinate)!).toBeLessThan(estimatedRtt(x.coordinate, z.coordinate)!);
  });

  test('unusable samples change nothing', () => {
    const c = new VivaldiClient(seeded(1));
    const before = c.coordinate;
    c.observe(originCoordinate(), 0);
    c.observe(originCoordinate(), -1);
    c.observe(originCoordinate(), 60);
    c.observe({ ...originCoordinate(), Vec: [1, 2] }, 0.01);
    expect(c.coordinate).toEqual(before);
    expect(c.observations).toBe(0);
  });
});

describe('datacenter order', () => {
  test('local first, then by median RTT, unknown last, ties by name', () => {
    const rtts = new Map<string, number[]>([
      ['far', [90, 100, 110]],
      ['near', [5, 50, 6]],
      ['dark', []],
      ['b-tie', [20]],
      ['a-tie', [20]],
      ['dc1', [999]],
    ]);
    expect(orderDatacenters('dc1', rtts)).toEqual(['dc1', 'near', 'a-tie', 'b-tie', 'far', 'dark']);
  });

  test('with no links only the local datacenter is listed', () => {
    expect(orderDatacenters('dc1', new Map())).toEqual(['dc1']);
  });
});

describe('join addresses', () => {
  test.each([
    ['10.0.0.1', '10.0.0.1:8300'],
    ['10.0.0.1:9000', '10.0.0.1:9000'],
    ['server.example', 'server.example:8300'],
    ['server.example:8301', 'server.example:8301'],
    ['[::1]:8302', '[::1]:8302'],
    ['::1', '[::1]:8300'],
    [' 10.0.0.2 ', '10.0.0.2:8300'],
  ])('%s → %s', (text, want) => {
    expect(joinAddress(text)).toBe(want);
  });

  test.each(['', 'host:port', 'host:0', 'host:70000', 'two words', 'a/b:1'])('"%s" is refused', (text) => {
    expect(joinAddress(text)).toBeInstanceOf(Error);
  });
});

describe('address translation', () => {
  const foreign = { Node: 'n', Address: '10.0.0.1', Datacenter: 'dc2', TaggedAddresses: { lan: '10.0.0.1', wan: '198.51.100.1' } };

  test('nodes of another datacenter with a WAN address get it, at any depth', () => {
    const value = { Nodes: [{ Node: foreign, Service: { Address: '10.0.0.5' } }], Datacenter: 'dc2' };
    const t = translateAddresses(value, 'dc1');
    expect(t.translated).toBe(true);
    expect(t.value.Nodes[0].Node.Address).toBe('198.51.100.1');
    expect(t.value.Nodes[0].Service.Address).toBe('10.0.0.5');
    expect(value.Nodes[0].Node.Address).toBe('10.0.0.1'); // the input is not modified
  });

  test('local nodes and nodes without a WAN address are left alone', () => {
    const local = [{ ...foreign, Datacenter: 'dc1' }, { ...foreign, TaggedAddresses: { lan: '10.0.0.1' } }, { ...foreign, TaggedAddresses: null }];
    const t = translateAddresses(local, 'dc1');
    expect(t.translated).toBe(false);
    expect(t.value).toBe(local);
  });
});

describe('peer status', () => {
  test('alive until enough consecutive misses; an answer revives; RTT is the recent median', () => {
    const s = new PeerStatus();
    expect(s.state('x')).toBe('alive');
    expect(s.rttMs('x')).toBeUndefined();
    for (let i = 0; i < MISSES_BEFORE_FAILED - 1; i++) s.missed('x');
    expect(s.state('x')).toBe('alive');
    s.missed('x');
    expect(s.state('x')).toBe('failed');
    s.answered('x', 3);
    s.answered('x', 1);
    s.answered('x', 2);
    expect(s.state('x')).toBe('alive');
    expect(s.rttMs('x')).toBe(2);
  });
});

describe('area members', () => {
  test('rows use node.dc names, split addresses and RTT in ns, ordered by datacenter then name', () => {
    const rows = areaMembers([
      { server: { id: 'b', node: 'beta', address: '10.0.0.2:8300', datacenter: 'dc2', build: '1' }, status: 'failed', rttMs: 1.5 },
      { server: { id: 'a', node: 'alpha', address: '[::1]:9000', datacenter: 'dc1', build: '1' }, status: 'alive', rttMs: undefined },
    ]);
    expect(rows).toEqual([
      { ID: 'a', Name: 'alpha.dc1', Addr: '::1', Port: 9000, Datacenter: 'dc1', Role: 'server', Build: '1', Protocol: 2, Status: 'alive', RTT: 0 },
      { ID: 'b', Name: 'beta.dc2', Addr: '10.0.0.2', Port: 8300, Datacenter: 'dc2', Role: 'server', Build: '1', Protocol: 2, Status: 'failed', RTT: 1_500_000 },
    ]);
  });
});
