// A stock node-consul client (npm `consul`) adapted to registry on the client side only:
// registry names its headers X-Registry-*, and node-consul hard-codes X-Consul-*.
// This is the snippet docs/clients.md shows; keep the two in step.
import { EventEmitter } from 'node:events';
import Consul from 'consul';

/** What papi (node-consul's HTTP layer) accepts and does, beyond node-consul's own typings. */
interface PapiRequest {
  res?: { statusCode?: number; headers: Record<string, string | string[] | undefined> };
}
interface PapiClient {
  _ext(event: 'onResponse', hook: (request: PapiRequest, next: () => void) => void): void;
}
type PapiOptions = ConstructorParameters<typeof Consul>[0] & { headers?: Record<string, string> };

/** Copy every `x-registry-*` response header to its `x-consul-*` name, so index/leader metadata and watches work. */
export function aliasRegistryHeaders(request: PapiRequest, next: () => void): void {
  const headers = request.res?.headers;
  if (headers) {
    for (const name of Object.keys(headers)) {
      if (name.startsWith('x-registry-')) headers['x-consul-' + name.slice('x-registry-'.length)] = headers[name];
    }
  }
  next();
}

export function registryConsul(host: string, port: number, token?: string): Consul {
  const options: PapiOptions = { host, port, headers: token === undefined ? {} : { 'x-registry-token': token } };
  const consul = new Consul(options);
  (consul as unknown as PapiClient)._ext('onResponse', aliasRegistryHeaders);
  return consul;
}

/**
 * A papi request context that makes a call resolve to `[response, result]` instead of `result`
 * (node-consul's `ctx` option; the watch uses the same mechanism).
 */
export function withResponse(): EventEmitter & { includeResponse: true } {
  return Object.assign(new EventEmitter(), { includeResponse: true as const });
}

/** The metadata node-consul reads from X-Consul-* response headers (untyped in its declarations). */
export interface QueryMeta {
  LastIndex?: string;
  LastContact?: number;
  KnownLeader?: boolean;
}

export function queryMeta(response: unknown): QueryMeta {
  return (Consul as unknown as { parseQueryMeta(res: unknown): QueryMeta }).parseQueryMeta(response);
}
