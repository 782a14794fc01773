// The ACL tables through the Store's API: built-ins, bootstrap once, tokens and policies with
// Consul's validation texts, link resolution, watch keys, snapshot/restore.
import {
  ANONYMOUS_TOKEN_ACCESSOR_ID,
  GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_RULES,
  policyHash,
  tokenHash,
} from '@registry/acl';
import { ACL_POLICIES, ACL_TOKENS, CommandError, Store, type BootstrapResult, type PolicyOut, type TokenOut } from '@registry/store';
import { Driver } from './support/driver';

const TIME = '2024-05-01T10:00:00.123Z';
const uuid = (n: number) => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`;

function driverWithBuiltins(): Driver {
  const d = new Driver();
  expect(d.apply({ type: 'acl.builtins', createTime: TIME })).toBe(true);
  return d;
}

function createPolicy(d: Driver, id: string, name: string, rules = '', extra: { Datacenters?: string[]; Description?: string } = {}): PolicyOut {
  const out = d.apply({ type: 'acl.policy-create', policy: { ID: id, Name: name, Rules: rules, ...extra } });
  if (out instanceof CommandError) throw new Error(out.message);
  return out as PolicyOut;
}

function createToken(d: Driver, n: number, policies: { ID?: string; Name?: string }[] = [], description = ''): TokenOut {
  const out = d.apply({
    type: 'acl.token-create',
    token: { AccessorID: uuid(n), SecretID: uuid(1000 + n), CreateTime: TIME, Description: description, Policies: policies },
  });
  if (out instanceof CommandError) throw new Error(out.message);
  return out as TokenOut;
}

const errorOf = (v: unknown) => (v instanceof CommandError ? v.message : `not an error: ${JSON.stringify(v)}`);

describe('built-ins', () => {
  test('acl.builtins creates the global-management policy and the anonymous token once', () => {
    const d = driverWithBuiltins();
    const policy = d.store.aclPolicy(GLOBAL_MANAGEMENT_POLICY_ID).value!;
    expect(policy).toMatchObject({ Name: 'global-management', Rules: GLOBAL_MANAGEMENT_RULES, CreateIndex: 1, ModifyIndex: 1 });
    expect(policy).not.toHaveProperty('Datacenters');
    const anon = d.store.aclToken(ANONYMOUS_TOKEN_ACCESSOR_ID).value!;
    expect(anon).toMatchObject({ SecretID: 'anonymous', Description: 'Anonymous Token', Policies: null, Local: false, CreateTime: TIME });
    expect(anon.Hash).toBe(tokenHash({ Description: 'Anonymous Token', Local: false, PolicyIDs: [] }));

    d.apply({ type: 'acl.builtins', createTime: 'later' });
    expect(d.store.aclToken(ANONYMOUS_TOKEN_ACCESSOR_ID).value!.CreateIndex).toBe(1);
    expect(d.store.keyIndex(ACL_TOKENS)).toBe(1);
    expect(d.store.checkInvariants()).toEqual([]);
  });
});

describe('bootstrap', () => {
  const boot = (d: Driver, n: number, orCreate = false) =>
    d.apply({
      type: 'acl.bootstrap',
      token: { AccessorID: uuid(n), SecretID: uuid(1000 + n), CreateTime: TIME, Description: 'Bootstrap Token (Global Management)' },
      orCreate,
    }) as BootstrapResult;

  test('works once, then answers the index that used it up', () => {
    const d = new Driver();
    const first = boot(d, 1);
    expect('token' in first && first.token).toMatchObject({
      AccessorID: uuid(1),
      SecretID: uuid(1001),
      Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: 'global-management' }],
    });
    // The built-ins come with the first bootstrap if the leader had not made them yet.
    expect(d.store.aclToken(ANONYMOUS_TOKEN_ACCESSOR_ID).value).not.toBeNull();
    expect(d.store.aclBootstrapIndex()).toBe(1);
    expect(boot(d, 2)).toEqual({ resetIndex: 1 });
    expect(d.store.aclToken(uuid(2)).value).toBeNull();
  });

  test('the management type enters the hash', () => {
    const d = new Driver();
    const r = boot(d, 1) as { token: TokenOut };
    expect(r.token.Hash).toBe(
      tokenHash({ Description: 'Bootstrap Token (Global Management)', Type: 'management', Local: false, PolicyIDs: [GLOBAL_MANAGEMENT_POLICY_ID] }),
    );
  });

  test('orCreate (initial management token) creates after bootstrap, and is idempotent by secret', () => {
    const d = new Driver();
    boot(d, 1);
    const r = boot(d, 2, true) as { token: TokenOut };
    expect(r.token.AccessorID).toBe(uuid(2));
    const again = d.apply({
      type: 'acl.bootstrap',
      token: { AccessorID: uuid(3), SecretID: uuid(1002), CreateTime: TIME, Description: 'x' },
      orCreate: true,
    }) as { token: TokenOut };
    expect(again.token.AccessorID).toBe(uuid(2));
    expect(d.store.aclTokens().value).toHaveLength(3);
  });

  test('orCreate before any bootstrap uses bootstrapping up', () => {
    const d = new Driver();
    boot(d, 1, true);
    expect(boot(d, 2)).toEqual({ resetIndex: 1 });
  });
});

describe('policies', () => {
  test('create stores the policy with its hash and equal indexes', () => {
    const d = driverWithBuiltins();
    const p = createPolicy(d, uuid(1), 'web-read', 'service "web" { policy = "read" }', { Description: 'd', Datacenters: ['dc1'] });
    expect(p).toEqual({
      ID: uuid(1),
      Name: 'web-read',
      Description: 'd',
      Rules: 'service "web" { policy = "read" }',
      Datacenters: ['dc1'],
      Hash: policyHash({ Name: 'web-read', Description: 'd', Rules: 'service "web" { policy = "read" }', Datacenters: ['dc1'] }),
      CreateIndex: 2,
      ModifyIndex: 2,
    });
    expect(d.store.aclPolicy(uuid(1).toUpperCase()).value).toEqual(p);
  });

  test.each([
    ['no name', { Name: '' }, 'Invalid Policy: no Name is set'],
    ['a bad name', { Name: 'a b' }, "Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed"],
    ['a taken name (any case)', { Name: 'Taken' }, 'Invalid Policy: A Policy with Name "Taken" already exists'],
    ['rules that do not parse', { Name: 'x', Rules: 'service "web" {' }, 'Failed to parse ACL rules'],
    ['a bad disposition', { Name: 'x', Rules: 'node "a" { policy = "list" }' }, 'Invalid node policy'],
  ])('create refuses %s', (_what, fields, message) => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(9), 'taken');
    const out = d.apply({ type: 'acl.policy-create', policy: { ID: uuid(1), Rules: '', ...fields } as never });
    expect(errorOf(out)).toContain(message);
    expect(d.store.aclPolicy(uuid(1)).value).toBeNull();
  });

  test('update replaces the policy, keeps CreateIndex, changes the hash; renames show in token links', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    const t = createToken(d, 1, [{ Name: 'p1' }]);
    expect(t.Policies).toEqual([{ ID: uuid(1), Name: 'p1' }]);
    const before = d.store.aclPolicy(uuid(1)).value!;
    const after = d.apply({ type: 'acl.policy-update', policy: { ID: uuid(1), Name: 'p2', Rules: 'operator = "read"' } }) as PolicyOut;
    expect(after.CreateIndex).toBe(before.CreateIndex);
    expect(after.ModifyIndex).toBeGreaterThan(before.ModifyIndex);
    expect(after.Hash).not.toBe(before.Hash);
    expect(d.store.aclToken(uuid(1)).value!.Policies).toEqual([{ ID: uuid(1), Name: 'p2' }]);
  });

  test('update refuses an unknown ID and a name another policy holds', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    createPolicy(d, uuid(2), 'p2');
    expect(errorOf(d.apply({ type: 'acl.policy-update', policy: { ID: uuid(3), Name: 'p3' } }))).toBe(`cannot find policy ${uuid(3)}`);
    expect(errorOf(d.apply({ type: 'acl.policy-update', policy: { ID: uuid(1), Name: 'P2' } }))).toBe(
      'Invalid Policy: A policy with name "P2" already exists',
    );
    // Keeping its own name (in another case) is fine.
    expect(d.apply({ type: 'acl.policy-update', policy: { ID: uuid(1), Name: 'P1' } })).toMatchObject({ Name: 'P1' });
  });

  test('global-management: renamable, but its rules, datacenters and existence are fixed', () => {
    const d = driverWithBuiltins();
    const id = GLOBAL_MANAGEMENT_POLICY_ID;
    expect(errorOf(d.apply({ type: 'acl.policy-update', policy: { ID: id, Name: 'gm', Rules: 'acl = "read"' } }))).toBe(
      'Changing the Rules for the builtin global-management policy is not permitted',
    );
    expect(
      errorOf(d.apply({ type: 'acl.policy-update', policy: { ID: id, Name: 'gm', Rules: GLOBAL_MANAGEMENT_RULES, Datacenters: ['dc2'] } })),
    ).toBe('Changing the Datacenters of the builtin global-management policy is not permitted');
    expect(errorOf(d.apply({ type: 'acl.policy-delete', id }))).toBe('Delete operation not permitted on the builtin global-management policy');
    expect(d.apply({ type: 'acl.policy-update', policy: { ID: id, Name: 'gm', Rules: GLOBAL_MANAGEMENT_RULES } })).toMatchObject({ Name: 'gm' });
  });

  test('delete: unknown is true; links to a deleted policy vanish from token reads', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    createPolicy(d, uuid(2), 'p2');
    createToken(d, 1, [{ ID: uuid(1) }, { ID: uuid(2) }]);
    expect(d.apply({ type: 'acl.policy-delete', id: uuid(7) })).toBe(true);
    expect(d.apply({ type: 'acl.policy-delete', id: uuid(1) })).toBe(true);
    expect(d.store.aclToken(uuid(1)).value!.Policies).toEqual([{ ID: uuid(2), Name: 'p2' }]);
    expect(d.store.aclTokens().value.find((t) => t.AccessorID === uuid(1))!.Policies).toEqual([{ ID: uuid(2), Name: 'p2' }]);
    // A token whose every link is gone lists [] (it had links), unlike a token that never had any (null).
    d.apply({ type: 'acl.policy-delete', id: uuid(2) });
    expect(d.store.aclToken(uuid(1)).value!.Policies).toEqual([]);
  });

  test('the list is ordered by ID, has no Rules, and Datacenters null when unrestricted', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(2), 'b', 'acl = "read"');
    createPolicy(d, uuid(1), 'a', '', { Datacenters: ['dc1'] });
    const list = d.store.aclPolicies().value;
    expect(list.map((p) => p.Name)).toEqual(['global-management', 'a', 'b']);
    expect(list[0]).not.toHaveProperty('Rules');
    expect(list[0].Datacenters).toBeNull();
    expect(list[1].Datacenters).toEqual(['dc1']);
  });
});

describe('tokens', () => {
  test('create resolves links by ID or Name (any case), drops duplicates, stores IDs', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    const t = createToken(d, 1, [{ Name: 'P1' }, { ID: uuid(1) }, { ID: GLOBAL_MANAGEMENT_POLICY_ID }], 'desc');
    expect(t).toEqual({
      AccessorID: uuid(1),
      SecretID: uuid(1001),
      Description: 'desc',
      Policies: [
        { ID: uuid(1), Name: 'p1' },
        { ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: 'global-management' },
      ],
      Local: false,
      CreateTime: TIME,
      Hash: tokenHash({ Description: 'desc', Local: false, PolicyIDs: [uuid(1), GLOBAL_MANAGEMENT_POLICY_ID] }),
      CreateIndex: 3,
      ModifyIndex: 3,
    });
    expect(d.store.aclTokenBySecret(uuid(1001)).value).toEqual(t);
  });

  test.each([
    ['an unknown policy name', [{ Name: 'nope' }], 'No such ACL policy with name "nope"'],
    ['an unknown policy ID', [{ ID: uuid(99) }], `No such policy with ID: ${uuid(99)}`],
  ])('create refuses %s', (_what, policies, message) => {
    const d = driverWithBuiltins();
    const out = d.apply({ type: 'acl.token-create', token: { AccessorID: uuid(1), SecretID: uuid(2), CreateTime: TIME, Policies: policies } });
    expect(errorOf(out)).toBe(message);
    expect(d.store.aclToken(uuid(1)).value).toBeNull();
  });

  test('update replaces fields, keeps secret/CreateTime/CreateIndex, refuses secret and Local changes', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    const t = createToken(d, 1, [{ ID: uuid(1) }], 'old');
    const u = d.apply({ type: 'acl.token-update', token: { AccessorID: uuid(1), Description: 'new' } }) as TokenOut;
    expect(u).toMatchObject({ SecretID: t.SecretID, CreateTime: TIME, CreateIndex: t.CreateIndex, Description: 'new', Policies: null });
    expect(u.Hash).not.toBe(t.Hash);
    expect(errorOf(d.apply({ type: 'acl.token-update', token: { AccessorID: uuid(1), SecretID: uuid(5) } }))).toBe(
      'Changing a tokens SecretID is not permitted',
    );
    expect(errorOf(d.apply({ type: 'acl.token-update', token: { AccessorID: uuid(1), Local: true } }))).toBe(`cannot toggle local mode of ${uuid(1)}`);
    expect(errorOf(d.apply({ type: 'acl.token-update', token: { AccessorID: uuid(8) } }))).toBe(`Cannot find token "${uuid(8)}"`);
    // The same secret may be repeated.
    expect(d.apply({ type: 'acl.token-update', token: { AccessorID: uuid(1), SecretID: t.SecretID, Description: 'x' } })).toMatchObject({
      Description: 'x',
    });
  });

  test('the anonymous token can be updated but not deleted', () => {
    const d = driverWithBuiltins();
    const u = d.apply({
      type: 'acl.token-update',
      token: { AccessorID: ANONYMOUS_TOKEN_ACCESSOR_ID, Description: 'anon', Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID }] },
    }) as TokenOut;
    expect(u).toMatchObject({ SecretID: 'anonymous', Description: 'anon' });
    expect(errorOf(d.apply({ type: 'acl.token-delete', accessorID: ANONYMOUS_TOKEN_ACCESSOR_ID }))).toBe(
      'Delete operation not permitted on the anonymous token',
    );
  });

  test('clone copies policies and Local with new identifiers; an unknown source answers null', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    const t = createToken(d, 1, [{ ID: uuid(1) }], 'orig');
    const c = d.apply({ type: 'acl.token-clone', from: uuid(1), token: { AccessorID: uuid(2), SecretID: uuid(3), CreateTime: TIME } }) as TokenOut;
    expect(c).toMatchObject({ AccessorID: uuid(2), SecretID: uuid(3), Description: 'orig', Policies: t.Policies, Local: false });
    const c2 = d.apply({
      type: 'acl.token-clone',
      from: uuid(1),
      token: { AccessorID: uuid(4), SecretID: uuid(5), CreateTime: TIME, Description: 'copy' },
    }) as TokenOut;
    expect(c2.Description).toBe('copy');
    expect(d.apply({ type: 'acl.token-clone', from: uuid(77), token: { AccessorID: uuid(6), SecretID: uuid(7), CreateTime: TIME } })).toBeNull();
  });

  test('delete is true for known and unknown tokens; the secret stops resolving', () => {
    const d = driverWithBuiltins();
    createToken(d, 1);
    expect(d.apply({ type: 'acl.token-delete', accessorID: uuid(1) })).toBe(true);
    expect(d.apply({ type: 'acl.token-delete', accessorID: uuid(1) })).toBe(true);
    expect(d.store.aclLookup().tokenBySecret(uuid(1001))).toBeUndefined();
    expect(d.store.checkInvariants()).toEqual([]);
  });

  test('the list has no SecretID and filters by policy ID', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1');
    createToken(d, 1, [{ ID: uuid(1) }]);
    createToken(d, 2);
    const all = d.store.aclTokens().value;
    expect(all).toHaveLength(3);
    for (const t of all) expect(t).not.toHaveProperty('SecretID');
    expect(d.store.aclTokens({ policy: uuid(1) }).value.map((t) => t.AccessorID)).toEqual([uuid(1)]);
  });
});

describe('watch keys, lookups and snapshots', () => {
  test('token writes bump acl-tokens, policy writes acl-policies, and token reads watch both', () => {
    const d = driverWithBuiltins();
    const tokenRead = d.store.aclTokens();
    expect(tokenRead.keys.sort()).toEqual([ACL_POLICIES, ACL_TOKENS].sort());
    let tokenWakes = 0;
    let policyWakes = 0;
    d.store.watch([ACL_TOKENS], () => tokenWakes++);
    d.store.watch([ACL_POLICIES], () => policyWakes++);
    createPolicy(d, uuid(1), 'p1');
    expect([tokenWakes, policyWakes]).toEqual([0, 1]);
    createToken(d, 1);
    expect(tokenWakes).toBe(1);
    expect(d.store.aclTokens().index).toBe(d.index);
    expect(d.store.aclPolicies().index).toBe(2);
  });

  test('a refused command changes nothing and moves no index', () => {
    const d = driverWithBuiltins();
    const before = d.store.keyIndex(ACL_TOKENS);
    d.apply({ type: 'acl.token-create', token: { AccessorID: uuid(1), SecretID: uuid(2), CreateTime: TIME, Policies: [{ Name: 'x' }] } });
    expect(d.store.keyIndex(ACL_TOKENS)).toBe(before);
  });

  test('aclLookup gives the resolver stored tokens and policies, and follows a restore', () => {
    const d = driverWithBuiltins();
    createPolicy(d, uuid(1), 'p1', 'operator = "read"');
    createToken(d, 1, [{ ID: uuid(1) }]);
    const snap = d.store.snapshot();
    const other = new Store();
    const lookup = other.aclLookup();
    expect(lookup.tokenBySecret(uuid(1001))).toBeUndefined();
    other.restore(snap);
    expect(lookup.tokenBySecret(uuid(1001))?.Policies).toEqual([{ ID: uuid(1) }]);
    expect(lookup.policyById(uuid(1))?.Rules).toBe('operator = "read"');
    expect(other.aclTokens().value).toEqual(d.store.aclTokens().value);
    expect(other.aclPolicies().value).toEqual(d.store.aclPolicies().value);
    expect(other.aclBootstrapIndex()).toBe(d.store.aclBootstrapIndex());
    expect(other.checkInvariants()).toEqual([]);
  });

  test('a restore wakes ACL watchers', () => {
    const d = driverWithBuiltins();
    const other = new Store();
    let woke = false;
    other.watch([ACL_TOKENS], () => (woke = true));
    other.restore(d.store.snapshot());
    expect(woke).toBe(true);
  });
});
