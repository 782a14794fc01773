// The one HTTP client of every command that talks to an agent. node:http(s) rather than fetch:
// fetch loads undici on first use, which alone costs more CPU than the rest of `registry kv get`.
// Address, token and TLS come from the flags, else the environment (REGISTRY_*, then Consul's
// CONSUL_HTTP_ADDR / CONSUL_HTTP_TOKEN), as Consul's api.DefaultConfig reads them.
import { readFileSync, readdirSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { CliError } from './cli-error';
import { tlsCause } from './tls-cause';

/** The flags every HTTP command takes (commander's camel-cased names of Consul's flags). */
export interface HttpFlags {
  httpAddr?: string;
  token?: string;
  tokenFile?: string;
  datacenter?: string;
  stale?: boolean;
  caFile?: string;
  caPath?: string;
  clientCert?: string;
  clientKey?: string;
  tlsServerName?: string;
}

export type QueryValue = string | number | boolean | undefined | string[];

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: string | Buffer | object;
  /** Leave ?dc= off (agent-local endpoints). */
  local?: boolean;
  /** Statuses answered as a reply instead of an error (e.g. 404 for a missing key). */
  accept?: number[];
  /** A blocking query's wait, so the socket timeout does not fire first. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** X-Registry-Index (X-Consul-Index from a Consul-compatible agent), 0 when absent. */
  index: number;
  text(): string;
  json<T = any>(): T;
}

export interface Endpoint {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  socketPath?: string;
  /** How the address is named in errors: `127.0.0.1:8500`. */
  label: string;
}

const env = (...names: string[]) => names.map((n) => process.env[n]).find((v) => v !== undefined && v !== '');

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|t|true|yes)$/i.test(v);
}

/** `host:port`, `http(s)://host:port` or `unix:///path`, as Consul's -http-addr. */
export function endpointOf(addr: string, ssl: boolean): Endpoint {
  if (addr.startsWith('unix://')) {
    const socketPath = addr.slice('unix://'.length);
    return { protocol: 'http:', host: 'localhost', port: 0, socketPath, label: addr };
  }
  let protocol: Endpoint['protocol'] = ssl ? 'https:' : 'http:';
  let rest = addr;
  const scheme = /^(https?):\/\//i.exec(addr);
  if (scheme) {
    protocol = scheme[1].toLowerCase() === 'https' ? 'https:' : 'http:';
    rest = addr.slice(scheme[0].length);
  }
  rest = rest.replace(/\/+$/, '');
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(rest);
  if (!m) throw new CliError(`Error parsing address ${JSON.stringify(addr)}: expected host:port`);
  const host = m[1].replace(/^\[|\]$/g, '');
  const port = m[2] ? Number(m[2]) : protocol === 'https:' ? 443 : 80;
  return { protocol, host, port, label: `${m[1]}:${port}` };
}

export function tokenOf(f: HttpFlags): string | undefined {
  if (f.token) return f.token;
  const file = f.tokenFile || undefined;
  if (file) return readTokenFile(file);
  const fromEnv = env('REGISTRY_HTTP_TOKEN');
  if (fromEnv) return fromEnv;
  const envFile = env('REGISTRY_HTTP_TOKEN_FILE');
  if (envFile) return readTokenFile(envFile);
  return env('CONSUL_HTTP_TOKEN');
}

function readTokenFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new CliError(`Error reading token file ${file}: ${(err as Error).message}`);
  }
}

function caBundle(caFile?: string, caPath?: string): string[] | undefined {
  const out: string[] = [];
  try {
    if (caFile) out.push(readFileSync(caFile, 'utf8'));
    if (caPath) for (const f of readdirSync(caPath).filter((n) => /\.(pem|crt)$/.test(n))) out.push(readFileSync(join(caPath, f), 'utf8'));
  } catch (err) {
    throw new CliError(`Error loading CA certificates: ${(err as Error).message}`);
  }
  return out.length ? out : undefined;
}

/** Node's error codes in the words Go's net package uses. */
function causeOf(err: NodeJS.ErrnoException, label: string): string {
  const tls = tlsCause(err);
  if (tls) return `${tls} ${label}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `connection refused ${label}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `no such host ${label}`;
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return `i/o timeout ${label}`;
    case 'ECONNRESET':
      return `connection reset by peer ${label}`;
    case 'EHOSTUNREACH':
      return `no route to host ${label}`;
    case 'ENOENT':
      return `no such file or directory ${label}`;
    default:
      return `${err.message} ${label}`;
  }
}

/** A request's own TCP (or unix socket) connection; node:http has loaded node:net already. */
function connectPlain(opts: object): import('node:net').Socket {
  return (require('node:net') as typeof import('node:net')).createConnection(opts as import('node:net').NetConnectOpts);
}

/** A non-2xx answer, worded as Consul's api package words it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`Unexpected response code: ${status} (${body.trim()})`);
  }
}

/** The whole body of a response; a connection lost midway throws CliError, as a failed request does. */
function readAll(res: IncomingMessage, label: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', (err) => reject(new CliError(causeOf(err, label))));
    res.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

export class Client {
  readonly endpoint: Endpoint;
  private readonly token?: string;
  private readonly tls: { ca?: string[]; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean };

  constructor(private readonly flags: HttpFlags = {}) {
    const addr = flags.httpAddr || env('REGISTRY_HTTP_ADDR', 'CONSUL_HTTP_ADDR') || '127.0.0.1:8500';
    this.endpoint = endpointOf(addr, truthy(env('REGISTRY_HTTP_SSL')));
    this.token = tokenOf(flags);
    const read = (file: string | undefined, what: string) => {
      if (!file) return undefined;
      try {
        return readFileSync(file, 'utf8');
      } catch (err) {
        throw new CliError(`Error loading ${what}: ${(err as Error).message}`);
      }
    };
    const verify = env('REGISTRY_HTTP_SSL_VERIFY');
    this.tls = {
      ca: caBundle(flags.caFile || env('REGISTRY_CACERT'), flags.caPath || env('REGISTRY_CAPATH')),
      cert: read(flags.clientCert || env('REGISTRY_CLIENT_CERT'), 'client certificate'),
      key: read(flags.clientKey || env('REGISTRY_CLIENT_KEY'), 'client key'),
      servername: flags.tlsServerName || env('REGISTRY_TLS_SERVER_NAME'),
      rejectUnauthorized: verify === undefined || truthy(verify),
    };
  }

  get hasToken(): boolean {
    return this.token !== undefined;
  }

  /** The request; a transport failure throws `CliError("<doing>: connection refused <addr>")`. */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    const query = new URLSearchParams();
    if (!opts.local && this.flags.datacenter) query.set('dc', this.flags.datacenter);
    if (this.flags.stale && method === 'GET') query.set('stale', '');
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined || v === false) continue;
      for (const one of Array.isArray(v) ? v : [v]) query.append(k, v === true ? '' : String(one));
    }
    const qs = query.toString().replace(/=(?=&|$)/g, '');
    const headers: Record<string, string> = {};
    let body: Buffer | undefined;
    if (opts.body !== undefined) {
      body = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Length'] = String(body.length);
    }
    const res = await this.open(method, path + (qs ? `?${qs}` : ''), headers, body, opts.signal, opts.timeoutMs ?? 65_000);
    const buf = await readAll(res, this.endpoint.label);
    const idx = res.headers['x-registry-index'] ?? res.headers['x-consul-index'];
    const reply: Reply = {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: buf,
      index: Number(Array.isArray(idx) ? idx[0] : idx) || 0,
      text: () => buf.toString('utf8'),
      json: () => (buf.length ? JSON.parse(buf.toString('utf8')) : null),
    };
    if ((reply.status < 200 || reply.status >= 300) && !opts.accept?.includes(reply.status)) throw new ApiError(reply.status, reply.text());
    return reply;
  }

  /**
   * A GET whose answer is read as it arrives (`registry monitor`): resolves with the response once
   * a 2xx status is in, with no socket timeout (an idle stream is not a dead one); a non-2xx answer
   * is read whole and thrown as ApiError, a transport failure as CliError, as `request` does.
   */
  async stream(path: string, opts: Pick<RequestOptions, 'query' | 'signal'> = {}): Promise<IncomingMessage> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== false) query.append(k, String(v));
    const qs = query.toString();
    const res = await this.open('GET', path + (qs ? `?${qs}` : ''), {}, undefined, opts.signal);
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return res;
    throw new ApiError(status, (await readAll(res, this.endpoint.label)).toString('utf8'));
  }

  /**
   * Sends the request; resolves with the response once its status is in. `timeoutMs`: an idle
   * socket for that long ends the request (none for a stream, where idle is not dead). A transport
   * failure throws `CliError("<doing>: connection refused <addr>")`; an abort rejects as it is.
   */
  private open(method: string, pathAndQuery: string, headers: Record<string, string>, body: Buffer | undefined, signal?: AbortSignal, timeoutMs?: number): Promise<IncomingMessage> {
    if (this.token) headers['X-Registry-Token'] = this.token;
    const ep = this.endpoint;
    const https = ep.protocol === 'https:';
    // https (and tls) only when used; require, not import(), which would start the ESM loader.
    const mod = (https ? require('node:https') : require('node:http')) as typeof import('node:http');
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = mod.request(
        {
          method,
          host: ep.host,
          port: ep.port,
          socketPath: ep.socketPath,
          path: pathAndQuery,
          headers,
          signal,
          // No keep-alive pool: a finished command must not be held open by an idle socket. Plain
          // http connects itself, with no Agent at all (a one-off Agent is ~1 ms of a command's
          // CPU); https keeps a one-off Agent, which is where Node sets SNI from the host.
          ...(https ? { agent: false, ...this.tls } : { createConnection: connectPlain }),
        },
        resolve,
      );
      if (timeoutMs !== undefined) req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.name === 'AbortError') reject(err);
        else reject(new CliError(causeOf(err, ep.label)));
      });
      req.end(body);
    });
  }

  async get<T = any>(path: string, opts?: RequestOptions): Promise<T> {
    return (await this.request('GET', path, opts)).json<T>();
  }

  async put<T = any>(path: string, body?: RequestOptions['body'], opts?: RequestOptions): Promise<T> {
    return (await this.request('PUT', path, { ...opts, body })).json<T>();
  }

  async delete<T = any>(path: string, opts?: RequestOptions): Promise<T> {
    return (await this.request('DELETE', path, opts)).json<T>();
  }
}

/** Wraps a failure as Consul words it: `Error querying agent: connection refused 127.0.0.1:8500`. */
export function failure(doing: string, err: unknown): CliError {
  if (err instanceof CliError && err.prefixed) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new CliError(`${doing}: ${message}`, 1, true);
}
