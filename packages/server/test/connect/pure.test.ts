import type { IntentionOut } from '@registry/store';
import { decideIntention } from '../../src/connect/intention-decision';
import { parseMatchEntry } from '../../src/connect/match-entry';
import { SignLimiter } from '../../src/connect/sign-limiter';
import { leafFetcher, renewalTime } from '../../src/connect/leaf-fetcher';
import type { CacheAnswer } from '../../src/cache/cache-answer';
import type { CaRootsOut } from '@registry/store';

function intention(SourceName: string, Action: 'allow' | 'deny', Precedence: number, SourceNS = 'default'): IntentionOut {
  return {
    ID: `id-${SourceName}`, Description: '', SourceNS, SourceName, DestinationNS: 'default', DestinationName: 'db', SourceType: 'registry',
    Action, DefaultAddr: '', DefaultPort: 0, Meta: {}, Precedence, CreatedAt: '', UpdatedAt: '', CreateIndex: 1, ModifyIndex: 1,
  };
}

describe('decideIntention', () => {
  const web = { namespace: 'default', name: 'web' };
  const off = { aclsEnabled: false, defaultAllow: false };
  test('the first intention whose source covers the caller decides', () => {
    const d = decideIntention([intention('api', 'allow', 9), intention('web', 'deny', 9), intention('*', 'allow', 8)], web, off);
    expect(d).toMatchObject({ allowed: false, reason: 'Matched intention: DENY default/web => default/db (ID: id-web, Precedence: 9)' });
  });
  test('the source comparison is exact (case-sensitive)', () => {
    expect(decideIntention([intention('WEB', 'deny', 9)], web, off).allowed).toBe(true);
  });
  test('a wildcard source namespace covers every caller', () => {
    expect(decideIntention([intention('*', 'deny', 7, '*')], { namespace: 'other', name: 'x' }, off).allowed).toBe(false);
  });
  test.each([
    [{ aclsEnabled: false, defaultAllow: false }, true, 'ACLs disabled, access is allowed by default'],
    [{ aclsEnabled: true, defaultAllow: true }, true, 'Default behavior configured by ACLs'],
    [{ aclsEnabled: true, defaultAllow: false }, false, 'Default behavior configured by ACLs'],
  ])('no match with %j → %s (%s)', (defaults, allowed, reason) => {
    expect(decideIntention([intention('api', 'deny', 9)], web, defaults)).toEqual({ allowed, reason });
  });
});

describe('parseMatchEntry', () => {
  test('plain names are in the default namespace; ns/name splits; more slashes are refused', () => {
    expect(parseMatchEntry('web')).toEqual({ namespace: 'default', name: 'web' });
    expect(parseMatchEntry('ns1/web')).toEqual({ namespace: 'ns1', name: 'web' });
    expect(() => parseMatchEntry('a/b/c')).toThrow("input can contain at most one '/'");
  });
});

describe('SignLimiter', () => {
  test('a token bucket of one second worth of signings, refilled over time', () => {
    let now = 0;
    const l = new SignLimiter({ perSecond: 3, maxConcurrent: 0 }, () => now);
    const takes = () => [1, 2, 3, 4].map(() => l.tryAcquire() && (l.release(), true));
    expect(takes()).toEqual([true, true, true, false]);
    now += 340; // ~1 token
    expect(takes()).toEqual([true, false, false, false]);
    now += 10_000; // never more than the burst
    expect(takes()).toEqual([true, true, true, false]);
  });
  test('signings in flight are capped until released', () => {
    const l = new SignLimiter({ perSecond: 0, maxConcurrent: 2 });
    expect([l.tryAcquire(), l.tryAcquire(), l.tryAcquire()]).toEqual([true, true, false]);
    l.release();
    expect(l.tryAcquire()).toBe(true);
  });
});

describe('renewalTime', () => {
  test('between 60 % and 90 % of the leaf lifetime', () => {
    const leaf = { ValidAfter: '2024-01-01T00:00:00Z', ValidBefore: '2024-01-01T10:00:00Z' };
    const start = Date.parse(leaf.ValidAfter);
    expect(renewalTime(leaf, () => 0) - start).toBe(6 * 3600_000);
    expect(renewalTime(leaf, () => 1) - start).toBe(9 * 3600_000);
  });
});

describe('leafFetcher', () => {
  const roots = (id: string, index: number): CacheAnswer<CaRootsOut> => ({
    value: { ActiveRootID: id, TrustDomain: 'c1.registry', Roots: [] }, index, hit: true, ageS: 0,
  });
  function setup() {
    let now = Date.parse('2024-01-01T00:00:00Z');
    let current = roots('r1', 5);
    const rootWaits: { minIndex: number; waitMs: number }[] = [];
    const csrs: string[] = [];
    let serial = 0;
    const fetch = leafFetcher('web', {
      datacenter: 'dc1',
      now: () => now,
      random: () => 0.5,
      roots: async (minIndex, waitMs) => {
        if (minIndex > 0) {
          rootWaits.push({ minIndex, waitMs });
          now += waitMs; // the wait runs out (no root change) unless the test swapped the roots
        }
        return current;
      },
      sign: async (csrPEM) => {
        csrs.push(csrPEM);
        serial++;
        const after = new Date(now - 60_000).toISOString();
        const before = new Date(now - 60_000 + 72 * 3600_000).toISOString();
        return { leaf: { SerialNumber: String(serial), CertPEM: 'PEM', Service: 'web', ServiceURI: 'u', ValidAfter: after, ValidBefore: before }, index: 100 + serial };
      },
    });
    return { fetch, rootWaits, csrs, swapRoots: (id: string, index: number) => (current = roots(id, index)) };
  }
  const signal = new AbortController().signal;

  test('the first fetch signs a CSR for the SPIFFE ID at once', async () => {
    const t = setup();
    const first = await t.fetch(0, signal);
    expect(first.index).toBe(101);
    expect(first.value.PrivateKeyPEM).toContain('EC PRIVATE KEY');
    expect(t.csrs).toHaveLength(1);
    expect(t.rootWaits).toEqual([]);
  });

  test('a refresh waits on the roots until the renewal point (75 % of 72 h here), then renews', async () => {
    const t = setup();
    await t.fetch(0, signal);
    const second = await t.fetch(101, signal);
    expect(t.rootWaits).toHaveLength(1);
    expect(t.rootWaits[0]!.minIndex).toBe(5);
    expect(t.rootWaits[0]!.waitMs).toBe(0.75 * 72 * 3600_000 - 60_000);
    expect(second.index).toBe(102);
    expect(t.csrs).toHaveLength(2);
  });

  test('a root change renews at once', async () => {
    const t = setup();
    await t.fetch(0, signal);
    t.swapRoots('r2', 9);
    const second = await t.fetch(101, signal);
    expect(second.index).toBe(102);
  });
});
