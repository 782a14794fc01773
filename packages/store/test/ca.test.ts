import { CommandError, Store, type CaSettings, type Command, type RootInput, type SerialBlock } from '@registry/store';

const SETTINGS: CaSettings = { LeafCertTTL: '72h', RotationPeriod: '2160h', PrivateKeyType: 'ec', PrivateKeyBits: 256 };

function root(id: string, serial: number, extra: Partial<RootInput> = {}): RootInput {
  return {
    ID: id, Name: 'Registry CA Root Cert', SerialNumber: serial, SigningKeyID: `key-${id}`, NotBefore: '2024-01-01T00:00:00Z',
    NotAfter: '2034-01-01T00:00:00Z', RootCert: `CERT ${id}`, PrivateKey: `KEY ${id}`, IntermediateCerts: null, ...extra,
  };
}

class Ca {
  readonly store = new Store();
  private next = 1;
  apply(cmd: Command): unknown {
    return this.store.apply(this.next++, cmd);
  }
  init(id = 'r1', serial = 1): unknown {
    return this.apply({ type: 'ca.initialize', Provider: 'registry', ClusterID: 'c1', TrustDomain: 'c1.registry', Config: SETTINGS, root: root(id, serial) });
  }
}

describe('CA state', () => {
  test('before initialisation the roots are empty and the config is null', () => {
    const s = new Store();
    expect(s.caRoots().value).toEqual({ ActiveRootID: '', TrustDomain: '', Roots: [] });
    expect(s.caConfig().value).toBeNull();
  });

  test('ca.initialize stores the config and an active root; reads never show the key or cluster id', () => {
    const ca = new Ca();
    expect(ca.init()).toBe(true);
    const roots = ca.store.caRoots().value;
    expect(roots.ActiveRootID).toBe('r1');
    expect(roots.TrustDomain).toBe('c1.registry');
    expect(roots.Roots).toHaveLength(1);
    expect(roots.Roots[0]).toMatchObject({ ID: 'r1', Active: true, ExternalTrustDomain: 'c1.registry', CreateIndex: 1, ModifyIndex: 1 });
    expect(JSON.stringify(roots)).not.toContain('KEY r1');
    expect(ca.store.caConfig().value).toEqual({ Provider: 'registry', Config: SETTINGS, CreateIndex: 1, ModifyIndex: 1 });
    expect(JSON.stringify(ca.store.caConfig().value)).not.toContain('c1');
    expect(ca.store.caSigningRoot()?.PrivateKey).toBe('KEY r1');
  });

  test('a second ca.initialize keeps the first CA', () => {
    const ca = new Ca();
    ca.init('r1');
    expect(ca.init('r2')).toBe(false);
    expect(ca.store.caRoots().value.ActiveRootID).toBe('r1');
  });

  test('serials are allocated in increasing blocks, above every root serial', () => {
    const ca = new Ca();
    ca.init('r1', 5);
    const a = ca.apply({ type: 'ca.serials', count: 1 }) as SerialBlock;
    const b = ca.apply({ type: 'ca.serials', count: 3 }) as SerialBlock;
    const c = ca.apply({ type: 'ca.serials', count: 1 }) as SerialBlock;
    expect([a.first, b.first, c.first]).toEqual([6, 7, 10]);
    expect(a.index).toBe(2);
    expect(ca.apply({ type: 'ca.serials', count: 0 })).toBeInstanceOf(CommandError);
  });

  test('the serial counter survives snapshot and restore', () => {
    const ca = new Ca();
    ca.init();
    ca.apply({ type: 'ca.serials', count: 10 });
    const copy = new Store();
    copy.restore(ca.store.snapshot());
    expect((copy.apply(100, { type: 'ca.serials', count: 1 }) as SerialBlock).first).toBe(12);
    expect(copy.caRoots().value).toEqual(ca.store.caRoots().value);
  });

  test('ca.rotate activates the new root and keeps the old one inactive until its leaves expire', () => {
    const ca = new Ca();
    ca.init('r1');
    const r = ca.apply({ type: 'ca.rotate', previousRootId: 'r1', root: root('r2', 2, { IntermediateCerts: ['X'] }), Config: SETTINGS, now: '2024-03-01T00:00:00Z' });
    expect(r).toBe(true);
    const roots = ca.store.caRoots().value;
    expect(roots.ActiveRootID).toBe('r2');
    expect(roots.Roots.map((x) => [x.ID, x.Active])).toEqual([['r2', true], ['r1', false]]);
    expect(roots.Roots[0]!.IntermediateCerts).toEqual(['X']);
    // Too early: the old root's leaves (72 h) may still be in use.
    expect(ca.apply({ type: 'ca.prune', now: '2024-03-03T23:00:00Z' })).toBe(false);
    expect(ca.apply({ type: 'ca.prune', now: '2024-03-04T00:00:01Z' })).toBe(true);
    expect(ca.store.caRoots().value.Roots.map((x) => x.ID)).toEqual(['r2']);
  });

  test('a rotation based on a root that is no longer active is refused', () => {
    const ca = new Ca();
    ca.init('r1');
    ca.apply({ type: 'ca.rotate', previousRootId: 'r1', root: root('r2', 2), Config: SETTINGS, now: '2024-03-01T00:00:00Z' });
    expect(ca.apply({ type: 'ca.rotate', previousRootId: 'r1', root: root('r3', 3), Config: SETTINGS, now: '2024-03-01T00:00:00Z' })).toBeInstanceOf(CommandError);
  });

  test('ca.set-config changes settings without touching roots; bad durations are refused', () => {
    const ca = new Ca();
    ca.init();
    const rootsIndex = ca.store.caRoots().index;
    expect(ca.apply({ type: 'ca.set-config', Config: { ...SETTINGS, LeafCertTTL: '24h' } })).toBe(true);
    expect(ca.store.caConfig().value?.Config.LeafCertTTL).toBe('24h');
    expect(ca.store.caRoots().index).toBe(rootsIndex);
    expect(ca.apply({ type: 'ca.set-config', Config: { ...SETTINGS, LeafCertTTL: 'soon' } })).toBeInstanceOf(CommandError);
  });

  test('a root change wakes roots watchers', () => {
    const ca = new Ca();
    ca.init('r1');
    let woke = false;
    ca.store.watch(ca.store.caRoots().keys, () => (woke = true));
    ca.apply({ type: 'ca.rotate', previousRootId: 'r1', root: root('r2', 2), Config: SETTINGS, now: '2024-03-01T00:00:00Z' });
    expect(woke).toBe(true);
  });
});
