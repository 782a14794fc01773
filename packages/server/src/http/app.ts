// The HTTP edge, written once: body and query parsing, the route table, response headers,
// pretty output, error → status mapping, 404 for unknown routes and 405 for unknown verbs.
// A route's query and params are read through its compiled schemas (route.ts, schemas/
// query-schema.ts) and the shared query options built from the typed query, once per request.
//
// Express holds the route table and answers everything unusual (404, 405, OPTIONS, HEAD,
// compressed bodies, URLs that need a full parse). The ordinary request — GET/PUT/POST/DELETE
// on a known route with a plain body — takes a direct path: a find-my-way tree built from the
// same route table decides the match (direct-routes.ts; where it might differ from Express it
// declines and Express decides), and the router's layer walk, body-parser and the Express
// request/response decoration are skipped. They cost more CPU per request than most handlers
// (measured: a trivial GET at 64 connections went from ~7,000/s to several times that).
import { UI_SECURITY_HEADERS } from './ui-headers';
import { checkJsonDepth } from './json-depth';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { parse as parseQueryString } from 'node:querystring';
import express, { type NextFunction, type Request, type Response } from 'express';
import { hasBody, parseByteLimit, readBody } from './body-reader';
import { statusOf } from './error-status';
import { RegistryError, badRequest } from '../errors';
import { queryOptions, type Query, type QueryOptions } from './query-options';
import { compileQuery } from '../schemas/query-schema';
import { ReadOptionsQuery, WriteOptionsQuery } from '../schemas/query-options';
import type { Method, ResponseMeta, Route } from './route';
import { RequestContext } from './request-context';
import { JsonEncoder } from './json-encoder';
import { exactJsonText } from './json-text';
import { isLargeArray, writeSlicedJsonArray } from './sliced-json';
import { DEFAULT_LARGE_ANSWER_DUTY, SliceLane } from './slice-lane';
import { TRANSLATE_HEADER } from './datacenter-routes';
import { DirectRoutes, type RawParams } from './direct-routes';
import { CONSUL_SEGMENT_KEY, SEGMENT_KEY } from '../schemas/node-meta';
import type { AclResolver } from '../rpc/acl-resolver';
import { uncleanPathTarget } from './clean-path';

export interface AppOptions {
  datacenter: string;
  /** The agent's default token (`acl.tokens.default` / `acl_token`). */
  defaultToken?: () => string | undefined;
  /**
   * The resolver routes check tokens with. The request's token is prepared here, once, before the
   * route runs: a client agent fetches it (acl/cached-resolver.ts), a follower that does not know it
   * catches up with the leader first (acl/store-resolver.ts).
   */
  acl?: Pick<AclResolver, 'prepare'>;
  /** Largest request body accepted (KV values are capped separately by their route). */
  bodyLimit?: string;
  logger?: { error(o: object, msg?: string): void };
  /**
   * Consul wire compatibility (`http_config.consul_compat`): `X-Consul-Token` is read as
   * `X-Registry-Token`, every `X-Registry-*` response header is also sent under its `X-Consul-*`
   * name, and `node-meta=consul-network-segment:…` filters as `registry-network-segment`.
   */
  consulCompat?: boolean;
  /** `translate_wan_addrs` is on: every response carries `X-Registry-Translate-Addresses: true`. */
  translateAddresses?: boolean;
  /** Times every request of a known route, by route pattern and status (the agent's metrics). */
  metrics?: HttpObserver;
  /**
   * A managed proxy's token → the token it acts with (connect/proxy-tokens.ts); undefined for any
   * other token. Applied to every route but those marked `proxyToken: 'raw'`.
   */
  proxyTokens?: (token: string) => string | undefined;
  /** The web UI (`ui`, `-ui`; docs/ui.md): folders served at /ui/, first match wins (ui/ui-assets.ts). */
  ui?: { dirs: string[] };
  /**
   * Encodes answers, keeping the bytes of read results shared until the next apply (json-encoder.ts;
   * the agent gives it the RPC layer's shared values). Default: one that keeps nothing.
   */
  json?: JsonEncoder;
  /**
   * Where the slices of large answers take turns (slice-lane.ts); the agent passes the lane its
   * store's listing builds take turns in too. Default: a lane of this app's own.
   */
  largeAnswerLane?: SliceLane;
}

/** AppOptions with the edge's own parts made. */
type EdgeOptions = AppOptions & Required<Pick<AppOptions, 'json' | 'largeAnswerLane'>>;

/** Gives each route its timer once, when the table is built, so a request only calls `done`. */
export interface HttpObserver {
  httpRoute(method: string, path: string): RouteTimer;
}

export interface RouteTimer {
  done(status: number, ms: number): void;
}

/** What `http.createServer` takes. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPE = 'application/json';
const DEFAULT_BODY_LIMIT = '1mb';

interface DirectRoute {
  route: Route<any>;
  timer: RouteTimer | undefined;
}

const DIRECT_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE']);
/** The shared options of a route that declares no query schema (compiled once). */
const readOptionsOnly = compileQuery(ReadOptionsQuery);
const writeOptionsOnly = compileQuery(WriteOptionsQuery);
/** The status a request is timed with when its client closed the connection before the answer. */
const CLIENT_CLOSED = 499;
/** Characters that make Express's URL parser (parseurl) fall back to a full parse. */
const NEEDS_FULL_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;

export function createApp(routes: Route<any>[], given: AppOptions): HttpHandler {
  const options: EdgeOptions = {
    ...given,
    json: given.json ?? new JsonEncoder(),
    largeAnswerLane: given.largeAnswerLane ?? new SliceLane(DEFAULT_LARGE_ANSWER_DUTY),
  };
  const app = express();
  app.set('etag', false);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  // A route that reads its own body (streamBody) is registered before the body parser, so that the
  // unusual request that takes the Express road reaches it unread too; the bytes are taken as sent,
  // whatever Content-Encoding says (Go's server does not decode request bodies either).
  const streamTimers = new Map<Route<any>, RouteTimer | undefined>();
  for (const r of routes) {
    if (!r.streamBody) continue;
    const timer = options.metrics?.httpRoute(r.method, r.path);
    streamTimers.set(r, timer);
    app[r.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete'](r.path, (req, res, next) => {
      serve(r, timer, req.params as RawParams, req.query as Query, req, res, undefined, options).catch(next);
    });
  }
  // Bodies arrive with any Content-Type or none (python clients send none): take the raw bytes
  // and let each route decide how to read them.
  app.use(express.raw({ type: () => true, limit: bodyLimit }));

  const table: { route: Route<any>; value: DirectRoute }[] = [];
  const methodsByPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = methodsByPath.get(r.path) ?? new Set<string>();
    set.add(r.method);
    methodsByPath.set(r.path, set);
    const verb = r.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete';
    const timer = r.streamBody ? streamTimers.get(r) : options.metrics?.httpRoute(r.method, r.path);
    if (r.streamBody) {
      table.push({ route: r, value: { route: r, timer } });
      continue;
    }
    app[verb](r.path, (req, res, next) => {
      const rawBody = Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined;
      serve(r, timer, req.params as RawParams, req.query as Query, req, res, rawBody, options).catch(next);
    });
    table.push({ route: r, value: { route: r, timer } });
  }
  const direct = new DirectRoutes(table);
  for (const [path, methods] of methodsByPath) {
    const allow = ['OPTIONS', ...methods].join(',');
    app.all(path, (req, res) => {
      res.setHeader('Allow', allow);
      if (req.method === 'OPTIONS') {
        res.status(200).end();
        return;
      }
      sendText(res, 405, `method ${req.method} not allowed`);
    });
  }
  // Consul's index handler: `/` sends a browser to the UI when it is on, else names the agent.
  app.get('/', (_req, res) => {
    if (options.ui) res.redirect(301, '/ui/');
    else sendText(res, 200, 'Registry Agent');
  });
  if (options.ui) {
    app.use('/ui', (_req: Request, res: Response, next: NextFunction) => {
      for (const [k, v] of Object.entries(UI_SECURITY_HEADERS)) res.setHeader(k, v);
      next();
    });
  }
  for (const dir of options.ui?.dirs ?? []) app.use('/ui', express.static(dir, { fallthrough: true }));
  app.use((req: Request, res: Response) => {
    sendText(res, 404, `Not found: ${req.method} ${req.path}`);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(res, err, req.path, options);
  });

  const limit = parseByteLimit(bodyLimit);
  // Headers of every response, errors, 404s and 405s included (Consul sets the translate header
  // in its wrap, before the handler runs).
  const always: Array<[string, string]> = [];
  if (options.translateAddresses) always.push(...withConsulNames([[TRANSLATE_HEADER, 'true']], options.consulCompat));
  return (req, res) => {
    for (const [k, v] of always) res.setHeader(k, v);
    const method = req.method ?? '';
    const url = req.url ?? '';
    const q0 = url.indexOf('?');
    const cleanTarget = uncleanPathTarget(q0 < 0 ? url : url.slice(0, q0));
    if (cleanTarget !== undefined) {
      // Go's ServeMux: a path that is not canonical is redirected, whatever the method (clean-path.ts).
      res.setHeader('Location', cleanTarget + (q0 < 0 ? '' : url.slice(q0)));
      sendText(res, 301, 'Moved Permanently');
      return;
    }
    if (!DIRECT_METHODS.has(method) || url.charCodeAt(0) !== 0x2f || NEEDS_FULL_PARSE.test(url) || !identityEncoded(req)) {
      app(req, res);
      return;
    }
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const hit = direct.find(method as Method, pathname);
    if (!hit) {
      app(req, res);
      return;
    }
    const { params } = hit;
    const { route, timer } = hit.value;
    const query = parseQueryString(q < 0 ? '' : url.slice(q + 1)) as Query;
    const fail = (err: unknown) => sendError(res, err, pathname, options);
    if (route.streamBody) {
      serve(route, timer, params, query, req, res, undefined, options).catch(fail);
      return;
    }
    if (!hasBody(req)) {
      // Served in the check phase, after every request of this poll has been read, rather than
      // inline: a read answered from memory then writes its answer with the others of its turn
      // instead of between two socket reads. On loopback (2-core VM, wrk c=64) this took `?stale`
      // reads on a follower from 14–17k to 25–26k/s and default reads on the leader from 19k to
      // 26k/s; a lone request waits no longer (the check phase follows the poll that read it).
      setImmediate(() => serve(route, timer, params, query, req, res, undefined, options).catch(fail));
      return;
    }
    readBody(req, route.bodyLimit ?? limit).then((body) => serve(route, timer, params, query, req, res, body, options)).catch(fail);
  };
}

/** body-parser inflates gzip/deflate/br bodies and refuses other encodings; those go through Express. */
function identityEncoded(req: IncomingMessage): boolean {
  const enc = req.headers['content-encoding'];
  return enc === undefined || enc.toLowerCase() === 'identity';
}

async function serve(
  r: Route<any>,
  timer: RouteTimer | undefined,
  rawParams: RawParams,
  query: Query,
  req: IncomingMessage,
  res: ServerResponse,
  rawBody: Buffer | undefined,
  options: EdgeOptions,
): Promise<void> {
  const started = timer ? performance.now() : 0;
  // Made below, before anything awaits; a close is an event, so it cannot come first.
  let ctx: RequestContext | undefined;
  // Listening from the start, so that requests refused while being read (400s) are timed too.
  res.once('close', () => {
    const finished = res.writableFinished;
    // A client that left before its answer is counted as nginx does (499), not as the 200 unsent.
    timer?.done(finished ? res.statusCode : CLIENT_CLOSED, performance.now() - started);
    if (!finished) ctx?.left();
  });
  const agent = { datacenter: options.datacenter, defaultToken: options.defaultToken?.(), consulCompat: options.consulCompat };
  if (options.consulCompat && query['node-meta'] !== undefined) query = consulNodeMetaQuery(query);
  // The route's query schema, or the shared options alone: one typed object, then the options
  // built from it once. Writes read only dc and token of them (Consul's parseDC + parseToken).
  const typed = (r.readQuery ?? (r.method === 'GET' ? readOptionsOnly : writeOptionsOnly))(query);
  const opts: QueryOptions = queryOptions(typed, req.headers, agent);
  if (opts.token && options.proxyTokens && r.proxyToken !== 'raw') {
    const acting = options.proxyTokens(opts.token);
    if (acting !== undefined) opts.token = acting || undefined;
  }
  const pretty = typed.pretty === true;
  const params = decodeParams(rawParams);
  let body: unknown = undefined;
  if (r.body) {
    body = r.body(parseJson(rawBody, r.bodyOptional ?? false));
  }
  ctx = new RequestContext(req, r.readParams ? r.readParams(params) : params, r.readQuery ? typed : query, opts, body, rawBody);
  const { meta } = ctx;
  let value: unknown;
  try {
    const prepared = options.acl?.prepare?.(opts.token, opts.consistency === 'stale');
    if (prepared) await prepared;
    value = await r.handle(ctx);
  } catch (err) {
    // Blocking endpoints still report the index on errors (Consul sets it before failing).
    writeMeta(res, meta, options.consulCompat);
    // A body the route did not read to its end (refused from the headers, or part-way) is read and
    // dropped as it comes, never kept: the answer goes out at once, and the client, which may still
    // be sending, reads it before anything is closed (closing at once made it lose the answer to a
    // reset, EPIPE). http_config.request_timeout bounds how long a slow sender can keep this up.
    if (r.streamBody && !req.complete) req.resume();
    throw err;
  }
  if (res.headersSent || ctx.clientGone()) {
    meta.body?.data.destroy();
    return;
  }
  const status = meta.status ?? 200;
  if (meta.body) {
    writeMeta(res, meta, options.consulCompat);
    res.statusCode = status;
    res.setHeader('Content-Type', meta.body.contentType);
    // A failure half-way (the client left, a read failed) can only cut the answer short.
    await pipeline(meta.body.data, res).catch(() => res.destroy());
    return;
  }
  if (meta.stream) {
    const headers = metaHeaders(meta, options.consulCompat);
    headers['Content-Type'] = meta.stream.contentType;
    res.writeHead(status, headers);
    res.flushHeaders();
    await meta.stream.run((text) => void res.write(text), ctx.signal);
    res.end();
    return;
  }
  if (meta.raw || value === undefined) {
    writeMeta(res, meta, options.consulCompat);
    res.statusCode = status;
    if (meta.raw) {
      res.setHeader('Content-Type', meta.raw.contentType);
      res.end(meta.raw.data);
    } else {
      res.end();
    }
    return;
  }
  if (!pretty && isLargeArray(value)) {
    // A large list is written in slices so that no single answer holds the event loop (issue #16).
    const headers: OutgoingHttpHeaders = metaHeaders(meta, options.consulCompat);
    headers['Content-Type'] = JSON_TYPE;
    await writeSlicedJsonArray(res, status, headers, value, options.largeAnswerLane);
    return;
  }
  // Read results shared by identical requests are encoded once (json-encoder.ts).
  // A BigInt (a uint64 beyond 2^53, e.g. KV Flags) is written as its digits (json-text.ts).
  const text = pretty ? exactJsonText(value, (v) => JSON.stringify(v, null, 4), 4) + '\n' : exactJsonText(value, options.json.encode);
  // One writeHead with every header (Content-Length too, so the body is not chunked) is
  // cheaper than a setHeader per header.
  const headers: OutgoingHttpHeaders = metaHeaders(meta, options.consulCompat);
  headers['Content-Type'] = JSON_TYPE;
  headers['Content-Length'] = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
  res.writeHead(status, headers);
  res.end(text);
}

/** The one place response metadata becomes headers (both paths, answers and errors). */
function metaHeaders(meta: ResponseMeta, consulCompat: boolean | undefined): OutgoingHttpHeaders {
  const h: OutgoingHttpHeaders = {};
  if (meta.index !== undefined) h['X-Registry-Index'] = String(Math.max(1, meta.index));
  if (meta.knownLeader !== undefined) h['X-Registry-KnownLeader'] = String(meta.knownLeader);
  if (meta.lastContactMs !== undefined) h['X-Registry-LastContact'] = String(meta.lastContactMs);
  for (const k in meta.headers) h[k] = meta.headers[k];
  if (consulCompat) {
    for (const k in h) if (k.startsWith(REGISTRY_PREFIX)) h[CONSUL_PREFIX + k.slice(REGISTRY_PREFIX.length)] = h[k];
  }
  return h;
}

function writeMeta(res: ServerResponse, meta: ResponseMeta, consulCompat: boolean | undefined): void {
  if (res.headersSent) return;
  const h = metaHeaders(meta, consulCompat);
  for (const k in h) res.setHeader(k, h[k]!);
}

const REGISTRY_PREFIX = 'X-Registry-';
const CONSUL_PREFIX = 'X-Consul-';

/** `pairs` and, with consul_compat, each `X-Registry-*` one again under its `X-Consul-*` name. */
function withConsulNames(pairs: Array<[string, string]>, consulCompat: boolean | undefined): Array<[string, string]> {
  if (!consulCompat) return pairs;
  const out = [...pairs];
  for (const [k, v] of pairs) if (k.startsWith(REGISTRY_PREFIX)) out.push([CONSUL_PREFIX + k.slice(REGISTRY_PREFIX.length), v]);
  return out;
}

/** `node-meta=consul-network-segment:…` filters as registry's key (consul_compat). */
function consulNodeMetaQuery(query: Query): Query {
  const items = query['node-meta'];
  const alias = (item: string) => (item === CONSUL_SEGMENT_KEY || item.startsWith(CONSUL_SEGMENT_KEY + ':') ? SEGMENT_KEY + item.slice(CONSUL_SEGMENT_KEY.length) : item);
  return { ...query, 'node-meta': Array.isArray(items) ? items.map(alias) : items === undefined ? undefined : alias(items) };
}

function sendError(res: ServerResponse, err: unknown, path: string, options: AppOptions): void {
  if (err instanceof RegistryError) {
    if (!res.headersSent) for (const [k, v] of withConsulNames(Object.entries(err.headers), options.consulCompat)) res.setHeader(k, v);
    sendText(res, statusOf(err.kind), err.message);
    return;
  }
  const e = err as { type?: string; status?: number; message?: string };
  if (e && e.type === 'entity.too.large') {
    sendText(res, 413, 'Request body too large');
    return;
  }
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    sendText(res, e.status, e.message ?? 'Bad request');
    return;
  }
  options.logger?.error({ err, path }, 'request failed');
  sendText(res, 500, e?.message ?? String(err));
}

function parseJson(raw: Buffer | undefined, optional: boolean): unknown {
  const text = raw && raw.length > 0 ? raw.toString('utf8') : '';
  if (text.trim() === '') {
    if (optional) return {};
    throw badRequest('Request decode failed: EOF');
  }
  checkJsonDepth(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`Request decode failed: ${(err as Error).message}`);
  }
}

/** Express 5 gives wildcard params as arrays of segments; routes want one string. */
function decodeParams(params: RawParams): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const k in params) {
    const v = params[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join('/') : v;
  }
  return out;
}

function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

