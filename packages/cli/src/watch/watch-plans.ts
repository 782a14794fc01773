// What each `registry watch -type` asks of the agent (Consul's watch/funcs.go): the blocking query
// and how its answer becomes the value given to the handler.
// The module alone: the package's index loads the whole server (seconds on a busy host).
import { eventIndex } from '@registry/server/dist/events/event-index';
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
  /** `index` as the agent sent it: a uint64, which may exceed 2^53 (the event list's). */
  fetch(client: Client, index: bigint, signal: AbortSignal): Promise<{ index: bigint; value: unknown }>;
  /** false when the index is no counter (the event list's is an event ID folded to 64 bits). */
  monotonic?: boolean;
}

const WAIT = '5m';
const TIMEOUT_MS = 6 * 60_000;

async function blocking(client: Client, path: string, query: Record<string, string | boolean | undefined>, index: bigint, signal: AbortSignal): Promise<Reply & { exact: bigint }> {
  const r = await client.request('GET', path, { query: { ...query, index: index ? String(index) : undefined, wait: WAIT }, accept: [404], timeoutMs: TIMEOUT_MS, signal });
  return Object.assign(r, { exact: exactIndex(r) });
}

/** The index header's digits as a bigint (Reply.index is a Number, exact only up to 2^53). */
function exactIndex(r: Reply): bigint {
  const h = r.headers['x-registry-index'] ?? r.headers['x-consul-index'];
  const v = Array.isArray(h) ? h[0] : h;
  return v !== undefined && /^\d{1,20}$/.test(v) ? BigInt(v) : 0n;
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
          return { index: r.exact, value: r.status === 404 ? null : (parseKv<unknown[]>(r.text())[0] ?? null) };
        },
      };
    }
    case 'keyprefix': {
      const prefix = need('prefix', '-prefix');
      return {
        async fetch(c, i, s) {
          const r = await blocking(c, kvPath(prefix), { recurse: true }, i, s);
          return { index: r.exact, value: r.status === 404 ? null : parseKv(r.text()) };
        },
      };
    }
    case 'services':
      return { fetch: async (c, i, s) => ((r) => ({ index: r.exact, value: json(r) }))(await blocking(c, '/v1/catalog/services', {}, i, s)) };
    case 'nodes':
      return { fetch: async (c, i, s) => ((r) => ({ index: r.exact, value: json(r) }))(await blocking(c, '/v1/catalog/nodes', {}, i, s)) };
    case 'service': {
      const service = need('service', '-service');
      const query = { tag: p.tag, passing: p.passingonly };
      return { fetch: async (c, i, s) => ((r) => ({ index: r.exact, value: json(r) }))(await blocking(c, `/v1/health/service/${encodeURIComponent(service)}`, query, i, s)) };
    }
    case 'checks': {
      if (p.service && p.state) throw new CliError('Cannot specify service and state');
      const path = p.service ? `/v1/health/checks/${encodeURIComponent(p.service)}` : `/v1/health/state/${encodeURIComponent(p.state || 'any')}`;
      return { fetch: async (c, i, s) => ((r) => ({ index: r.exact, value: json(r) }))(await blocking(c, path, {}, i, s)) };
    }
    case 'event':
      return {
        monotonic: false,
        // As Consul's event watch: only the events after the last one handed over (the one whose
        // folded ID is the index the previous answer carried); all of them the first time.
        async fetch(c, i, s) {
          const r = await blocking(c, '/v1/event/list', { name: p.name }, i, s);
          const events = (json(r) ?? []) as { ID: string }[];
          const seen = i === 0n ? -1 : events.findIndex((e) => eventIndex(e.ID) === i);
          return { index: r.exact, value: seen < 0 ? events : events.slice(seen + 1) };
        },
      };
    default:
      throw new CliError(`Unsupported watch type: ${type}`);
  }
}
