/**
 * One HTTP request from the test process, answered as the cluster kits' tests read answers:
 * status, headers, body and a JSON parser. Plain node:http (no keep-alive agent), so that an
 * error keeps its errno code — the nemesis workloads tell a refused connection (certainly not
 * applied) from a reset or a timeout (unknown) by it. Shared by ClusterHarness (loopback) and
 * HostCluster (network namespaces).
 */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = unknown>(): T;
}

export interface HttpOptions {
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** `label` names the agent in a timeout's message. */
export function httpAnswer(
  target: { host: string; port: number; label: string },
  method: string,
  path: string,
  body?: unknown,
  options: HttpOptions = {},
): Promise<HttpAnswer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise<HttpAnswer>((resolvePromise, reject) => {
    const req = request(
      {
        host: target.host,
        port: target.port,
        method,
        path,
        agent: false,
        timeout: options.timeoutMs ?? 5000,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: <T>() => JSON.parse(text) as T });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} on ${target.label} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
