// The agent's HTTP server with every resource it holds per client bounded (docs/http.md
// "Bounded resources"): time to send a request, idle keep-alive time, open connections in all
// and per client address, and a plain-text answer to whatever the parser refuses.
import { createServer, type Server } from 'node:http';
import type { HttpLimitsConfig } from '../config/config';
import type { HttpHandler } from './app';
import { answerClientError } from './client-errors';
import { ConnectionLimiter, resolveConnectionLimits, type ConnectionLimits } from './connection-limit';

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

export function createHttpServer(app: HttpHandler, config: HttpLimitsConfig, logger?: HttpServerLogger): LimitedHttpServer {
  // requestTimeout and headersTimeout bound only the *receiving* of a request: once it is read, a
  // blocking query may wait its full `wait` (up to 10 min) before answering. The socket inactivity
  // timeout stays off for the same reason.
  const server = createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      keepAliveTimeout: config.idleTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(config),
    },
    app,
  );
  server.timeout = 0;
  const limits = resolveConnectionLimits({ maxConns: config.maxConns, maxConnsPerClient: config.maxConnsPerClient });
  const limiter = new ConnectionLimiter(limits, logger);
  limiter.install(server);
  server.on('clientError', answerClientError({ headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, logger }));
  // Once listening, an 'error' is a failed accept. libuv absorbs most EMFILE by closing the
  // connection itself, but what it reports (ENFILE, ENOBUFS, EMFILE without its spare descriptor…)
  // Node emits on the server, and with no listener that would end the process. The connection is
  // lost; the server goes on.
  let lastAcceptError = 0;
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (!server.listening) return; // listen errors are the caller's (agent.ts rejects on them)
    const now = Date.now();
    if (now - lastAcceptError < 10_000) return;
    lastAcceptError = now;
    logger?.warn({ code: err.code, err: err.message, open: limiter.openConnections, maxConns: limits.maxConns }, 'accepting an HTTP connection failed');
  });
  return { server, limits, limiter };
}
