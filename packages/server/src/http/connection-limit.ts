// A bound on open HTTP connections, below the process's file-descriptor limit, so that a flood of
// connections (or of half-sent requests, which Node holds until their headers timeout) cannot use
// up the descriptors LevelDB, Raft and the log need, nor crash the server with EMFILE.
//
// Beyond the bound a new connection gets a one-line plain-text answer and is closed: 503 when the
// server as a whole is full (`limits.http_max_conns`), 429 when that one client address holds too
// many (`limits.http_max_conns_per_client`, as Consul 1.7 — which also answers 429), so one
// address cannot lock every other client out. Refused sockets never reach the HTTP parser.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { descriptorShares, FALLBACK_NOFILE, HTTP_REFUSAL_SLOTS, softFileLimit } from '../limits/descriptor-budget';
import { monotonicMs } from '../time';

export { softFileLimit };
/** Sockets that may be open at once while being refused; beyond them Node drops new connections without a word. */
export const REFUSAL_SLOTS = HTTP_REFUSAL_SLOTS;
/**
 * A refused socket is closed this long after its answer has been handed to the kernel, unless the
 * client hangs up first: long enough to read a request sent right after connecting (closing over
 * unread bytes resets the connection, and the client may lose the answer), short enough that
 * refusals hold few descriptors.
 */
const REFUSAL_LINGER_MS = 50;
/** …and this long at the latest, should the answer never leave (a client that does not read). */
const REFUSAL_MAX_MS = 1_000;
/** Refusals are logged at most this often (with counts), so a flood does not flood the log too. */
const LOG_EVERY_MS = 10_000;
/** The default `limits.http_max_conns` for a soft descriptor limit: HTTP's share (limits/descriptor-budget.ts). */
export function derivedMaxConns(nofile: number): number {
  return descriptorShares(nofile).http;
}

export interface ConnectionLimits {
  maxConns: number;
  /** 0: no per-client bound. */
  maxConnsPerClient: number;
}

/** Effective limits: configured values, else derived from the descriptor limit (per client: half the total). */
export function resolveConnectionLimits(configured: { maxConns?: number; maxConnsPerClient?: number }, nofile = softFileLimit()): ConnectionLimits {
  const maxConns = configured.maxConns ?? derivedMaxConns(nofile ?? FALLBACK_NOFILE);
  const maxConnsPerClient = configured.maxConnsPerClient ?? Math.max(1, Math.floor(maxConns / 2));
  return { maxConns, maxConnsPerClient };
}

interface RefusalLog {
  warn(o: object, msg: string): void;
}

export class ConnectionLimiter {
  private open = 0;
  private readonly byClient = new Map<string, number>();
  /** The admitted sockets (a reload may shorten the idle timeout of those between requests). */
  private readonly sockets = new Set<Socket>();
  /** The servers it guards (HTTP and HTTPS share one limiter, as Consul's agent does). */
  private readonly servers: Server[] = [];
  private refusedFull = 0;
  private refusedClient = 0;
  private lastLog = -Infinity; // monotonic ms: the first refusal is logged at once

  constructor(
    private current: ConnectionLimits,
    private readonly logger?: RefusalLog,
    /** Each refusal, by the limit that refused it (`registry_http_refused_total{reason}`). */
    private readonly onRefused?: (reason: 'max_conns' | 'max_conns_per_client') => void,
  ) {}

  get limits(): ConnectionLimits {
    return this.current;
  }

  /**
   * New caps (a reload): they decide every connection accepted from now on. Connections already
   * open are not closed by a lower cap — they end as clients close them or go idle — but count
   * against it, so no new one is admitted until the count is below it.
   */
  update(limits: ConnectionLimits): void {
    this.current = limits;
    for (const server of this.servers) server.maxConnections = limits.maxConns + REFUSAL_SLOTS;
  }

  /** Open connections counted against the limits. */
  get openConnections(): number {
    return this.open;
  }

  /** The admitted connections that are still open. */
  openSockets(): Iterable<Socket> {
    return this.sockets;
  }

  /**
   * Puts the limiter in front of the HTTP server's own connection handling: call it right after
   * `createServer` (it takes over the 'connection' listeners registered so far).
   */
  install(server: Server): void {
    const handlers = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    this.servers.push(server);
    // A backstop for refusals that pile up faster than they close: Node itself then drops the rest.
    server.maxConnections = this.limits.maxConns + REFUSAL_SLOTS;
    server.on('connection', (socket: Socket) => {
      // A unix socket's peers have no address: they count as one client, "unix".
      if (!this.admit(socket, typeof server.address() === 'string')) return;
      for (const h of handlers) h.call(server, socket);
    });
  }

  private admit(socket: Socket, unixSocket = false): boolean {
    const address = unixSocket ? 'unix' : socket.remoteAddress;
    if (address === undefined) {
      socket.destroy(); // already gone
      return false;
    }
    const client = address.startsWith('::ffff:') ? address.slice(7) : address;
    const held = this.byClient.get(client) ?? 0;
    const { maxConns, maxConnsPerClient } = this.limits;
    if (this.open >= maxConns) {
      this.refusedFull++;
      this.onRefused?.('max_conns');
      refuse(socket, 503, `too many open connections: this server takes at most ${maxConns} (limits.http_max_conns)`);
      this.noteRefusal();
      return false;
    }
    if (maxConnsPerClient > 0 && held >= maxConnsPerClient) {
      this.refusedClient++;
      this.onRefused?.('max_conns_per_client');
      refuse(socket, 429, `too many open connections from ${client}: at most ${maxConnsPerClient} per client (limits.http_max_conns_per_client)`);
      this.noteRefusal();
      return false;
    }
    this.open++;
    this.byClient.set(client, held + 1);
    this.sockets.add(socket);
    socket.once('close', () => {
      this.open--;
      this.sockets.delete(socket);
      const n = (this.byClient.get(client) ?? 1) - 1;
      if (n <= 0) this.byClient.delete(client);
      else this.byClient.set(client, n);
    });
    return true;
  }

  private noteRefusal(): void {
    const now = monotonicMs();
    if (!this.logger || now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.logger.warn(
      { open: this.open, maxConns: this.limits.maxConns, maxConnsPerClient: this.limits.maxConnsPerClient, refusedFull: this.refusedFull, refusedPerClient: this.refusedClient },
      'refusing HTTP connections over the limit',
    );
  }
}

const STATUS_TEXT: Record<number, string> = { 429: 'Too Many Requests', 503: 'Service Unavailable' };

/** Answer on a socket the HTTP parser never saw, then close it. */
function refuse(socket: Socket, status: number, reason: string): void {
  socket.on('error', () => undefined); // a client that already left is not an error here
  // Read (and drop) what the client sends: closing with unread bytes would reset the connection
  // and could discard the answer before the client reads it.
  socket.resume();
  const body = reason;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\n` +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Retry-After: 1\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
  let linger: NodeJS.Timeout | undefined;
  socket.once('finish', () => (linger = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS)));
  const deadline = setTimeout(() => socket.destroy(), REFUSAL_MAX_MS);
  socket.once('close', () => {
    clearTimeout(linger);
    clearTimeout(deadline);
  });
}
