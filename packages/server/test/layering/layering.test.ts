// The layering, checked rather than hoped for (issue 13): no import circles in any package, and
// the server's layers point one way — http/ → endpoints/ → rpc/ → store/raft — so nothing below
// the HTTP edge imports from http/ (only the agent, which wires everything, and the package index).
// agent/ is the roof only (issue #26 item 1): nothing but the package's entry point imports it, and
// what every folder shares — the logger, leader duties, the log tap, runner failures, durable
// files — is runtime/, the foundation, which imports nothing of the server but itself.
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

  test('proxy/ imports only itself and the logger: it runs as its own process, a client of the HTTP API', () => {
    expect(edges.filter((e) => {
      const [from, to] = e.split(' -> ');
      return layer(from) === 'proxy' && layer(to) !== 'proxy' && to !== 'runtime/logger';
    })).toEqual([]);
    expect(edges).toContain('proxy/run-proxy -> runtime/logger');
  });

  test('the checker sees real edges (it would notice a violation)', () => {
    expect(edges).toContain('rpc/rpc -> rpc/blocking');
    expect(edges).toContain('index -> agent/agent');
    expect(edges).toContain('agent/agent -> runtime/logger');
    expect(edges).toContain('runtime/leader-duties -> runtime/logger');
    expect(edges.length).toBeGreaterThan(200);
    const g = { edges: new Map([['a', new Set(['b'])], ['b', new Set(['a'])], ['c', new Set<string>()]]) };
    expect(circles(g)).toEqual([['a', 'b']]);
  });
});
