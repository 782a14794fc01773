import {
  ANONYMOUS_TOKEN_SECRET,
  Authorizer,
  GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_RULES,
  ResolvablePolicy,
  ResolvableToken,
  RuleError,
  TokenLookup,
  TokenResolver,
} from '@registry/acl';

/** An in-memory stand-in for the store's ACL tables that counts lookups. */
class Tables implements TokenLookup {
  readonly tokens = new Map<string, ResolvableToken>();
  readonly policies = new Map<string, ResolvablePolicy>();
  tokenLookups = 0;

  tokenBySecret(secret: string): ResolvableToken | undefined {
    this.tokenLookups++;
    return this.tokens.get(secret);
  }

  policyById(id: string): ResolvablePolicy | undefined {
    return this.policies.get(id);
  }

  link(secret: string, ...ids: string[]): void {
    this.tokens.set(secret, { Policies: ids.map((ID) => ({ ID })) });
  }
}

function setup(defaultPolicy: 'allow' | 'deny' = 'deny'): { tables: Tables; resolver: TokenResolver } {
  const tables = new Tables();
  tables.policies.set(GLOBAL_MANAGEMENT_POLICY_ID, { Rules: GLOBAL_MANAGEMENT_RULES });
  tables.policies.set('p-web', { Rules: 'service "web" { policy = "write" }' });
  tables.policies.set('p-db-read', { Rules: 'service "db" { policy = "read" }' });
  tables.tokens.set(ANONYMOUS_TOKEN_SECRET, { Policies: null });
  const resolver = new TokenResolver(tables, { datacenter: 'dc1', defaultPolicy });
  return { tables, resolver };
}

function authorizer(result: Authorizer | 'not-found'): Authorizer {
  if (result === 'not-found') throw new Error('expected an Authorizer, got not-found');
  return result;
}

describe('TokenResolver', () => {
  test('no token or an empty token resolves to the anonymous token', () => {
    const { tables, resolver } = setup('deny');
    tables.link(ANONYMOUS_TOKEN_SECRET, 'p-db-read');
    for (const secret of [undefined, '']) {
      const a = authorizer(resolver.resolve(secret));
      expect(a.serviceRead('db')).toBe(true);
      expect(a.serviceWrite('db')).toBe(false);
    }
  });

  test('the anonymous token without policies gets the default policy', () => {
    expect(authorizer(setup('allow').resolver.resolve(undefined)).serviceWrite('x')).toBe(true);
    expect(authorizer(setup('deny').resolver.resolve(undefined)).serviceRead('x')).toBe(false);
  });

  test('a missing anonymous token still resolves, to the default policy', () => {
    const { tables, resolver } = setup('deny');
    tables.tokens.delete(ANONYMOUS_TOKEN_SECRET);
    expect(authorizer(resolver.resolve(undefined)).nodeRead('n')).toBe(false);
  });

  test('an unknown secret is not-found, not anonymous', () => {
    const { resolver } = setup('allow');
    expect(resolver.resolve('no-such-secret')).toBe('not-found');
  });

  test("a token gets the union of its policies over the default policy", () => {
    const { tables, resolver } = setup('deny');
    tables.link('s1', 'p-web', 'p-db-read');
    const a = authorizer(resolver.resolve('s1'));
    expect([a.serviceWrite('web'), a.serviceRead('db'), a.serviceWrite('db'), a.serviceRead('other')]).toEqual([
      true, true, false, false,
    ]);
  });

  test('a management token can manage ACLs', () => {
    const { tables, resolver } = setup('deny');
    tables.link('root', GLOBAL_MANAGEMENT_POLICY_ID);
    expect(authorizer(resolver.resolve('root')).isManagement()).toBe(true);
  });

  test('policies limited to other datacenters are ignored; listed or unlimited ones apply', () => {
    const { tables, resolver } = setup('deny');
    tables.policies.set('elsewhere', { Rules: 'node_prefix "" { policy = "write" }', Datacenters: ['dc2'] });
    tables.policies.set('here', { Rules: 'key_prefix "" { policy = "write" }', Datacenters: ['dc2', 'dc1'] });
    tables.policies.set('everywhere', { Rules: 'event_prefix "" { policy = "write" }', Datacenters: [] });
    tables.link('s1', 'elsewhere', 'here', 'everywhere');
    const a = authorizer(resolver.resolve('s1'));
    expect([a.nodeWrite('n'), a.keyWrite('k'), a.eventWrite('e')]).toEqual([false, true, true]);
  });

  test('links to deleted policies are dropped silently', () => {
    const { tables, resolver } = setup('deny');
    tables.link('s1', 'gone', 'p-web');
    expect(authorizer(resolver.resolve('s1')).serviceWrite('web')).toBe(true);
  });

  test('a compiled token is cached until invalidate()', () => {
    const { tables, resolver } = setup('deny');
    tables.link('s1', 'p-web');
    const first = authorizer(resolver.resolve('s1'));
    expect(resolver.resolve('s1')).toBe(first);
    expect(tables.tokenLookups).toBe(1);

    tables.link('s1', 'p-db-read');
    expect(authorizer(resolver.resolve('s1')).serviceWrite('web')).toBe(true); // still the cached one
    resolver.invalidate();
    const second = authorizer(resolver.resolve('s1'));
    expect([second.serviceWrite('web'), second.serviceRead('db')]).toEqual([false, true]);
  });

  test('a changed policy takes effect after invalidate()', () => {
    const { tables, resolver } = setup('deny');
    tables.link('s1', 'p-web');
    expect(authorizer(resolver.resolve('s1')).serviceWrite('web')).toBe(true);
    tables.policies.set('p-web', { Rules: 'service "web" { policy = "deny" }' });
    resolver.invalidate();
    expect(authorizer(resolver.resolve('s1')).serviceRead('web')).toBe(false);
  });

  test('a deleted token is not-found after invalidate()', () => {
    const { tables, resolver } = setup('allow');
    tables.link('s1', 'p-web');
    authorizer(resolver.resolve('s1'));
    tables.tokens.delete('s1');
    resolver.invalidate();
    expect(resolver.resolve('s1')).toBe('not-found');
  });

  test('not-found is not cached: a token created later resolves', () => {
    const { tables, resolver } = setup('deny');
    expect(resolver.resolve('later')).toBe('not-found');
    tables.link('later', 'p-web');
    expect(authorizer(resolver.resolve('later')).serviceWrite('web')).toBe(true);
  });

  test('tokens with the same policies share one compiled Authorizer', () => {
    const { tables, resolver } = setup('deny');
    tables.link('a', 'p-web', 'p-db-read');
    tables.link('b', 'p-db-read', 'p-web');
    expect(resolver.resolve('a')).toBe(resolver.resolve('b'));
  });

  test('the secret cache is bounded: the oldest secret is looked up again', () => {
    const tables = new Tables();
    tables.policies.set('p', { Rules: '' });
    for (const s of ['s1', 's2', 's3']) tables.link(s, 'p');
    const resolver = new TokenResolver(tables, { datacenter: 'dc1', defaultPolicy: 'deny', maxCachedTokens: 2 });
    resolver.resolve('s1');
    resolver.resolve('s2');
    resolver.resolve('s3');
    const before = tables.tokenLookups;
    resolver.resolve('s3');
    expect(tables.tokenLookups).toBe(before);
    resolver.resolve('s1');
    expect(tables.tokenLookups).toBe(before + 1);
  });

  test('a stored policy whose rules no longer parse fails resolution instead of being skipped', () => {
    const { tables, resolver } = setup('allow');
    tables.policies.set('broken', { Rules: 'service "web" { policy = "nope" }' });
    tables.link('s1', 'broken');
    expect(() => resolver.resolve('s1')).toThrow(RuleError);
  });
});
