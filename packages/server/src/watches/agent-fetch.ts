// A watch's blocking query, sent to this agent's own HTTP API as Consul's watches do (through its api
// client): the same routes, ACL checks, `?dc` forwarding and JSON as any client gets. The address is
// the agent's HTTP listener (`host:port` or `unix:///path`); a wildcard bind is reached on loopback.
import { request, type RequestOptions } from 'node:http';
import type { WatchQuery } from './watch-query';

export interface Answer {
  status: number;
  /** X-Registry-Index exactly (0 when absent): a uint64, the event list's above 2^53 as often as not. */
  index: bigint;
  body: unknown;
}

/** How long a blocking query may wait at the agent (Consul's api default is the server's, 5 min). */
const WAIT = '5m';
/** The client side gives up a little after the agent's longest wait (+ its jitter). */
const TIMEOUT_MS = 6 * 60_000;
/** An answer larger than this is not read (a keyprefix over a huge tree): the watch fails instead. */
const MAX_ANSWER_BYTES = 64 << 20;

function target(address: string): Pick<RequestOptions, 'host' | 'port' | 'socketPath'> {
  if (address.startsWith('unix://')) return { socketPath: address.slice('unix://'.length) };
  const i = address.lastIndexOf(':');
  let host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return { host, port: Number(address.slice(i + 1)) };
}

export function fetchFromAgent(address: string, q: WatchQuery, index: bigint, token: string | undefined, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const params = new URLSearchParams(q.query);
    if (index > 0n) {
      params.set('index', String(index));
      params.set('wait', WAIT);
    }
    const qs = params.toString().replace(/=(&|$)/g, '$1');
    const headers: Record<string, string> = {};
    if (token) headers['X-Registry-Token'] = token;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    const req = request({ ...target(address), method: 'GET', path: `${q.path}${qs ? `?${qs}` : ''}`, headers, agent: false, signal });
    timer = setTimeout(() => req.destroy(new Error(`no answer from the agent within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) {
          req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        if (!(status >= 200 && status <= 299) && !(status === 404 && q.notFoundIsEmpty)) {
          // The api client's wording.
          reject(new Error(`Unexpected response code: ${status} (${text.trim().slice(0, 512)})`));
          return;
        }
        const header = res.headers['x-registry-index'];
        const index = typeof header === 'string' && /^\d{1,20}$/.test(header) ? BigInt(header) : 0n;
        try {
          resolve({ status, index, body: status === 404 ? null : JSON.parse(text) });
        } catch (err) {
          reject(new Error(`the agent's answer is not JSON: ${(err as Error).message}`));
        }
      });
    });
    req.end();
  });
}
