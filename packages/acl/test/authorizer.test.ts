import { Authorizer, DefaultPolicy, GLOBAL_MANAGEMENT_RULES, parseRules } from '@registry/acl';

function authz(parent: DefaultPolicy, ...policies: string[]): Authorizer {
  return new Authorizer(policies.map(parseRules), parent);
}

type NamedCheck =
  | 'agentRead' | 'agentWrite' | 'eventRead' | 'eventWrite' | 'keyRead' | 'keyList' | 'keyWrite'
  | 'keyWritePrefix' | 'nodeRead' | 'nodeWrite' | 'queryRead' | 'queryWrite' | 'serviceRead'
  | 'serviceWrite' | 'intentionRead' | 'intentionWrite' | 'sessionRead' | 'sessionWrite';
type ScalarCheck =
  | 'aclRead' | 'aclWrite' | 'keyringRead' | 'keyringWrite' | 'operatorRead' | 'operatorWrite'
  | 'intentionDefaultAllow' | 'isManagement' | 'snapshot';

interface Row {
  readonly why: string;
  readonly parent: DefaultPolicy;
  readonly policies: readonly string[];
  readonly check: NamedCheck | ScalarCheck;
  readonly name?: string;
  readonly expect: boolean;
}

function run(row: Row): boolean {
  const a = authz(row.parent, ...row.policies);
  if (row.name === undefined) return (a[row.check as ScalarCheck] as () => boolean).call(a);
  return (a[row.check as NamedCheck] as (n: string) => boolean).call(a, row.name);
}

const table: readonly Row[] = [
  // exact over prefix
  { why: 'exact rule beats a longer-matching prefix rule', parent: 'deny', check: 'serviceWrite', name: 'web',
    policies: ['service "web" { policy = "read" }\nservice_prefix "web" { policy = "write" }'], expect: false },
  { why: 'exact rule beats the catch-all prefix', parent: 'deny', check: 'serviceRead', name: 'web',
    policies: ['service "web" { policy = "deny" }\nservice_prefix "" { policy = "write" }'], expect: false },
  { why: 'exact rule does not apply to longer names', parent: 'deny', check: 'serviceRead', name: 'web2',
    policies: ['service "web" { policy = "write" }'], expect: false },
  { why: 'exact rule does not apply to shorter names', parent: 'deny', check: 'nodeRead', name: 'we',
    policies: ['node "web" { policy = "write" }'], expect: false },
  { why: 'exact rule on the empty name matches only the empty name', parent: 'deny', check: 'keyRead', name: 'a',
    policies: ['key "" { policy = "read" }'], expect: false },
  // longest prefix
  { why: 'longest matching prefix wins (deeper write)', parent: 'deny', check: 'keyWrite', name: 'app/config/x',
    policies: ['key_prefix "" { policy = "read" }\nkey_prefix "app/" { policy = "deny" }\nkey_prefix "app/config/" { policy = "write" }'], expect: true },
  { why: 'longest matching prefix wins (shallower rule ignored)', parent: 'allow', check: 'keyRead', name: 'app/data',
    policies: ['key_prefix "" { policy = "write" }\nkey_prefix "app/" { policy = "deny" }\nkey_prefix "app/config/" { policy = "write" }'], expect: false },
  { why: 'a prefix that is not a prefix of the name is ignored', parent: 'deny', check: 'sessionWrite', name: 'node-1',
    policies: ['session_prefix "node-2" { policy = "write" }\nsession_prefix "node" { policy = "read" }'], expect: false },
  { why: 'prefix rule matches the name equal to the prefix', parent: 'deny', check: 'queryWrite', name: 'q',
    policies: ['query_prefix "q" { policy = "write" }'], expect: true },
  { why: 'the empty prefix matches every name', parent: 'deny', check: 'eventRead', name: 'anything',
    policies: ['event_prefix "" { policy = "read" }'], expect: true },
  // a found rule is final
  { why: 'found read rule denies write even with default allow', parent: 'allow', check: 'serviceWrite', name: 'db',
    policies: ['service "db" { policy = "read" }'], expect: false },
  { why: 'found deny rule denies read with default allow', parent: 'allow', check: 'agentRead', name: 'n1',
    policies: ['agent_prefix "n" { policy = "deny" }'], expect: false },
  { why: 'found list rule does not grant key write with default allow', parent: 'allow', check: 'keyWrite', name: 'a/b',
    policies: ['key_prefix "a/" { policy = "list" }'], expect: false },
  // dispositions
  { why: 'write grants read', parent: 'deny', check: 'nodeRead', name: 'n', policies: ['node "n" { policy = "write" }'], expect: true },
  { why: 'write grants list', parent: 'deny', check: 'keyList', name: 'a/', policies: ['key_prefix "a/" { policy = "write" }'], expect: true },
  { why: 'list grants read', parent: 'deny', check: 'keyRead', name: 'a/x', policies: ['key_prefix "a/" { policy = "list" }'], expect: true },
  { why: 'list grants list', parent: 'deny', check: 'keyList', name: 'a/', policies: ['key_prefix "a/" { policy = "list" }'], expect: true },
  { why: 'read does not grant list', parent: 'allow', check: 'keyList', name: 'a/', policies: ['key_prefix "a/" { policy = "read" }'], expect: false },
  { why: 'read grants read', parent: 'deny', check: 'keyRead', name: 'a/', policies: ['key_prefix "a/" { policy = "read" }'], expect: true },
  // parent only when nothing matched
  { why: 'no rule matches: default allow grants', parent: 'allow', check: 'serviceWrite', name: 'api',
    policies: ['service "db" { policy = "read" }'], expect: true },
  { why: 'no rule matches: default deny refuses', parent: 'deny', check: 'serviceRead', name: 'api',
    policies: ['service "db" { policy = "write" }'], expect: false },
  { why: 'unset operator falls to default allow', parent: 'allow', check: 'operatorWrite', policies: ['acl = "read"'], expect: true },
  { why: 'operator read does not grant write with default allow', parent: 'allow', check: 'operatorWrite', policies: ['operator = "read"'], expect: false },
  { why: 'keyring write grants keyring read', parent: 'deny', check: 'keyringRead', policies: ['keyring = "write"'], expect: true },
  // the parent never grants ACLs
  { why: 'default allow does not grant acl read', parent: 'allow', check: 'aclRead', policies: [], expect: false },
  { why: 'default allow does not grant acl write', parent: 'allow', check: 'aclWrite', policies: [], expect: false },
  { why: 'default allow does not grant snapshots', parent: 'allow', check: 'snapshot', policies: [], expect: false },
  { why: 'acl read grants acl read', parent: 'deny', check: 'aclRead', policies: ['acl = "read"'], expect: true },
  { why: 'acl read is not management', parent: 'deny', check: 'isManagement', policies: ['acl = "read"'], expect: false },
  { why: 'acl write is management', parent: 'deny', check: 'isManagement', policies: ['acl = "write"'], expect: true },
  // merge precedence across policies, either order
  ...(['deny', 'allow'] as const).flatMap((parent): Row[] => [
    { why: `deny beats write across policies (default ${parent})`, parent, check: 'serviceRead', name: 'web',
      policies: ['service "web" { policy = "write" }', 'service "web" { policy = "deny" }'], expect: false },
    { why: `deny beats write across policies, reversed (default ${parent})`, parent, check: 'serviceRead', name: 'web',
      policies: ['service "web" { policy = "deny" }', 'service "web" { policy = "write" }'], expect: false },
  ]),
  { why: 'write beats read across policies', parent: 'deny', check: 'nodeWrite', name: 'n',
    policies: ['node "n" { policy = "read" }', 'node "n" { policy = "write" }'], expect: true },
  { why: 'write beats read across policies, reversed', parent: 'deny', check: 'nodeWrite', name: 'n',
    policies: ['node "n" { policy = "write" }', 'node "n" { policy = "read" }'], expect: true },
  { why: 'write beats list across policies', parent: 'deny', check: 'keyWrite', name: 'k',
    policies: ['key "k" { policy = "list" }', 'key "k" { policy = "write" }'], expect: true },
  { why: 'list beats read across policies', parent: 'deny', check: 'keyList', name: 'k',
    policies: ['key "k" { policy = "list" }', 'key "k" { policy = "read" }'], expect: true },
  { why: 'list beats read across policies, reversed', parent: 'deny', check: 'keyList', name: 'k',
    policies: ['key "k" { policy = "read" }', 'key "k" { policy = "list" }'], expect: true },
  { why: 'acl deny in one policy beats acl write in another', parent: 'deny', check: 'aclWrite',
    policies: ['acl = "write"', 'acl = "deny"'], expect: false },
  { why: 'exact and prefix rules of the same segment stay separate when merging', parent: 'deny', check: 'serviceWrite', name: 'web',
    policies: ['service_prefix "web" { policy = "deny" }', 'service "web" { policy = "write" }'], expect: true },
  { why: 'a prefix deny in one policy still loses to an exact rule in another for its name', parent: 'deny', check: 'serviceWrite', name: 'web-1',
    policies: ['service_prefix "web" { policy = "deny" }', 'service "web" { policy = "write" }'], expect: false },
  // intentions
  { why: 'intentions default to read for a write service rule', parent: 'deny', check: 'intentionRead', name: 'web',
    policies: ['service "web" { policy = "write" }'], expect: true },
  { why: 'default intentions of a write service rule do not grant intention write', parent: 'allow', check: 'intentionWrite', name: 'web',
    policies: ['service "web" { policy = "write" }'], expect: false },
  { why: 'intentions default to read for a read service rule', parent: 'deny', check: 'intentionRead', name: 'web',
    policies: ['service_prefix "" { policy = "read" }'], expect: true },
  { why: 'intentions default to deny for a deny service rule', parent: 'allow', check: 'intentionRead', name: 'web',
    policies: ['service "web" { policy = "deny" }'], expect: false },
  { why: 'explicit intentions write with service read', parent: 'deny', check: 'intentionWrite', name: 'web',
    policies: ['service "web" { policy = "read" intentions = "write" }'], expect: true },
  { why: 'explicit intentions deny with service write', parent: 'allow', check: 'intentionRead', name: 'web',
    policies: ['service "web" { policy = "write" intentions = "deny" }'], expect: false },
  { why: 'intentions merge independently of the service policy', parent: 'deny', check: 'intentionWrite', name: 'web',
    policies: ['service "web" { policy = "deny" intentions = "write" }', 'service "web" { policy = "write" intentions = "read" }'], expect: true },
  { why: 'the service policy merges independently of intentions', parent: 'allow', check: 'serviceRead', name: 'web',
    policies: ['service "web" { policy = "deny" intentions = "write" }', 'service "web" { policy = "write" intentions = "read" }'], expect: false },
  { why: 'the intentions default is applied after merging: a said value is not outranked by an unsaid one', parent: 'deny', check: 'intentionRead', name: 'web',
    policies: ['service "web" { policy = "deny" }', 'service "web" { policy = "read" intentions = "read" }'], expect: true },
  { why: 'intentions look up exact before prefix like services', parent: 'deny', check: 'intentionWrite', name: 'web',
    policies: ['service_prefix "" { policy = "write" intentions = "write" }\nservice "web" { policy = "read" }'], expect: false },
  { why: 'the intention default comes from the default policy (allow) whatever the rules', parent: 'allow', check: 'intentionDefaultAllow',
    policies: ['service_prefix "" { policy = "deny" intentions = "deny" }'], expect: true },
  { why: 'the intention default comes from the default policy (deny) whatever the rules', parent: 'deny', check: 'intentionDefaultAllow',
    policies: [GLOBAL_MANAGEMENT_RULES], expect: false },
  // keyWritePrefix
  { why: 'recursive write allowed under a write prefix', parent: 'deny', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "app/" { policy = "write" }'], expect: true },
  { why: 'recursive write refused when an exact rule below is not write', parent: 'deny', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "app/" { policy = "write" }\nkey "app/locked" { policy = "read" }'], expect: false },
  { why: 'recursive write refused when a prefix rule below denies', parent: 'allow', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "" { policy = "write" }\nkey_prefix "app/secret/" { policy = "deny" }'], expect: false },
  { why: 'recursive write refused when a rule below only lists', parent: 'deny', check: 'keyWritePrefix', name: 'ap',
    policies: ['key_prefix "" { policy = "write" }\nkey_prefix "app/" { policy = "list" }'], expect: false },
  { why: 'recursive write ignores non-write rules outside the prefix', parent: 'deny', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "" { policy = "write" }\nkey_prefix "apple/" { policy = "deny" }\nkey "ap" { policy = "deny" }'], expect: true },
  { why: 'recursive write refused when the governing prefix is read', parent: 'allow', check: 'keyWritePrefix', name: 'app/x/',
    policies: ['key_prefix "app/" { policy = "read" }'], expect: false },
  { why: 'recursive write ignores an exact write rule on the way (only prefix rules govern)', parent: 'deny', check: 'keyWritePrefix', name: 'app/x',
    policies: ['key "app/" { policy = "write" }'], expect: false },
  { why: 'recursive write with no rules falls to default allow', parent: 'allow', check: 'keyWritePrefix', name: 'app/', policies: [], expect: true },
  { why: 'recursive write with no governing prefix and default allow, but a deny below', parent: 'allow', check: 'keyWritePrefix', name: 'app/',
    policies: ['key "app/x" { policy = "deny" }'], expect: false },
  { why: 'recursive write with no governing prefix and default deny', parent: 'deny', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "app/x/" { policy = "write" }'], expect: false },
  { why: 'recursive write of the whole store needs write at the root', parent: 'deny', check: 'keyWritePrefix', name: '',
    policies: [GLOBAL_MANAGEMENT_RULES], expect: true },
  { why: 'an exact rule equal to the prefix counts as below it', parent: 'deny', check: 'keyWritePrefix', name: 'app/',
    policies: ['key_prefix "" { policy = "write" }\nkey "app/" { policy = "read" }'], expect: false },
];

describe('Authorizer resolution table', () => {
  test.each(table.map((row) => [row.why, row] as const))('%s', (_why, row) => {
    expect(run(row)).toBe(row.expect);
  });
});

describe('Authorizer static authorizers', () => {
  const named: NamedCheck[] = [
    'agentRead', 'agentWrite', 'eventRead', 'eventWrite', 'keyRead', 'keyList', 'keyWrite', 'keyWritePrefix',
    'nodeRead', 'nodeWrite', 'queryRead', 'queryWrite', 'serviceRead', 'serviceWrite', 'intentionRead',
    'intentionWrite', 'sessionRead', 'sessionWrite',
  ];
  const nonAcl: ScalarCheck[] = ['keyringRead', 'keyringWrite', 'operatorRead', 'operatorWrite', 'intentionDefaultAllow'];
  const acl: ScalarCheck[] = ['aclRead', 'aclWrite', 'isManagement', 'snapshot'];

  function answers(a: Authorizer, checks: readonly (NamedCheck | ScalarCheck)[]): boolean[] {
    return checks.map((c) => (a[c] as (n?: string) => boolean).call(a, 'x'));
  }

  test('allowAll grants everything but the ACL system', () => {
    expect(answers(Authorizer.allowAll(), [...named, ...nonAcl]).every(Boolean)).toBe(true);
    expect(answers(Authorizer.allowAll(), acl).some(Boolean)).toBe(false);
  });

  test('denyAll grants nothing', () => {
    expect(answers(Authorizer.denyAll(), [...named, ...nonAcl, ...acl]).some(Boolean)).toBe(false);
  });

  test('manage grants everything including ACLs', () => {
    expect(answers(Authorizer.manage(), [...named, ...nonAcl, ...acl]).every(Boolean)).toBe(true);
  });

  test('the global-management policy grants everything even with default deny', () => {
    const a = authz('deny', GLOBAL_MANAGEMENT_RULES);
    expect(answers(a, [...named, ...acl, 'keyringWrite', 'operatorWrite']).every(Boolean)).toBe(true);
  });

  test('a token with no policies behaves as its default policy', () => {
    expect(answers(authz('allow'), named).every(Boolean)).toBe(true);
    expect(answers(authz('deny'), named).some(Boolean)).toBe(false);
  });

  test('the agent master token may write its own agent and read every node, nothing else', () => {
    const a = Authorizer.agentMaster('node-1');
    expect(a.agentWrite('node-1')).toBe(true);
    expect(a.agentRead('node-2')).toBe(false);
    expect(a.nodeRead('anything')).toBe(true);
    expect(a.nodeWrite('node-1')).toBe(false);
    expect(a.serviceRead('web')).toBe(false);
    expect(a.aclRead()).toBe(false);
  });
});

describe('Authorizer lookups over many rules', () => {
  test('a token with many overlapping prefix rules resolves each name to its own longest prefix', () => {
    // Rules for "", "s", "se", …: write on even lengths, deny on odd ones.
    const name = 'service-with-a-fairly-long-name';
    const rules = Array.from({ length: name.length + 1 }, (_, n) =>
      `service_prefix "${name.slice(0, n)}" { policy = "${n % 2 === 0 ? 'write' : 'deny'}" }`,
    ).join('\n');
    const a = authz('deny', rules);
    for (let n = 0; n <= name.length; n++) {
      expect([n, a.serviceWrite(name.slice(0, n))]).toEqual([n, n % 2 === 0]);
    }
    expect(a.serviceWrite(`${name}-and-more`)).toBe(name.length % 2 === 0);
    expect(a.serviceWrite('x')).toBe(true);
  });

  test('50 policies of 20 rules each merge into the same answers as the brute-force definition', () => {
    const names = ['', 'a', 'ab', 'abc', 'b', 'ba', 'web', 'web-1', 'web-10', 'db', 'd'];
    const accesses = ['read', 'write', 'deny'] as const;
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const policies: string[] = [];
    const exact = new Map<string, string[]>();
    const prefix = new Map<string, string[]>();
    for (let p = 0; p < 50; p++) {
      const lines: string[] = [];
      for (let r = 0; r < 20; r++) {
        const seg = names[next(names.length)];
        const access = accesses[next(3)];
        const isPrefix = next(2) === 0;
        lines.push(`node${isPrefix ? '_prefix' : ''} "${seg}" { policy = "${access}" }`);
        const map = isPrefix ? prefix : exact;
        map.set(seg, [...(map.get(seg) ?? []), access]);
      }
      policies.push(lines.join('\n'));
    }
    const strongest = (list: string[]): string =>
      list.includes('deny') ? 'deny' : list.includes('write') ? 'write' : 'read';
    const expected = (name: string): string | undefined => {
      if (exact.has(name)) return strongest(exact.get(name)!);
      for (let n = name.length; n >= 0; n--) {
        const p = prefix.get(name.slice(0, n));
        if (p) return strongest(p);
      }
      return undefined;
    };
    const a = authz('allow', ...policies);
    for (const probe of [...names, 'webx', 'web-100', 'zzz', 'ab-c']) {
      const want = expected(probe);
      expect([probe, a.nodeRead(probe), a.nodeWrite(probe)]).toEqual([
        probe,
        want === undefined ? true : want !== 'deny',
        want === undefined ? true : want === 'write',
      ]);
    }
  });
});
