// The proxy's client of its local agent's HTTP API (as Consul's proxy uses its api client): reads,
// blocking reads by index or content hash, and the authorize call. One keep-alive pool, so that the
// authorize call each new inbound connection makes does not open a TCP connection of its own.
import { Agent, request, type RequestOptions } from 'node:http';

export interface AgentAnswer<T> {
  status: number;
  /** X-Registry-Index (0 when absent). */
  index: number;
  /** X-Registry-ContentHash, for hash-blocking agent endpoints. */
  hash: string;
  body: T;
}

/** How long a blocking read waits at the agent; the socket gives up a little after it (+ jitter). */
const BLOCK_WAIT = '5m';
const BLOCK_TIMEOUT_MS = 6 * 60_000;
const PLAIN_TIMEOUT_MS = 30_000;

export class AgentApiError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`Unexpected response code: ${status} (${body.trim().slice(0, 512)})`);
  }
}

function target(address: string): Pick<RequestOptions, 'host' | 'port' | 'socketPath'> {
  let a = address.replace(/^https?:\/\//i, '').replace(/\/+$/, '');
  if (a.startsWith('unix://')) return { socketPath: a.slice('unix://'.length) };
  if (!/:\d+$/.test(a)) a += ':8500';
  const i = a.lastIndexOf(':');
  let host = a.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return { host, port: Number(a.slice(i + 1)) };
}

export class AgentApi {
  private readonly pool = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly where: Pick<RequestOptions, 'host' | 'port' | 'socketPath'>;

  constructor(
    address: string,
    private readonly token: string | undefined,
  ) {
    this.where = target(address);
  }

  get<T>(path: string, query: Record<string, string> = {}, signal?: AbortSignal): Promise<AgentAnswer<T>> {
    return this.send<T>('GET', path, query, undefined, signal);
  }

  /** A blocking GET: `index` (X-Registry-Index) or `hash` (ContentHash) of the previous answer. */
  block<T>(path: string, query: Record<string, string>, last: { index?: number; hash?: string }, signal?: AbortSignal): Promise<AgentAnswer<T>> {
    const q = { ...query };
    if (last.index) q.index = String(last.index);
    if (last.hash) q.hash = last.hash;
    if (last.index || last.hash) q.wait = BLOCK_WAIT;
    return this.send<T>('GET', path, q, undefined, signal, last.index || last.hash ? BLOCK_TIMEOUT_MS : PLAIN_TIMEOUT_MS);
  }

  post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<AgentAnswer<T>> {
    return this.send<T>('POST', path, {}, JSON.stringify(body), signal);
  }

  put<T>(path: string, body: unknown, signal?: AbortSignal): Promise<AgentAnswer<T>> {
    return this.send<T>('PUT', path, {}, JSON.stringify(body), signal);
  }

  close(): void {
    this.pool.destroy();
  }

  private send<T>(method: string, path: string, query: Record<string, string>, body: string | undefined, signal?: AbortSignal, timeoutMs = PLAIN_TIMEOUT_MS): Promise<AgentAnswer<T>> {
    const qs = new URLSearchParams(query).toString().replace(/=(&|$)/g, '$1');
    const headers: Record<string, string> = {};
    if (this.token) headers['X-Registry-Token'] = this.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return new Promise((resolve, reject) => {
      const req = request({ ...this.where, method, path: qs ? `${path}?${qs}` : path, headers, agent: this.pool, signal });
      const timer = setTimeout(() => req.destroy(new Error(`no answer from the agent within ${timeoutMs / 1000} s`)), timeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      req.on('error', fail);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status > 299) return reject(new AgentApiError(status, text));
          const idx = res.headers['x-registry-index'] ?? res.headers['x-consul-index'];
          const hash = res.headers['x-registry-contenthash'] ?? res.headers['x-consul-contenthash'];
          try {
            resolve({ status, index: typeof idx === 'string' ? Number(idx) || 0 : 0, hash: typeof hash === 'string' ? hash : '', body: (text ? JSON.parse(text) : undefined) as T });
          } catch (err) {
            reject(new Error(`the agent's answer is not JSON: ${(err as Error).message}`));
          }
        });
      });
      req.end(body);
    });
  }
}
