// The HTTP edge, written once: body and query parsing, the route table, response headers,
// pretty output, error → status mapping, 404 for unknown routes and 405 for unknown verbs.
//
// Express holds the route table and answers everything unusual (404, 405, OPTIONS, HEAD,
// compressed bodies, URLs that need a full parse). The ordinary request — GET/PUT/POST/DELETE
// on a known route with a plain body — takes a direct path: the same Express route layers
// decide the match (so paths, params and their decoding are exactly Express's), but the
// router's layer walk, body-parser and the Express request/response decoration are skipped.
// They cost more CPU per request than most handlers (measured: a trivial GET at 64
// connections went from ~7,000/s to several times that).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import express, { type NextFunction, type Request, type Response } from 'express';
import { hasBody, parseByteLimit, readBody } from './body-reader';
import { statusOf } from './error-status';
import { RegistryError, badRequest } from '../errors';
import { flag, parseQueryOptions, single, type Query, type QueryOptions } from './query-options';
import type { ResponseMeta, Route, RouteContext } from './route';
import { encodeJson } from '../rpc/reused-reads';

export interface AppOptions {
  datacenter: string;
  /** The agent's default token (`acl.tokens.default` / `acl_token`). */
  defaultToken?: () => string | undefined;
  /** Largest request body accepted (KV values are capped separately by their route). */
  bodyLimit?: string;
  logger?: { error(o: object, msg?: string): void };
}

/** What `http.createServer` takes. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

const JSON_TYPE = 'application/json';
const DEFAULT_BODY_LIMIT = '1mb';

type RawParams = Record<string, string | string[] | undefined>;

/** The part of an Express route layer the direct path uses: its path matcher (router 2.x). */
interface MatchLayer {
  match(path: string): false | { params: RawParams };
}

interface DirectRoute {
  layer: MatchLayer;
  route: Route<any>;
}

const DIRECT_METHODS = ['GET', 'PUT', 'POST', 'DELETE'];
/** Characters that make Express's URL parser (parseurl) fall back to a full parse. */
const NEEDS_FULL_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;

export function createApp(routes: Route<any>[], options: AppOptions): HttpHandler {
  const app = express();
  app.set('etag', false);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  // Bodies arrive with any Content-Type or none (python clients send none): take the raw bytes
  // and let each route decide how to read them.
  app.use(express.raw({ type: () => true, limit: bodyLimit }));

  const direct = new Map<string, DirectRoute[]>(DIRECT_METHODS.map((m) => [m, []]));
  const stack = (app as unknown as { router: { stack: unknown[] } }).router.stack;
  const methodsByPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = methodsByPath.get(r.path) ?? new Set<string>();
    set.add(r.method);
    methodsByPath.set(r.path, set);
    const verb = r.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete';
    app[verb](r.path, (req, res, next) => {
      const rawBody = Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined;
      serve(r, req.params as RawParams, req.query as Query, req, res, rawBody, options).catch(next);
    });
    direct.get(r.method)?.push({ layer: stack[stack.length - 1] as MatchLayer, route: r });
  }
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
  app.use((req: Request, res: Response) => {
    sendText(res, 404, `Not found: ${req.method} ${req.path}`);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(res, err, req.path, options);
  });

  const limit = parseByteLimit(bodyLimit);
  return (req, res) => {
    const candidates = direct.get(req.method ?? '');
    const url = req.url ?? '';
    if (!candidates || url.charCodeAt(0) !== 0x2f || NEEDS_FULL_PARSE.test(url) || !identityEncoded(req)) {
      app(req, res);
      return;
    }
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    let hit: DirectRoute | undefined;
    let params: RawParams = {};
    try {
      // The first route layer of this method that matches is the one Express would run: the
      // body middleware before them matches everything, the 405 layers come after them all.
      for (const c of candidates) {
        const m = c.layer.match(pathname);
        if (m) {
          hit = c;
          params = m.params;
          break;
        }
      }
    } catch (err) {
      sendError(res, err, pathname, options); // a param that does not decode: 400, as in Express
      return;
    }
    if (!hit) {
      app(req, res);
      return;
    }
    const { route } = hit;
    const query = parseQueryString(q < 0 ? '' : url.slice(q + 1)) as Query;
    const fail = (err: unknown) => sendError(res, err, pathname, options);
    if (!hasBody(req)) {
      serve(route, params, query, req, res, undefined, options).catch(fail);
      return;
    }
    readBody(req, limit).then((body) => serve(route, params, query, req, res, body, options)).catch(fail);
  };
}

/** body-parser inflates gzip/deflate/br bodies and refuses other encodings; those go through Express. */
function identityEncoded(req: IncomingMessage): boolean {
  const enc = req.headers['content-encoding'];
  return enc === undefined || enc.toLowerCase() === 'identity';
}

async function serve(
  r: Route<any>,
  rawParams: RawParams,
  query: Query,
  req: IncomingMessage,
  res: ServerResponse,
  rawBody: Buffer | undefined,
  options: AppOptions,
): Promise<void> {
  const agent = { datacenter: options.datacenter, defaultToken: options.defaultToken?.() };
  let opts: QueryOptions;
  if (r.method === 'GET') {
    opts = parseQueryOptions(query, req.headers, agent);
  } else {
    // Writes read only the datacenter and the token (Consul's parseDC + parseToken).
    opts = parseQueryOptions({ dc: query.dc, token: query.token }, req.headers, agent);
  }
  let body: unknown = undefined;
  if (r.body) {
    body = r.body(parseJson(rawBody, r.bodyOptional ?? false));
  }
  // The abort signal is made only for handlers that ask for it (blocking reads); most never do.
  let controller: AbortController | undefined;
  let closedEarly = false;
  res.once('close', () => {
    if (res.writableFinished) return;
    closedEarly = true;
    controller?.abort();
  });
  const meta: ResponseMeta = { headers: {} };
  const ctx: RouteContext = {
    params: decodeParams(rawParams),
    query,
    headers: req.headers,
    opts,
    body,
    rawBody,
    remoteAddress: req.socket.remoteAddress,
    meta,
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (closedEarly) controller.abort();
      }
      return controller.signal;
    },
  };
  let value: unknown;
  try {
    value = await r.handle(ctx);
  } catch (err) {
    // Blocking endpoints still report the index on errors (Consul sets it before failing).
    writeMeta(res, meta);
    throw err;
  }
  if (res.headersSent || closedEarly) return;
  const status = meta.status ?? 200;
  if (meta.raw || value === undefined) {
    writeMeta(res, meta);
    res.statusCode = status;
    if (meta.raw) {
      res.setHeader('Content-Type', meta.raw.contentType);
      res.end(meta.raw.data);
    } else {
      res.end();
    }
    return;
  }
  // Read results shared by identical requests are encoded once (rpc/reused-reads.ts).
  const text = flag(query, 'pretty') ? JSON.stringify(value, null, 4) + '\n' : encodeJson(value);
  // One writeHead with every header (Content-Length too, so the body is not chunked) is
  // cheaper than a setHeader per header.
  const headers: OutgoingHttpHeaders = metaHeaders(meta);
  headers['Content-Type'] = JSON_TYPE;
  headers['Content-Length'] = Buffer.byteLength(text);
  res.writeHead(status, headers);
  res.end(text);
}

function metaHeaders(meta: ResponseMeta): OutgoingHttpHeaders {
  const h: OutgoingHttpHeaders = {};
  if (meta.index !== undefined) h['X-Registry-Index'] = String(Math.max(1, meta.index));
  if (meta.knownLeader !== undefined) h['X-Registry-KnownLeader'] = String(meta.knownLeader);
  if (meta.lastContactMs !== undefined) h['X-Registry-LastContact'] = String(meta.lastContactMs);
  for (const k in meta.headers) h[k] = meta.headers[k];
  return h;
}

function writeMeta(res: ServerResponse, meta: ResponseMeta): void {
  if (res.headersSent) return;
  const h = metaHeaders(meta);
  for (const k in h) res.setHeader(k, h[k]!);
}

function sendError(res: ServerResponse, err: unknown, path: string, options: AppOptions): void {
  if (err instanceof RegistryError) {
    if (!res.headersSent) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
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
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`Request decode failed: ${(err as Error).message}`);
  }
}

/** Express 5 gives wildcard params as arrays of segments; routes want one string. */
function decodeParams(params: RawParams): Record<string, string> {
  const out: Record<string, string> = {};
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

export { single };
