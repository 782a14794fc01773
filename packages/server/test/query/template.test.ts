// Template compilation and rendering, interpolation, and the pure execute helpers (filters, shuffle,
// near ordering, source IP), the failover order with a fake remote executor, and the simple cache.
import type { CheckServiceNodeOut, QueryDefinition } from '@registry/store';
import { definitionOf, validateDefinition } from '../../src/queries/definition';
import type { RegistryError } from '../../src/errors';
import { statusOf } from '../../src/http/error-status';
import { filterNodes, orderNear, shuffle, sourceIp } from '../../src/queries/execute';
import { failover, type RemoteDatacenterExecutor } from '../../src/queries/failover';
import { parseInterpolation, evaluate } from '../../src/queries/interpolation';
import { SimpleCache } from '../../src/cache/result-cache';
import { compileRegexp, compileTemplate, TemplateError } from '../../src/queries/template';

function template(name: string, service: Record<string, unknown>, regexp = '', removeEmptyTags = false): QueryDefinition {
  return definitionOf({ Name: name, Template: { Type: 'name_prefix_match', Regexp: regexp, RemoveEmptyTags: removeEmptyTags }, Service: service as never }, 'id');
}

describe('interpolation', () => {
  const vars = { 'name.full': 'geo-db-customer-primary', 'name.prefix': 'geo-db', 'name.suffix': '-customer-primary', 'agent.segment': '', matches: ['geo-db-customer-primary', 'customer', 'primary'] };

  test('variables, match(N) and the $${ escape', () => {
    expect(evaluate(parseInterpolation('${name.full}|${ name.prefix }|${name.suffix}|${match(1)}-${match(2)}|${match(9)}|$${x}'), vars)).toBe(
      'geo-db-customer-primary|geo-db|-customer-primary|customer-primary||${x}',
    );
  });

  test.each([
    ['${name.nope}', 'unknown variable accessed: name.nope'],
    ['${upper(name.full)}', 'unknown function called: upper'],
    ['${name.full', 'unterminated interpolation'],
    ['${1 + 2}', 'invalid expression'],
  ])('%p is refused', (source, message) => {
    expect(() => parseInterpolation(source)).toThrow(message);
  });
});

describe('templates', () => {
  test('the spec example: regexp submatches and name parts in every Service string', () => {
    const q = template(
      'geo-db',
      {
        Service: 'mysql-${match(1)}',
        Tags: ['${match(2)}', '', 'x-${name.suffix}'],
        Near: '${name.full}',
        IgnoreCheckIDs: ['${match(1)}-check'],
        NodeMeta: { role: '${match(2)}' },
        Failover: { Datacenters: ['dc-${match(1)}'] },
      },
      '^geo-db-(.*?)-([^\\-]+?)$',
      true,
    );
    const r = compileTemplate(q).render('geo-db-customer-primary');
    expect(r.Service).toMatchObject({
      Service: 'mysql-customer',
      Tags: ['primary', 'x--customer-primary'],
      Near: 'geo-db-customer-primary',
      IgnoreCheckIDs: ['customer-check'],
      NodeMeta: { role: 'primary' },
      Failover: { NearestN: 0, Datacenters: ['dc-customer'] },
    });
    expect(r.Name).toBe('geo-db');
  });

  test('without RemoveEmptyTags empty tags stay; a non-matching regexp gives empty matches', () => {
    const q = template('x', { Service: 'a${match(1)}', Tags: ['', '${match(0)}'] }, '^nomatch-(.*)$');
    expect(compileTemplate(q).render('x-y').Service).toMatchObject({ Service: 'a', Tags: ['', ''] });
  });

  test('RE2 named groups and inline flags are accepted; what RE2 cannot parse is refused', () => {
    expect(compileRegexp('(?P<env>prod|dev)').exec('dev')).toEqual(['dev', 'dev']);
    expect(compileRegexp('(?i)^WEB').test('web-1')).toBe(true);
    expect(compileRegexp('^a(?i:B)c').test('abc')).toBe(true);
    expect(compileRegexp('(a)|(b)').exec('b')).toEqual(['b', '', 'b']);
    expect(() => compileRegexp('(a)\\1')).toThrow(/^failed compiling template: Bad Regexp: .*invalid escape sequence/);
    expect(() => compileRegexp('a(?=b)')).toThrow(/^failed compiling template: Bad Regexp: .*Perl syntax/);
    expect(() => compileRegexp('([a-')).toThrow(TemplateError);
    expect(() => compileRegexp('([a-')).toThrow(/^failed compiling template: Bad Regexp: /);
  });

  test('a bad Type or a bad interpolation is refused with its path', () => {
    expect(() => compileTemplate({ ...template('x', { Service: 's' }), Template: { Type: 'regex', Regexp: '', RemoveEmptyTags: false } })).toThrow(
      "failed compiling template: Bad Template.Type 'regex'",
    );
    expect(() => compileTemplate(template('x', { Service: 's', Tags: ['ok', '${bad.var}'] }))).toThrow(
      "failed compiling template: Bad format '${bad.var}' in Service.Tags[1]: unknown variable accessed: bad.var",
    );
  });

  test('validateDefinition applies Consul\'s checks as 400s', () => {
    const bad = (body: Record<string, unknown>) => {
      try {
        validateDefinition(definitionOf(body as never, 'id'));
        return 'accepted';
      } catch (err) {
        return `${statusOf((err as RegistryError).kind)} ${(err as Error).message}`;
      }
    };
    expect(bad({ Service: { Service: 'web' } })).toBe('400 Invalid prepared query: Must be bound to a session');
    expect(bad({ Name: 'q', Service: {} })).toBe('400 Invalid prepared query: Must provide a Service name to query');
    expect(bad({ Name: 'q', Token: '<hidden>', Service: { Service: 'web' } })).toContain("Bad Token '<hidden>'");
    expect(bad({ Name: 'q', Service: { Service: 'web', Failover: { NearestN: -1 } } })).toBe("400 Invalid prepared query: Bad NearestN '-1', must be >= 0");
    expect(bad({ Name: 'q', Service: { Service: 'web' }, DNS: { TTL: 'soon' } })).toContain("Bad DNS TTL 'soon'");
    expect(bad({ Name: 'q', Service: { Service: 'web' }, DNS: { TTL: '-5s' } })).toBe("400 Invalid prepared query: Bad DNS TTL '-5000000000', must be >=0");
    expect(bad({ Name: 'q', Service: { Service: 'web', NodeMeta: { 'bad key': 'v' } } })).toContain('Key contains invalid characters');
    expect(bad({ Name: 'q', Service: { Service: 'web' }, DNS: { TTL: '10s' } })).toBe('accepted');
  });
});

function node(name: string, opts: { tags?: string[]; checks?: [string, string][]; meta?: Record<string, string>; svcMeta?: Record<string, string> } = {}): CheckServiceNodeOut {
  return {
    Node: { ID: '', Node: name, Address: `10.0.0.${name.length}`, Datacenter: 'dc1', TaggedAddresses: null, Meta: opts.meta ?? {}, CreateIndex: 1, ModifyIndex: 1 },
    Service: { ID: 'web', Service: 'web', Tags: opts.tags ?? [], Meta: opts.svcMeta ?? {} } as never,
    Checks: (opts.checks ?? []).map(([CheckID, Status]) => ({ CheckID, Status }) as never),
  };
}

describe('execute helpers', () => {
  const svc = (extra: Record<string, unknown>) => definitionOf({ Service: { Service: 'web', ...extra } as never }, 'id').Service;
  const names = (ns: CheckServiceNodeOut[]) => ns.map((n) => n.Node.Node);
  const nodes = [
    node('ok', { tags: ['Primary', 'v1'], checks: [['a', 'passing']], meta: { rack: 'r1' }, svcMeta: { ver: '1' } }),
    node('warn', { tags: ['v1'], checks: [['a', 'warning']], meta: { rack: 'r2' } }),
    node('crit', { tags: ['v1'], checks: [['a', 'passing'], ['bad', 'critical']] }),
  ];

  test('critical instances go; OnlyPassing also drops warning; IgnoreCheckIDs brings them back', () => {
    expect(names(filterNodes(svc({}), nodes))).toEqual(['ok', 'warn']);
    expect(names(filterNodes(svc({ OnlyPassing: true }), nodes))).toEqual(['ok']);
    expect(names(filterNodes(svc({ IgnoreCheckIDs: ['bad'] }), nodes))).toEqual(['ok', 'warn', 'crit']);
  });

  test('tags are case-insensitive, all required, and ! excludes; node and service meta must match', () => {
    expect(names(filterNodes(svc({ Tags: ['primary'] }), nodes))).toEqual(['ok']);
    expect(names(filterNodes(svc({ Tags: ['v1', '!PRIMARY'] }), nodes))).toEqual(['warn']);
    expect(names(filterNodes(svc({ NodeMeta: { rack: 'r2' } }), nodes))).toEqual(['warn']);
    expect(names(filterNodes(svc({ ServiceMeta: { ver: '1' } }), nodes))).toEqual(['ok']);
  });

  test('shuffle is a permutation; near ordering puts the source first when it is in the top ten', () => {
    const many = Array.from({ length: 20 }, (_, i) => node(`n${i}`));
    expect(names(shuffle(many)).sort()).toEqual(names(many).sort());
    const reversed = (_: string, items: readonly CheckServiceNodeOut[]) => [...items].reverse();
    expect(names(orderNear(many.slice(0, 5), 'n3', reversed))).toEqual(['n3', 'n4', 'n2', 'n1', 'n0']);
    expect(names(orderNear(many, 'n0', reversed))[0]).toBe('n19');
  });

  test('the source IP is the first X-Forwarded-For entry, else the peer address', () => {
    expect(sourceIp('198.51.100.7, 10.0.0.1', '::ffff:127.0.0.1')).toBe('198.51.100.7');
    expect(sourceIp(undefined, '::ffff:127.0.0.1')).toBe('127.0.0.1');
  });
});

describe('failover', () => {
  const query = (nearestN: number, dcs: string[] | null) =>
    definitionOf({ Name: 'q', Service: { Service: 'web', Failover: { NearestN: nearestN, Datacenters: dcs } } }, 'id');
  const fake = (answers: Record<string, number>, asked: string[]): RemoteDatacenterExecutor => ({
    datacentersByDistance: () => ['dc2', 'dc3', 'dc4'],
    execute: async (dc) => {
      asked.push(dc);
      if (!(dc in answers)) throw new Error('unreachable');
      return { Nodes: Array.from({ length: answers[dc] }, (_, i) => node(`${dc}-${i}`)), DNS: { TTL: '' } };
    },
  });

  test('NearestN first, then the listed datacenters, each once, unknown ones skipped, stopping at the first with nodes', async () => {
    const asked: string[] = [];
    const r = await failover(query(2, ['dc3', 'nowhere', 'dc4']), 0, fake({ dc2: 0, dc3: 0, dc4: 2 }, asked));
    expect(asked).toEqual(['dc2', 'dc3', 'dc4']);
    expect(r).toMatchObject({ datacenter: 'dc4', failovers: 3 });
    expect(r.nodes).toHaveLength(2);
  });

  test('errors count as tries and the search goes on; nothing found answers no datacenter', async () => {
    const asked: string[] = [];
    const r = await failover(query(0, ['dc3', 'dc2']), 0, fake({ dc2: 0 }, asked));
    expect(asked).toEqual(['dc3', 'dc2']);
    expect(r).toEqual({ nodes: [], datacenter: undefined, failovers: 2 });
  });

  test('no failover settings ask nobody', async () => {
    const asked: string[] = [];
    expect((await failover(query(0, null), 0, fake({}, asked))).failovers).toBe(0);
    expect(asked).toEqual([]);
  });
});

describe('simple cache', () => {
  test('miss, hit with age, max-age and must-revalidate refetch, stale-if-error serves the old value', async () => {
    let now = 0;
    const cache = new SimpleCache<number>(10, 3_600_000, () => now);
    let n = 0;
    const fetch = async () => ++n;
    const none = { mustRevalidate: false };
    expect(await cache.get('k', none, fetch)).toEqual({ value: 1, hit: false, ageS: 0 });
    now = 5_000;
    expect(await cache.get('k', none, fetch)).toEqual({ value: 1, hit: true, ageS: 5 });
    expect(await cache.get('k', { maxAgeS: 10, mustRevalidate: false }, fetch)).toMatchObject({ hit: true });
    expect(await cache.get('k', { maxAgeS: 2, mustRevalidate: false }, fetch)).toEqual({ value: 2, hit: false, ageS: 0 });
    expect(await cache.get('k', { mustRevalidate: true }, fetch)).toMatchObject({ value: 3, hit: false });
    now = 20_000;
    const failing = async (): Promise<number> => {
      throw new Error('servers unreachable');
    };
    expect(await cache.get('k', { mustRevalidate: true, staleIfErrorS: 30 }, failing)).toEqual({ value: 3, hit: true, ageS: 15 });
    await expect(cache.get('k', { mustRevalidate: true, staleIfErrorS: 10 }, failing)).rejects.toThrow('servers unreachable');
  });

  test('the oldest entries go past the bound', async () => {
    const cache = new SimpleCache<number>(2);
    for (const k of ['a', 'b', 'c']) await cache.get(k, { mustRevalidate: false }, async () => 1);
    expect(cache.size).toBe(2);
  });
});
