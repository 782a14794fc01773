// Who may hold a DNS TCP connection: at most `maxConns` in all (Node's own `maxConnections`, so a
// connection over it is closed before any of our code or buffers touch it) and `maxConnsPerClient`
// from one address, so one address cannot take every slot. A refused connection is closed at
// once, without an answer (DNS has no "busy" message before a query is read, and waiting for one
// would hold the descriptor the limit is there to save); a resolver retries or falls back to UDP.
// Refusals are counted (DnsObserver) and logged at most once per interval, with counts.
import type { Server, Socket } from 'node:net';
import type { DnsObserver, TcpRefusal } from './observer';
import { monotonicMs } from '../time';

/** Refusals are logged at most this often, so a flood does not flood the log too. */
const LOG_EVERY_MS = 10_000;

export interface RefusalLog {
  warn(o: object, msg: string): void;
}

export class TcpAdmission {
  private readonly byClient = new Map<string, number>();
  private readonly refused: Record<TcpRefusal, number> = { max_conns: 0, max_conns_per_client: 0 };
  private lastLog = -Infinity; // monotonic ms: the first refusal is logged at once

  private server: Server | undefined;

  constructor(
    private maxConns: number,
    private maxConnsPerClient: number,
    private readonly observer?: DnsObserver,
    private readonly logger?: RefusalLog,
  ) {}

  /** Bounds `server`'s connections in all; call `admit` for each connection it hands over. */
  install(server: Server): void {
    this.server = server;
    server.maxConnections = this.maxConns;
    server.on('drop', () => this.refuse('max_conns'));
  }

  /** New caps (a reload): they decide every connection accepted from now on; open ones are not closed. */
  update(maxConns: number, maxConnsPerClient: number): void {
    this.maxConns = maxConns;
    this.maxConnsPerClient = maxConnsPerClient;
    if (this.server) this.server.maxConnections = maxConns;
  }

  /** Whether `socket` from `client` may stay; when not, it is already closed. */
  admit(socket: Socket, client: string): boolean {
    const held = this.byClient.get(client) ?? 0;
    if (this.maxConnsPerClient > 0 && held >= this.maxConnsPerClient) {
      socket.destroy();
      this.refuse('max_conns_per_client');
      return false;
    }
    this.byClient.set(client, held + 1);
    socket.once('close', () => {
      const n = (this.byClient.get(client) ?? 1) - 1;
      if (n <= 0) this.byClient.delete(client);
      else this.byClient.set(client, n);
    });
    return true;
  }

  private refuse(reason: TcpRefusal): void {
    this.refused[reason]++;
    this.observer?.tcpRefused(reason);
    const now = monotonicMs();
    if (!this.logger || now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.logger.warn(
      { maxConns: this.maxConns, maxConnsPerClient: this.maxConnsPerClient, refusedFull: this.refused.max_conns, refusedPerClient: this.refused.max_conns_per_client },
      'dns: refusing TCP connections over the limit (limits.dns_max_conns, limits.dns_max_conns_per_client)',
    );
  }
}
