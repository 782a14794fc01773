// A route is data: method, path, the schemas of its params, query and body, and a short handler
// (fastify's shape on Express). The handler's ctx.params and ctx.query are typed from the schemas
// (TypeBox's Static), and the schemas are compiled once, here, when the route is declared.
// Everything around the handler — reading the query and body, query options, headers, errors,
// 404/405 — is done once in app.ts.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Static, TObject } from '@sinclair/typebox';
import type { Query, QueryOptions } from './query-options';
import type { BodyValidator } from '../schemas/validator';
import { compileParams, compileQuery, type Reader } from '../schemas/query-schema';
import { readOptionFields, writeOptionFields } from '../schemas/query-options';

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
  /**
   * Send these bytes as they are read (GET /v1/snapshot's archive), with back-pressure; destroyed
   * if the client left first or leaves meanwhile.
   */
  body?: { contentType: string; data: Readable };
}

/** Path parameters of a route without a params schema: each one a decoded string. */
export type Params = Record<string, string>;

export interface RouteContext<B = unknown, Q = Query, P = Params> {
  params: P;
  /** Typed from the route's query schema; without one, the names as they arrived. */
  query: Q;
  /** The query string as sent (Go's URL.RawQuery), for answers that quote it. */
  readonly rawQuery: string;
  headers: IncomingHttpHeaders;
  opts: QueryOptions;
  body: B;
  rawBody: Buffer | undefined;
  /**
   * The request body as it arrives, unread (only a `streamBody` route may read it; for others the
   * edge has already read it into rawBody).
   */
  readonly bodyStream: Readable;
  remoteAddress: string | undefined;
  meta: ResponseMeta;
  /** Aborted when the client disconnects (ends blocking queries early). Made on first use. */
  signal: AbortSignal;
  /** Whether the client has disconnected (cheap: writes ask it instead of making a signal). Safe to pass on detached. */
  readonly clientGone: () => boolean;
}

export interface Route<B = unknown, Q = any, P = any> {
  method: Method;
  /** Express 5 path syntax (`/v1/catalog/service/:service`, `/v1/kv{/*key}`). */
  path: string;
  /**
   * The query's schema (schemas/query-options.ts `readQuery` for a GET, `writeQuery` otherwise: the
   * shared options and the route's own fields). Without one, ctx.query is the names as they arrived.
   */
  query?: TObject;
  /** The path parameters' schema (without one, each is a string and an optional one may be absent). */
  params?: TObject;
  /** Compiled from `query` once (route()); app.ts runs it on each request. */
  readQuery?: Reader<Q>;
  /** Compiled from `params` once (route()). */
  readParams?: (params: Params) => P;
  /** Parse and validate a JSON body with this validator (undefined: no JSON body). */
  body?: BodyValidator<B>;
  /** A JSON body is optional (absent/empty → `{}`): session create, query update… */
  bodyOptional?: boolean;
  /** Largest body in bytes, when not the app's limit (a snapshot restore is an archive of the whole state). */
  bodyLimit?: number;
  /**
   * The edge does not read the body: the handler reads `ctx.bodyStream` itself, after deciding from
   * the headers whether it may (a snapshot archive: its 403 must not cost the bytes, and the bytes
   * go to a file, not memory). After a refusal the rest of the body is read and dropped, never kept.
   */
  streamBody?: boolean;
  /**
   * 'raw': a managed proxy's token reaches the handler as itself (the leaf and proxy-configuration
   * routes check it against the proxy they serve). Elsewhere app.ts replaces it with the token the
   * proxy's service was registered with (connect/proxy-tokens.ts).
   */
  proxyToken?: 'raw';
  handle(ctx: RouteContext<B, Q, P>): Promise<unknown> | unknown;
}

type QueryOf<S> = S extends TObject ? Static<S> : Query;
type ParamsOf<S> = S extends TObject ? Static<S> : Params;

/** A route as declared: ctx is typed from the `query` and `params` schemas it names. */
export interface RouteSpec<B, QS extends TObject | undefined, PS extends TObject | undefined> {
  method: Method;
  path: string;
  query?: QS;
  params?: PS;
  body?: BodyValidator<B>;
  bodyOptional?: boolean;
  bodyLimit?: number;
  streamBody?: boolean;
  proxyToken?: 'raw';
  handle(ctx: RouteContext<B, QueryOf<QS>, ParamsOf<PS>>): Promise<unknown> | unknown;
}

export function route<B = unknown, QS extends TObject | undefined = undefined, PS extends TObject | undefined = undefined>(
  r: RouteSpec<B, QS, PS>,
): Route<B, QueryOf<QS>, ParamsOf<PS>> {
  const out: Route<B, QueryOf<QS>, ParamsOf<PS>> = { ...r };
  if (r.query) {
    // The shared options are read from every query (app.ts builds QueryOptions from them): a
    // schema without them would leave a route without its dc or token.
    const shared = r.method === 'GET' ? readOptionFields : writeOptionFields;
    for (const name of Object.keys(shared)) {
      if (!(name in r.query.properties)) throw new Error(`route ${r.method} ${r.path}: its query schema lacks the shared option ${name} (use readQuery/writeQuery)`);
    }
    out.readQuery = compileQuery(r.query) as Reader<QueryOf<QS>>;
  }
  if (r.params) out.readParams = compileParams(r.params) as (params: Params) => ParamsOf<PS>;
  return out;
}
