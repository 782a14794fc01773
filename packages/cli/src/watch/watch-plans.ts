// What each `registry watch -type` asks of the agent (Consul's watch/funcs.go): the blocking query
// and how its answer becomes the value given to the handler.
import { CliError } from '../cli-error';
import type { Client, Reply } from '../http-client';
import { kvPath } from '../kv-path';
import { parseKv } from '../kv-json';

export interface WatchParams {
  key?: string;
  prefix?: string;
  service?: string;
  tag?: string;
  passingonly?: boolean;
  state?: string;
  name?: string;
}

export interface WatchPlan {
  fetch(client: Client, index: number, signal: AbortSignal): Promise<{ index: number; value: unknown }>;
}

const WAIT = '5m';
const TIMEOUT_MS = 6 * 60_000;

function blocking(client: Client, path: string, query: Record<string, string | boolean | undefined>, index: number, signal: AbortSignal): Promise<Reply> {
  return client.request('GET', path, { query: { ...query, index: index ? String(index) : undefined, wait: WAIT }, accept: [404], timeoutMs: TIMEOUT_MS, signal });
}

const json = (r: Reply) => (r.status === 404 ? null : r.json());

export function watchPlan(type: string, p: WatchParams): WatchPlan {
  const need = (name: keyof WatchParams, flag: string) => {
    if (!p[name]) throw new CliError(`Error: Must specify a single ${flag} to watch`);
    return p[name] as string;
  };
  switch (type) {
    case 'key': {
      const key = need('key', '-key');
      return {
        async fetch(c, i, s) {
          const r = await blocking(c, kvPath(key), {}, i, s);
          return { index: r.index, value: r.status === 404 ? null : (parseKv<unknown[]>(r.text())[0] ?? null) };
        },
      };
    }
    case 'keyprefix': {
      const prefix = need('prefix', '-prefix');
      return {
        async fetch(c, i, s) {
          const r = await blocking(c, kvPath(prefix), { recurse: true }, i, s);
          return { index: r.index, value: r.status === 404 ? null : parseKv(r.text()) };
        },
      };
    }
    case 'services':
      return { fetch: async (c, i, s) => ((r) => ({ index: r.index, value: json(r) }))(await blocking(c, '/v1/catalog/services', {}, i, s)) };
    case 'nodes':
      return { fetch: async (c, i, s) => ((r) => ({ index: r.index, value: json(r) }))(await blocking(c, '/v1/catalog/nodes', {}, i, s)) };
    case 'service': {
      const service = need('service', '-service');
      const query = { tag: p.tag, passing: p.passingonly };
      return { fetch: async (c, i, s) => ((r) => ({ index: r.index, value: json(r) }))(await blocking(c, `/v1/health/service/${encodeURIComponent(service)}`, query, i, s)) };
    }
    case 'checks': {
      if (p.service && p.state) throw new CliError('Cannot specify service and state');
      const path = p.service ? `/v1/health/checks/${encodeURIComponent(p.service)}` : `/v1/health/state/${encodeURIComponent(p.state || 'any')}`;
      return { fetch: async (c, i, s) => ((r) => ({ index: r.index, value: json(r) }))(await blocking(c, path, {}, i, s)) };
    }
    case 'event':
      return {
        fetch: async (c, i, s) => ((r) => ({ index: r.index, value: json(r) }))(await blocking(c, '/v1/event/list', { name: p.name }, i, s)),
      };
    default:
      throw new CliError(`Unsupported watch type: ${type}`);
  }
}
