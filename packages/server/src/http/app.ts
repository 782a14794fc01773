// The HTTP edge, written once: body and query parsing, the route table, response headers,
// pretty output, error → status mapping, 404 for unknown routes and 405 for unknown verbs.
import express, { type NextFunction, type Request, type Response } from 'express';
import { HttpError, badRequest } from './errors';
import { flag, parseQueryOptions, single, type Query, type QueryOptions } from './query-options';
import type { ResponseMeta, Route, RouteContext } from './route';

export interface AppOptions {
  datacenter: string;
  /** The agent's default token (`acl.tokens.default` / `acl_token`). */
  defaultToken?: () => string | undefined;
  /** Largest request body accepted (KV values are capped separately by their route). */
  bodyLimit?: string;
  logger?: { error(o: object, msg?: string): void };
}

const JSON_TYPE = 'application/json';

export function createApp(routes: Route<any>[], options: AppOptions): express.Express {
  const app = express();
  app.set('etag', false);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // Bodies arrive with any Content-Type or none (python clients send none): take the raw bytes
  // and let each route decide how to read them.
  app.use(express.raw({ type: () => true, limit: options.bodyLimit ?? '1mb' }));

  const methodsByPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = methodsByPath.get(r.path) ?? new Set<string>();
    set.add(r.method);
    methodsByPath.set(r.path, set);
    const verb = r.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete';
    app[verb](r.path, (req, res, next) => {
      serve(r, req, res, options).catch(next);
    });
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
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      sendText(res, err.status, err.message);
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
    options.logger?.error({ err, path: req.path }, 'request failed');
    sendText(res, 500, e?.message ?? String(err));
  });
  return app;
}

async function serve(r: Route<any>, req: Request, res: Response, options: AppOptions): Promise<void> {
  const query = req.query as Query;
  const agent = { datacenter: options.datacenter, defaultToken: options.defaultToken?.() };
  let opts: QueryOptions;
  if (r.method === 'GET') {
    opts = parseQueryOptions(query, req.headers, agent);
  } else {
    // Writes read only the datacenter and the token (Consul's parseDC + parseToken).
    opts = parseQueryOptions({ dc: query.dc, token: query.token }, req.headers, agent);
  }
  const rawBody = Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined;
  let body: unknown = undefined;
  if (r.body) {
    body = r.body(parseJson(rawBody, r.bodyOptional ?? false));
  }
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const meta: ResponseMeta = { headers: {} };
  const ctx: RouteContext = {
    params: decodeParams(req.params as Record<string, string | string[]>),
    query,
    headers: req.headers,
    opts,
    body,
    rawBody,
    remoteAddress: req.socket.remoteAddress,
    meta,
    signal: controller.signal,
  };
  let value: unknown;
  try {
    value = await r.handle(ctx);
  } catch (err) {
    // Blocking endpoints still report the index on errors (Consul sets it before failing).
    writeMeta(res, meta);
    throw err;
  }
  if (res.headersSent || controller.signal.aborted) return;
  writeMeta(res, meta);
  res.status(meta.status ?? 200);
  if (meta.raw) {
    res.setHeader('Content-Type', meta.raw.contentType);
    res.end(meta.raw.data);
    return;
  }
  if (value === undefined) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', JSON_TYPE);
  res.end(flag(query, 'pretty') ? JSON.stringify(value, null, 4) + '\n' : JSON.stringify(value));
}

function writeMeta(res: Response, meta: ResponseMeta): void {
  if (meta.index !== undefined) res.setHeader('X-Registry-Index', String(Math.max(1, meta.index)));
  if (meta.knownLeader !== undefined) res.setHeader('X-Registry-KnownLeader', String(meta.knownLeader));
  if (meta.lastContactMs !== undefined) res.setHeader('X-Registry-LastContact', String(meta.lastContactMs));
  for (const [k, v] of Object.entries(meta.headers)) res.setHeader(k, v);
}

function parseJson(raw: Buffer | undefined, optional: boolean): unknown {
  if (!raw || raw.length === 0 || raw.toString('utf8').trim() === '') {
    if (optional) return {};
    throw badRequest('Request decode failed: EOF');
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw badRequest(`Request decode failed: ${(err as Error).message}`);
  }
}

/** Express 5 gives wildcard params as arrays of segments; routes want one string. */
function decodeParams(params: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) out[k] = Array.isArray(v) ? v.join('/') : v;
  return out;
}

function sendText(res: Response, status: number, text: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(text);
}

export { single };
