// The direct path's route lookup (app.ts): a find-my-way radix tree built from the same route table
// Express is given, so the ordinary request is matched by a public router instead of by walking
// Express's private layer stack. Express still answers everything this table does not match.
//
// The two must agree on every request the direct path takes. They do by construction where it
// matters: a path the tree matches is one Express matches to the same route (a test walks every
// route, packages/server/test/http/direct-routes.test.ts), and what could differ is left to Express —
// no match here (other letter case, a trailing or doubled slash, an over-long or undecodable
// parameter, an empty one) falls through to it.
import FindMyWay from 'find-my-way';
import type { Method, Route } from './route';

export type RawParams = Record<string, string | string[] | undefined>;

export interface DirectMatch<T> {
  value: T;
  params: RawParams;
}

/** One find-my-way path for an Express path, and the name a trailing `*` wildcard had there. */
interface TreePath {
  path: string;
  wildcard?: string;
}

/**
 * The find-my-way paths an Express 5 route path stands for. The table uses plain segments,
 * `:name` parameters and one optional tail, `{/:name}` or `{/*name}`; anything else is refused
 * when the table is built, so a new kind of path cannot silently take another road.
 */
export function treePaths(expressPath: string): TreePath[] {
  const open = expressPath.indexOf('{');
  if (open < 0) return [{ path: checked(expressPath, expressPath) }];
  const base = expressPath.slice(0, open);
  const tail = expressPath.slice(open);
  const param = /^\{\/:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(tail);
  if (param) return [{ path: checked(base, expressPath) }, { path: checked(`${base}/:${param[1]}`, expressPath) }];
  const wildcard = /^\{\/\*([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(tail);
  if (wildcard) return [{ path: checked(base, expressPath) }, { path: `${checked(base, expressPath)}/*`, wildcard: wildcard[1] }];
  throw new Error(`route path ${expressPath}: only a trailing {/:name} or {/*name} is supported by the direct router`);
}

function checked(path: string, whole: string): string {
  if (/[{}*()?+]/.test(path)) throw new Error(`route path ${whole}: unsupported syntax for the direct router`);
  return path;
}

export class DirectRoutes<T> {
  private readonly tree = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 1024 });

  constructor(routes: readonly { route: Pick<Route<unknown>, 'method' | 'path'>; value: T }[]) {
    const earlier = new Map<string, string[][]>();
    for (const { route, value } of routes) {
      const paths = treePaths(route.path);
      const before = earlier.get(route.method) ?? [];
      for (const { path, wildcard } of paths) {
        const segments = path.split('/');
        // Express runs the first route that matches; find-my-way the most specific one. Where an
        // earlier route could take a request this path would win in the tree, leave the path out:
        // such requests go to Express, which runs the earlier route as it always did.
        if (before.some((a) => shadows(a, segments))) continue;
        // The handler is unused (find() only); the store carries what the direct path needs.
        this.tree.on(route.method, path, noop, { value, wildcard });
      }
      earlier.set(route.method, [...before, ...paths.map((p) => p.path.split('/'))]);
    }
  }

  /** The route for `method` and the raw (still encoded) `pathname`, or undefined: let Express decide. */
  find(method: Method, pathname: string): DirectMatch<T> | undefined {
    // Doubled slashes split into empty segments differently in the two routers.
    if (pathname.includes('//')) return undefined;
    let found: ReturnType<typeof this.tree.find>;
    try {
      found = this.tree.find(method, pathname);
    } catch {
      return undefined; // a parameter that does not decode: Express answers it (400)
    }
    if (!found) return undefined;
    const { value, wildcard } = found.store as { value: T; wildcard?: string };
    const params: RawParams = {};
    for (const k in found.params) {
      const v = found.params[k];
      // find-my-way gives `/v1/catalog/node/` an empty :node; Express matches the bare route.
      if (v === '' && k !== '*') return undefined;
      params[k] = v;
    }
    if (wildcard !== undefined) {
      const rest = params['*'];
      delete params['*'];
      // Express leaves an empty tail unset (`/v1/kv/` has no key); so does this.
      if (rest) params[wildcard] = rest;
    }
    return { value, params };
  }
}

function noop(): void {}

const isParam = (segment: string) => segment.startsWith(':');

/**
 * Whether earlier path `a` matches some request that later path `b` also matches, where the tree
 * would choose `b` (it prefers, segment by segment, a static segment to a parameter and a
 * parameter to a wildcard) — or `b` is `a` again. Segments compare exactly: a request whose
 * letter case differs from a static segment never matches in the tree.
 */
function shadows(a: string[], b: string[]): boolean {
  for (let i = 0; ; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return x === y; // both ended: the same pattern
    if (x === '*') return true; // a's wildcard takes whatever b has here, and the tree prefers b
    if (y === '*') return false; // b's wildcard only wins where a has run out or is static
    if (isParam(x) && !isParam(y)) return true;
    if (!isParam(x) && isParam(y)) return false; // the tree prefers a here, as Express does
    if (!isParam(x) && x !== y) return false; // two different static segments: no request matches both
    // The same static segment, or two parameters: go on.
  }
}
