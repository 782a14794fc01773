// The layering, checked rather than hoped for (issue 13): no import circles in any package, and
// the server's layers point one way — http/ → endpoints/ → rpc/ → store/raft — so nothing below
// the HTTP edge imports from http/ (only the agent, which wires everything, and the package index).
// agent/ is the roof only (issue #26 item 1): nothing but the package's entry point imports it, and
// what every folder shares — the logger, leader duties, the log tap, runner failures, durable
// files — is runtime/, the foundation, which imports nothing of the server but itself. The agent's
// own services and checks are local/ (issue #26 item 2), on the check runners (checks/), built by
// agent/ and used by the agent routes; connect/ follows it and is not imported by it. The agent's
// caches are cache/ (issue #26 item 3): the background-refreshed agent cache and the prepared-query
// result cache, which know no area — what they keep is what the fetch they are given returns.
import { join, resolve } from 'node:path';
import { circles, importGraph } from './import-graph';

const PACKAGES = resolve(__dirname, '../../..');

describe('import graph', () => {
  test.each(['raft', 'store', 'acl', 'ca', 'server', 'cli'])('%s has no import circles', (pkg) => {
    expect(circles(importGraph(join(PACKAGES, pkg, 'src')))).toEqual([]);
  });

  const server = importGraph(join(PACKAGES, 'server', 'src'));
  const edges = [...server.edges].flatMap(([from, tos]) => [...tos].map((to) => `${from} -> ${to}`));
  const layer = (file: string) => file.split('/')[0];

  test('nothing below the HTTP edge imports http/', () => {
    const allowed = new Set(['http', 'agent', 'index']);
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(to) === 'http' && !allowed.has(layer(from));
    })).toEqual([]);
  });

  test('rpc/ imports no layer above it (endpoints, http, areas, connect, agent, ...)', () => {
    // time.ts, like errors.ts, is importable from anywhere (the one time module, issue #36).
    const below = new Set(['rpc', 'errors', 'time', 'acl', 'sessions']);
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'rpc' && !below.has(layer(to));
    })).toEqual([]);
  });

  test('endpoints/ import neither http/ nor the agent', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'endpoints' && ['http', 'agent'].includes(layer(to));
    })).toEqual([]);
  });

  test('nothing but the entry point (index.ts) imports agent/', () => {
    const allowed = new Set(['agent', 'index']);
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(to) === 'agent' && !allowed.has(layer(from));
    })).toEqual([]);
  });

  test('runtime/ imports nothing of the server but runtime/', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'runtime' && layer(to) !== 'runtime';
    })).toEqual([]);
  });

  // A standalone proxy serves its connection counts at prometheus_bind_addr with the agent's own
  // metrics series (proxy/metrics-server.ts); metrics/ loads nothing of the server but prom-client.
  test('proxy/ imports only itself, the logger and metrics/: it runs as its own process, a client of the HTTP API', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'proxy' && layer(to) !== 'proxy' && to !== 'runtime/logger' && layer(to) !== 'metrics';
    })).toEqual([]);
    expect(edges).toContain('proxy/run-proxy -> runtime/logger');
  });

  // local/ (issue #26 item 2): this agent's own services and checks, Consul's agent/local + agent/ae.
  // It sits on the check runners (checks/), the body schemas, runtime/ and the error and time
  // modules, and reaches the catalog only through what it is given (a view and a write): no rpc/,
  // no cluster/, no config/ (which imports its definitions' validation), no connect/ (which
  // follows it: managed proxies).
  const LOCAL_IMPORTS = new Set(['local', 'checks', 'schemas', 'runtime', 'errors', 'time']);
  test('local/ imports only the check runners, schemas, runtime/, errors and time', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'local' && !LOCAL_IMPORTS.has(layer(to));
    })).toEqual([]);
  });

  // Who builds or uses it: the wiring (agent/), the agent routes (http/), managed proxies following
  // it (connect/), the client's node mirror (its catalog view, client/), the config's definitions
  // (config/). Nothing below it — checks/, rpc/, endpoints/, the store — knows it exists.
  test('local/ is imported only by agent/, http/, connect/, client/ and config/', () => {
    const allowed = new Set(['local', 'agent', 'http', 'connect', 'client', 'config']);
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(to) === 'local' && !allowed.has(layer(from));
    })).toEqual([]);
  });

  test('checks/ holds the check runners only: it imports neither local/ nor connect/, and connect/ does not import it', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return (layer(from) === 'checks' && !['checks', 'schemas', 'errors', 'time'].includes(layer(to))) || (layer(from) === 'connect' && layer(to) === 'checks');
    })).toEqual([]);
  });

  // cache/ (issue #26 item 3): the agent cache and the prepared-query result cache, one CacheAnswer.
  // It is handed fetch functions and keeps their answers: it imports nothing of the server but the
  // clock, and is used by the Connect side (roots, leaves, cached reads), the HTTP edge (which sets
  // X-Cache and Age from its answers in one place: http/cached-read.ts) and the wiring.
  test('cache/ imports only itself and time; only connect/, http/ and agent/ import it', () => {
    const users = new Set(['cache', 'connect', 'http', 'agent']);
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return (layer(from) === 'cache' && !['cache', 'time'].includes(layer(to))) || (layer(to) === 'cache' && !users.has(layer(from)));
    })).toEqual([]);
    expect(edges).toContain('connect/agent-connect -> cache/agent-cache');
    expect(edges).toContain('http/routes/query -> cache/result-cache');
  });

  // No two folders import each other, for the folders of the agent's own state and those around it
  // (a pair that does is one concern in two places, or a layer that points both ways).
  test('no folder pair among local/, checks/, connect/, client/, config/, watches/, cache/ imports each other', () => {
    const watched = new Set(['local', 'checks', 'connect', 'client', 'config', 'watches', 'cache']);
    const pairs = new Set(edges.map((e) => e.split(' -> ').map(layer).join(' -> ')));
    const twoWay = [...pairs].filter((p) => {
      const [a, b] = p.split(' -> ') as [string, string];
      return a !== b && (watched.has(a) || watched.has(b)) && pairs.has(`${b} -> ${a}`);
    });
    expect(twoWay).toEqual([]);
  });

  // And now for every folder of the server (issue #26: the last two pairs, acl/ ↔ rpc/ and metrics/ ↔
  // proxy/, went when the token resolver's port moved to rpc/ and the proxies' count shapes to metrics/).
  test('no two folders of the server import each other', () => {
    const pairs = new Set(edges.map((e) => e.split(' -> ').map(layer).join(' -> ')));
    const twoWay = [...pairs].filter((p) => {
      const [a, b] = p.split(' -> ') as [string, string];
      return a !== b && pairs.has(`${b} -> ${a}`);
    });
    expect(twoWay).toEqual([]);
  });

  test('the checker sees real edges (it would notice a violation)', () => {
    expect(edges).toContain('rpc/rpc -> rpc/blocking');
    expect(edges).toContain('index -> agent/agent');
    expect(edges).toContain('agent/agent -> runtime/logger');
    expect(edges).toContain('runtime/leader-duties -> runtime/logger');
    expect(edges).toContain('local/local-state -> checks/check-runner');
    expect(edges).toContain('http/routes/agent-services -> local/local-services');
    expect(edges.length).toBeGreaterThan(200);
    const g = { edges: new Map([['a', new Set(['b'])], ['b', new Set(['a'])], ['c', new Set<string>()]]) };
    expect(circles(g)).toEqual([['a', 'b']]);
  });
});
