import { GLOBAL_MANAGEMENT_RULES, parseRules, RuleError } from '@registry/acl';

function errorOf(text: string): RuleError {
  try {
    parseRules(text);
  } catch (err) {
    if (err instanceof RuleError) return err;
    throw err;
  }
  throw new Error(`expected a RuleError for ${JSON.stringify(text)}`);
}

describe('parseRules: accepted forms', () => {
  test('empty or blank text is an empty policy', () => {
    for (const text of ['', '   \n\t']) {
      const rules = parseRules(text);
      expect(rules.acl).toBeUndefined();
      expect(rules.keyPrefix).toEqual({});
      expect(rules.service).toEqual({});
    }
  });

  test('multi-line HCL blocks with comments in all three styles', () => {
    const rules = parseRules(`
      # hash comment
      key_prefix "" {
        policy = "read"
      }
      // slash comment
      key_prefix "foo/" {
        policy = "write"
      }
      /* block
         comment */
      key "foo/bar" {
        policy = "deny"
      }
      operator = "read"
    `);
    expect(rules.keyPrefix).toEqual({ '': { policy: 'read' }, 'foo/': { policy: 'write' } });
    expect(rules.key).toEqual({ 'foo/bar': { policy: 'deny' } });
    expect(rules.operator).toBe('read');
  });

  test('one-line blocks with two attributes, with or without a comma', () => {
    const rules = parseRules(
      'service "web" { policy = "write", intentions = "read" }\nservice "db" { policy = "read" intentions = "deny" }',
    );
    expect(rules.service).toEqual({
      web: { policy: 'write', intentions: 'read' },
      db: { policy: 'read', intentions: 'deny' },
    });
  });

  test('JSON rule text gives the same result as the HCL form', () => {
    const json = parseRules(
      '{"key_prefix": {"": {"policy": "read"}, "foo/": {"policy": "write"}}, "key": {"foo/bar": {"policy": "deny"}}, "operator": "read"}',
    );
    const hcl = parseRules(
      'key_prefix "" { policy = "read" }\nkey_prefix "foo/" { policy = "write" }\nkey "foo/bar" { policy = "deny" }\noperator = "read"',
    );
    expect(json).toEqual(hcl);
  });

  test('every resource of the language is read into its own field', () => {
    const rules = parseRules(`
      acl = "read"
      keyring = "write"
      operator = "deny"
      agent "a1" { policy = "read" }
      agent_prefix "a" { policy = "write" }
      event "e1" { policy = "read" }
      event_prefix "e" { policy = "deny" }
      key "k1" { policy = "list" }
      key_prefix "k" { policy = "write" }
      node "n1" { policy = "read" }
      node_prefix "n" { policy = "write" }
      query "q1" { policy = "read" }
      query_prefix "q" { policy = "write" }
      service "s1" { policy = "read" }
      service_prefix "s" { policy = "deny" }
      session "x1" { policy = "write" }
      session_prefix "x" { policy = "read" }
    `);
    expect(rules).toEqual({
      acl: 'read', keyring: 'write', operator: 'deny',
      agent: { a1: { policy: 'read' } }, agentPrefix: { a: { policy: 'write' } },
      event: { e1: { policy: 'read' } }, eventPrefix: { e: { policy: 'deny' } },
      key: { k1: { policy: 'list' } }, keyPrefix: { k: { policy: 'write' } },
      node: { n1: { policy: 'read' } }, nodePrefix: { n: { policy: 'write' } },
      query: { q1: { policy: 'read' } }, queryPrefix: { q: { policy: 'write' } },
      service: { s1: { policy: 'read' } }, servicePrefix: { s: { policy: 'deny' } },
      session: { x1: { policy: 'write' } }, sessionPrefix: { x: { policy: 'read' } },
    });
  });

  test('the built-in global-management rules grant write on everything', () => {
    const rules = parseRules(GLOBAL_MANAGEMENT_RULES);
    expect(GLOBAL_MANAGEMENT_RULES.startsWith('\n')).toBe(true);
    expect(rules.acl).toBe('write');
    expect(rules.keyring).toBe('write');
    expect(rules.operator).toBe('write');
    for (const field of ['agentPrefix', 'eventPrefix', 'keyPrefix', 'nodePrefix', 'queryPrefix', 'sessionPrefix'] as const) {
      expect(rules[field]).toEqual({ '': { policy: 'write' } });
    }
    expect(rules.servicePrefix).toEqual({ '': { policy: 'write', intentions: 'write' } });
  });

  test('unknown top-level resources are ignored', () => {
    const rules = parseRules('bogus "x" { policy = "write" }\nsnapshot = "write"\nnode "n" { policy = "read" }');
    expect(rules.node).toEqual({ n: { policy: 'read' } });
    expect(Object.keys(rules)).not.toContain('bogus');
  });

  test('unknown attributes inside a block are ignored', () => {
    expect(parseRules('service "web" { policy = "read" sentinel { code = "x" } }').service).toEqual({
      web: { policy: 'read' },
    });
  });

  test('intentions left out stay unset (the Authorizer applies the default after merging)', () => {
    expect(parseRules('service "web" { policy = "write" }').service.web).toEqual({ policy: 'write' });
    expect(parseRules('service "web" { policy = "write" intentions = "" }').service.web).toEqual({ policy: 'write' });
  });

  test('an empty string for acl, keyring or operator means unset', () => {
    expect(parseRules('acl = ""\noperator = ""').acl).toBeUndefined();
  });

  test('a block repeated for the same segment merges by precedence inside one policy', () => {
    const rules = parseRules('key "a" { policy = "write" }\nkey "a" { policy = "read" }\nkey "a" { policy = "list" }');
    expect(rules.key).toEqual({ a: { policy: 'write' } });
    expect(parseRules('node "n" { policy = "write" }\nnode "n" { policy = "deny" }').node).toEqual({
      n: { policy: 'deny' },
    });
  });

  test('resource and attribute names match case-insensitively, segments do not', () => {
    const rules = parseRules('Service "Web" { Policy = "read" }');
    expect(rules.service).toEqual({ Web: { policy: 'read' } });
  });

  test('results are frozen, so a remembered result cannot be changed by one caller for the next', () => {
    const text = 'node "n" { policy = "read" }';
    const first = parseRules(text);
    expect(() => {
      (first.node as Record<string, unknown>)['n'] = { policy: 'write' };
    }).toThrow(TypeError);
    expect(parseRules(text).node).toEqual({ n: { policy: 'read' } });
  });

  test('segment names that look like object internals are plain keys', () => {
    const rules = parseRules('service "__proto__" { policy = "read" }\nservice "constructor" { policy = "deny" }');
    expect(Object.keys(rules.service).sort()).toEqual(['__proto__', 'constructor']);
    expect(rules.service['__proto__']).toEqual({ policy: 'read' });
  });
});

describe('parseRules: rejected text', () => {
  test('a syntax error reports the parser position', () => {
    const err = errorOf('service "web" {\n  policy = "read"');
    expect(err.message).toMatch(/^Failed to parse ACL rules: At \d+:\d+: /);
  });

  test('a syntax error in JSON rule text reports the parser position', () => {
    expect(errorOf('{"key": {"a": {"policy": read}}}').message).toBe('Failed to parse ACL rules: 1:29: illegal char');
  });

  test.each([
    ['service "web" { policy = "bogus" }', 'Invalid service policy "web": "bogus"'],
    ['node_prefix "" { policy = "admin" }', 'Invalid node_prefix policy "": "admin"'],
    ['key "k" { policy = "sudo" }', 'Invalid key policy "k": "sudo"'],
    ['session "n" { policy = 1 }', 'Invalid session policy "n": 1'],
    ['acl = "list"', 'Invalid acl policy: "list"'],
    ['operator = "admin"', 'Invalid operator policy: "admin"'],
    ['keyring = true', 'Invalid keyring policy: true'],
  ])('an invalid disposition is named with its resource: %s', (text, message) => {
    expect(errorOf(text).message).toContain(message);
  });

  test.each(['agent', 'event', 'node', 'query', 'service', 'session', 'service_prefix', 'node_prefix'])(
    '"list" is rejected on %s',
    (resource) => {
      expect(errorOf(`${resource} "x" { policy = "list" }`).message).toContain(`Invalid ${resource} policy "x": "list"`);
    },
  );

  test('"list" is accepted on key and key_prefix', () => {
    expect(parseRules('key "a" { policy = "list" }\nkey_prefix "b/" { policy = "list" }')).toMatchObject({
      key: { a: { policy: 'list' } },
      keyPrefix: { 'b/': { policy: 'list' } },
    });
  });

  test.each(['list', 'bogus'])('intentions = "%s" is rejected', (value) => {
    expect(errorOf(`service "web" { policy = "read" intentions = "${value}" }`).message).toContain(
      `Invalid service intentions "web": "${value}"`,
    );
  });

  test('a block without a policy is rejected', () => {
    expect(errorOf('service "web" { intentions = "read" }').message).toContain('Invalid service policy "web": missing');
    expect(errorOf('key_prefix "a/" {}').message).toContain('Invalid key_prefix policy "a/": missing');
  });

  test('a resource given as a plain value instead of blocks is rejected', () => {
    expect(errorOf('service = "write"').message).toContain('Invalid service rules');
  });

  test('rule errors are RuleError instances with the error name set', () => {
    const err = errorOf('acl = "nope"');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('RuleError');
  });
});
