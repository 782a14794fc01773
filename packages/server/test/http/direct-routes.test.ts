// The direct path's router (find-my-way) picks, for every route of the table, the route Express
// would run — Express's own matcher (path-to-regexp, first match in table order) is the oracle —
// with the same parameters; and it declines what the two could read differently.
import { match } from 'path-to-regexp';
import { DirectRoutes, treePaths } from '../../src/http/direct-routes';
import { routeList } from '../../src/http/routes';

const routes = routeList();
const direct = new DirectRoutes(routes.map((route, i) => ({ route, value: i })));

/** What Express would run: the first route of the method whose path matches, and its decoded params. */
function expressPick(method: string, path: string): { index: number; params: Record<string, string> } | undefined {
  for (let i = 0; i < routes.length; i++) {
    if (routes[i].method !== method) continue;
    const m = match(routes[i].path, { decode: decodeURIComponent, end: true })(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.params)) if (v !== undefined) params[k] = Array.isArray(v) ? v.join('/') : (v as string);
    return { index: i, params };
  }
  return undefined;
}

function directPick(method: string, path: string): { index: number; params: Record<string, string> } | undefined {
  const hit = direct.find(method as never, path);
  if (!hit) return undefined;
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(hit.params)) if (v !== undefined) params[k] = Array.isArray(v) ? v.join('/') : v;
  return { index: hit.value, params };
}

/** Concrete request paths for a route path: each parameter filled with plain and encoded values. */
function samples(expressPath: string): string[] {
  const out: string[] = [];
  for (const { path, wildcard } of treePaths(expressPath)) {
    for (const value of ['x1', 'a%2Fb', 'sp%20ace', 'caf%C3%A9']) {
      const filled = path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, value);
      out.push(wildcard ? filled.replace(/\*$/, `${value}/deep/${value}`) : filled);
    }
  }
  return [...new Set(out)];
}

describe('the direct router agrees with Express on every route', () => {
  test.each(routes.map((r) => [r.method, r.path] as const))('%s %s', (method, path) => {
    for (const sample of samples(path)) {
      expect({ sample, pick: directPick(method, sample) }).toEqual({ sample, pick: expressPick(method, sample) });
    }
  });
});

describe('what the two could read differently goes to Express', () => {
  test.each([
    ['a trailing slash on a parameter route', 'GET', '/v1/catalog/node/'],
    ['a trailing slash on a static route', 'GET', '/v1/catalog/nodes/'],
    ['a doubled slash', 'GET', '/v1/kv//a'],
    ['another letter case', 'GET', '/V1/catalog/nodes'],
    ['a parameter that does not decode', 'GET', '/v1/catalog/node/%E0%A4%A'],
    ['an unknown path', 'GET', '/v1/nothing/here'],
    ['a known path with another method', 'PATCH', '/v1/catalog/nodes'],
  ])('%s', (_what, method, path) => {
    expect(direct.find(method as never, path)).toBeUndefined();
  });

  test('an empty KV tail is no key, as in Express', () => {
    const hit = directPick('GET', '/v1/kv/');
    expect(hit).toBeDefined();
    expect(hit!.params).toEqual({});
    expect(routes[hit!.index].path).toBe('/v1/kv{/*key}');
  });

  test('a path syntax the direct router does not know is refused when the table is built', () => {
    expect(() => treePaths('/v1/a{/:b}/c')).toThrow(/direct router/);
    expect(() => treePaths('/v1/(a|b)')).toThrow(/direct router/);
  });
});

describe('table order where Express and the tree would disagree', () => {
  const table = [
    { method: 'GET', path: '/t/:id' },
    { method: 'GET', path: '/t/self' },
    { method: 'GET', path: '/u/self' },
    { method: 'GET', path: '/u/:id' },
    { method: 'GET', path: '/w{/*rest}' },
    { method: 'GET', path: '/w/:one' },
  ] as const;
  const tree = new DirectRoutes(table.map((route, i) => ({ route, value: i })));

  test('an earlier parameter route keeps a later static one it shadows (Express runs the first match)', () => {
    expect(tree.find('GET', '/t/self')?.value).toBe(0);
  });
  test('an earlier static route wins over a later parameter route in both', () => {
    expect(tree.find('GET', '/u/self')?.value).toBe(2);
    expect(tree.find('GET', '/u/other')?.value).toBe(3);
  });
  test('an earlier wildcard keeps a later parameter route it shadows', () => {
    expect(tree.find('GET', '/w/x')?.value).toBe(4);
  });
});
