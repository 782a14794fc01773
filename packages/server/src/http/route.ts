// A route is data: method, path, how to read the request, and a short handler (fastify's
// shape on Express). Everything around the handler — body parsing, query options, headers,
// errors, 404/405 — is done once in app.ts.
import type { IncomingHttpHeaders } from 'node:http';
import type { Query, QueryOptions } from './query-options';
import type { BodyValidator } from '../schemas/validator';

export type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** Headers a read sets: X-Registry-Index, -KnownLeader, -LastContact. */
export interface ResponseMeta {
  index?: number;
  knownLeader?: boolean;
  lastContactMs?: number;
  headers: Record<string, string>;
  /** Status other than 200 (e.g. 404 with a body). */
  status?: number;
  /** Send this text as-is instead of JSON (raw KV values, plain-text answers). */
  raw?: { contentType: string; data: Buffer | string };
  /**
   * Stream the body instead (GET /v1/agent/monitor): the status and headers are sent at once, then
   * `run` writes until it resolves (it should resolve when `signal` aborts: the client left).
   */
  stream?: { contentType: string; run(write: (text: string) => void, signal: AbortSignal): Promise<void> };
}

export interface RouteContext<B = unknown> {
  params: Record<string, string>;
  query: Query;
  headers: IncomingHttpHeaders;
  opts: QueryOptions;
  body: B;
  rawBody: Buffer | undefined;
  remoteAddress: string | undefined;
  meta: ResponseMeta;
  /** Aborted when the client disconnects (ends blocking queries early). Made on first use. */
  signal: AbortSignal;
  /** Whether the client has disconnected (cheap: writes ask it instead of making a signal). */
  clientGone(): boolean;
}

export interface Route<B = unknown> {
  method: Method;
  /** Express 5 path syntax (`/v1/catalog/service/:service`, `/v1/kv{/*key}`). */
  path: string;
  /** Parse and validate a JSON body with this validator (undefined: no JSON body). */
  body?: BodyValidator<B>;
  /** A JSON body is optional (absent/empty → `{}`): session create, query update… */
  bodyOptional?: boolean;
  /** Largest body in bytes, when not the app's limit (a snapshot restore is an archive of the whole state). */
  bodyLimit?: number;
  handle(ctx: RouteContext<B>): Promise<unknown> | unknown;
}

export function route<B>(r: Route<B>): Route<B> {
  return r;
}
