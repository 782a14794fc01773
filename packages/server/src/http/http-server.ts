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

/** The checking interval Node uses for `config`'s deadlines, and timeouts, as server options. */
function timeoutOptions(config: HttpLimitsConfig) {
  return {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.idleTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(config),
  };
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

/**
 * With `tls`, the same server over HTTPS (ports.https; client certificates as `tls` asks). With
 * `shared`, the new server counts its connections with that limiter: HTTP and HTTPS together hold
 * at most HTTP's share of descriptors (limits/descriptor-budget.ts), as Consul's one limiter does.
 */
export function createHttpServer(
  app: HttpHandler,
  config: HttpLimitsConfig,
  logger?: HttpServerLogger,
  tls?: TlsOptions,
  onRefused?: (reason: 'max_conns' | 'max_conns_per_client') => void,
  shared?: ConnectionLimiter,
): LimitedHttpServer {
  // requestTimeout and headersTimeout bound only the *receiving* of a request: once it is read, a
  // blocking query may wait its full `wait` (up to 10 min) before answering. The socket inactivity
  // timeout stays off for the same reason.
  const options = {
    // Answers are written whole (one write per answer), so Nagle could only hold a small answer back
    // for the client's delayed ACK (tens of ms at one request per connection). Node 20's default,
    // made explicit because the c=1 write latency depends on it (issue #14).
    noDelay: true,
    ...timeoutOptions(config),
  };
  // An https.Server is an http.Server to everything below (limits, timeouts, close).
  const server = tls ? (createHttpsServer({ ...options, ...tls }, app) as unknown as Server) : createServer(options, app);
  server.timeout = 0;
  const limiter = shared ?? new ConnectionLimiter(resolveConnectionLimits({ maxConns: config.maxConns, maxConnsPerClient: config.maxConnsPerClient }), logger, onRefused);
  limiter.install(server);
  // The deadlines named in a 408 are the server's current ones (a reload may change them).
  server.on('clientError', answerClientError({
    get headersTimeoutMs() { return server.headersTimeout; },
    get requestTimeoutMs() { return server.requestTimeout; },
    logger,
  }));
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
    logger?.warn({ code: err.code, err: err.message, open: limiter.openConnections, maxConns: limiter.limits.maxConns }, 'accepting an HTTP connection failed');
  });
  return { server, limits: limiter.limits, limiter };
}

/**
 * A reload's new HTTP bounds (`http_config` timeouts, `limits.http_*`), applied to running servers
 * that share `limiter`: the caps decide every connection accepted from now on; the header and
 * request deadlines every request being received (Node reads them from the server on each check,
 * whose interval follows them); the idle timeout each connection's next wait between requests, and
 * a connection idle now is given the new one from now if it is shorter than what it was given.
 */
export function reconfigureHttpServers(servers: readonly Server[], limiter: ConnectionLimiter, config: HttpLimitsConfig): ConnectionLimits {
  const limits = resolveConnectionLimits({ maxConns: config.maxConns, maxConnsPerClient: config.maxConnsPerClient });
  limiter.update(limits);
  const t = timeoutOptions(config);
  // Every server of the limiter was made from the same config: one old idle timeout.
  const oldIdle = servers[0]?.keepAliveTimeout ?? 0;
  for (const server of servers) {
    server.headersTimeout = t.headersTimeout;
    server.requestTimeout = t.requestTimeout;
    server.keepAliveTimeout = t.keepAliveTimeout;
    restartDeadlineChecks(server, t.connectionsCheckingInterval);
  }
  if (oldIdle > 0 && t.keepAliveTimeout < oldIdle) {
    // Between requests Node sets a socket's timeout to keepAliveTimeout (Node 20: plus a 1 s
    // buffer), and back to 0 — the server's — when the next request comes: a socket whose timeout is
    // the old idle timeout is idle.
    for (const socket of limiter.openSockets()) {
      const timeout = socket.timeout ?? 0;
      if (timeout >= oldIdle && timeout <= oldIdle + KEEP_ALIVE_BUFFER_MS) socket.setTimeout(t.keepAliveTimeout);
    }
  }
  return limits;
}

/** What Node 20 adds to keepAliveTimeout when it arms an idle socket's timeout (at most). */
const KEEP_ALIVE_BUFFER_MS = 1_000;

/**
 * Node checks a server's deadlines on an interval fixed when it starts listening (its 'listening'
 * listener, setupConnectionsTracking, clears the old interval and starts one of
 * `connectionsCheckingInterval`): run it again with the new interval. Without it the deadlines
 * still apply, checked at the old interval.
 */
function restartDeadlineChecks(server: Server, intervalMs: number): void {
  const s = server as Server & { connectionsCheckingInterval: number };
  if (s.connectionsCheckingInterval === intervalMs) return;
  s.connectionsCheckingInterval = intervalMs;
  if (!server.listening) return;
  const setup = server.listeners('listening').find((l) => l.name === 'setupConnectionsTracking');
  setup?.call(server);
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
