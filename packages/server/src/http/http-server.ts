// The agent's HTTP server with every resource it holds per client bounded (docs/http.md
// "Bounded resources"): time to send a request, idle keep-alive time, open connections in all
// and per client address, and a plain-text answer to whatever the parser refuses.
import { lstat, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TlsOptions } from 'node:tls';
import type { HttpLimitsConfig } from '../config/config';
import type { HttpHandler } from './app';
import { answerClientError } from './client-errors';
import { ConnectionLimiter, resolveConnectionLimits, type ConnectionLimits } from './connection-limit';
import { monotonicMs } from '../time';

export interface HttpServerLogger {
  warn(o: object, msg: string): void;
  debug(o: object, msg: string): void;
}

export interface LimitedHttpServer {
  server: Server;
  limits: ConnectionLimits;
  limiter: ConnectionLimiter;
}

/**
 * Node checks the header and request deadlines on a timer (30 s by default), so a deadline is
 * enforced only to within that period: check at a quarter of the shortest one.
 */
function checkingIntervalMs(c: HttpLimitsConfig): number {
  const deadlines = [c.headersTimeoutMs, c.requestTimeoutMs].filter((ms) => ms > 0);
  if (deadlines.length === 0) return 30_000;
  return Math.min(5_000, Math.max(100, Math.floor(Math.min(...deadlines) / 4)));
}

/** With `tls`, the same server over HTTPS (ports.https; client certificates as `tls` asks). */
export function createHttpServer(
  app: HttpHandler,
  config: HttpLimitsConfig,
  logger?: HttpServerLogger,
  tls?: TlsOptions,
  onRefused?: (reason: 'max_conns' | 'max_conns_per_client') => void,
): LimitedHttpServer {
  // requestTimeout and headersTimeout bound only the *receiving* of a request: once it is read, a
  // blocking query may wait its full `wait` (up to 10 min) before answering. The socket inactivity
  // timeout stays off for the same reason.
  const options = {
    // Answers are written whole (one write per answer), so Nagle could only hold a small answer back
    // for the client's delayed ACK (tens of ms at one request per connection). Node 20's default,
    // made explicit because the c=1 write latency depends on it (issue #14).
    noDelay: true,
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.idleTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(config),
  };
  // An https.Server is an http.Server to everything below (limits, timeouts, close).
  const server = tls ? (createHttpsServer({ ...options, ...tls }, app) as unknown as Server) : createServer(options, app);
  server.timeout = 0;
  const limits = resolveConnectionLimits({ maxConns: config.maxConns, maxConnsPerClient: config.maxConnsPerClient });
  const limiter = new ConnectionLimiter(limits, logger, onRefused);
  limiter.install(server);
  server.on('clientError', answerClientError({ headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, logger }));
  // Once listening, an 'error' is a failed accept. libuv absorbs most EMFILE by closing the
  // connection itself, but what it reports (ENFILE, ENOBUFS, EMFILE without its spare descriptor…)
  // Node emits on the server, and with no listener that would end the process. The connection is
  // lost; the server goes on.
  let lastAcceptError = -Infinity; // monotonic ms: the first is logged at once
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (!server.listening) return; // listen errors are the caller's (agent.ts rejects on them)
    const now = monotonicMs();
    if (now - lastAcceptError < 10_000) return;
    lastAcceptError = now;
    logger?.warn({ code: err.code, err: err.message, open: limiter.openConnections, maxConns: limits.maxConns }, 'accepting an HTTP connection failed');
  });
  return { server, limits, limiter };
}

export interface HttpListenAt {
  client: string;
  httpPort: number;
  /** `addresses.http = "unix:///path"`: listen on this unix socket instead. */
  httpUnixSocket?: string;
}

/**
 * Listen where the config says: a TCP address and port, or a unix socket. A socket file left by an
 * agent that did not stop cleanly is removed first (as Consul does); any other file there is an error.
 */
export async function listenHttp(server: Server, at: HttpListenAt): Promise<void> {
  const socket = at.httpUnixSocket;
  if (socket) {
    const existing = await lstat(socket).catch(() => undefined);
    if (existing?.isSocket()) await unlink(socket);
    else if (existing) throw new Error(`addresses.http: ${socket} exists and is not a socket`);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (socket) server.listen({ path: socket, backlog: LISTEN_BACKLOG }, done);
    else server.listen({ port: at.httpPort, host: at.client, backlog: LISTEN_BACKLOG }, done);
  });
}

/**
 * The accept queue asked of listen(2). Node's default is 511; Go (so Consul) asks for the kernel's
 * net.core.somaxconn, commonly 4096. A burst of connections — thousands of watchers re-arming after
 * an agent restart — overflows 511 and the kernel resets the rest (bench/watchers lost 1–10 % of
 * 50,000 that way). The kernel caps the number at somaxconn, so asking for more is harmless.
 */
export const LISTEN_BACKLOG = 65_535;

/** `ip:port`, or `unix:///path` for a unix socket ('' when not listening): what clients are told to use. */
export function httpAddressOf(server: Server | null | undefined): string {
  const a = server?.address();
  if (!a) return '';
  return typeof a === 'string' ? `unix://${a}` : `${a.address}:${a.port}`;
}
