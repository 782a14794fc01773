// Bounds on the connections other processes open to the server port (issue 33: 21,000 idle
// connections used up a follower's descriptors, its write-ahead log could not open a file and it
// left Raft). Consul's `limits { rpc_handshake_timeout, rpc_max_conns_per_client }`, plus a total
// cap, an idle timeout and a bound on the requests one connection has in flight.
//
// A connection is in one of three states:
//   handshake — accepted, no valid frame yet. It must deliver one within `handshakeTimeoutMs`
//               (a TLS handshake, when the port takes TLS, counts against the same time).
//   client    — it has sent valid frames (a client agent, a CLI, a server not (yet) known as a
//               member). Closed after `idleTimeoutMs` without a byte while nothing it asked for
//               is still being served.
//   peer      — it delivered a Raft message from a member of the configuration (the owner's
//               `isMember`): from then on it counts against no cap and is never timed out, so a
//               crowd of other connections from the same address (all test servers share
//               127.0.0.1) cannot take a real member's link away.
// Handshake and client connections count against `maxConns` and, per source address, against
// `maxConnsPerClient`. A new connection over a cap first evicts the oldest connection still in
// handshake (from the same address when it is that address's cap): connections that never say
// anything cannot lock out one that will — a member that reconnects sends its first frame at
// once. Only when no such connection is left is the new one refused (closed without a word: the
// port has no way to say why before a frame).
import type { Socket } from 'node:net';
import { monotonicMs } from '../monotonic-clock';

export interface InboundLimits {
  /** Handshake and client connections open at once (peers not counted). */
  maxConns: number;
  /** The same, from one source address; 0: no per-address bound. */
  maxConnsPerClient: number;
  /** Time from accept to the first valid frame; 0: none. */
  handshakeTimeoutMs: number;
  /** A client connection silent this long with nothing in flight is closed; 0: never. */
  idleTimeoutMs: number;
  /** Requests one connection may have being served at once; more are answered with an error. */
  maxInFlight: number;
}

/** Why a connection was closed or a frame refused (a metric label: keep the set small and fixed). */
export type InboundRefusal =
  | 'max_conns'
  | 'max_conns_per_client'
  | 'handshake_timeout'
  | 'idle_timeout'
  | 'bad_frame'
  | 'in_flight'
  | 'unknown_sender';

/** Hooks for whoever counts and logs refusals (the server: metrics and a rate-limited warning). */
export interface InboundObserver {
  refused?(reason: InboundRefusal, remote: string, detail: string): void;
}

/**
 * Defaults for a transport used without a configuration (tests, a client agent's own port): Consul's
 * handshake timeout and per-client cap; the server derives `maxConns` from its descriptor limit.
 */
export const DEFAULT_INBOUND_LIMITS: InboundLimits = {
  maxConns: 4096,
  maxConnsPerClient: 100,
  handshakeTimeoutMs: 5_000,
  // Consul's clients drop pooled server connections idle for 127 s; a server closing first after a
  // little more never cuts a link its client still means to use.
  idleTimeoutMs: 150_000,
  // A client agent forwards every blocking read its applications hold over its one link
  // (bench/watchers: 12,500 per agent), so this is far above what any one client needs.
  maxInFlight: 32_768,
};

type State = 'handshake' | 'client' | 'peer';

/** One admitted connection. */
export class InboundConnection {
  state: State = 'handshake';
  readonly acceptedAt = monotonicMs();
  lastActivity = monotonicMs();
  inFlight = 0;

  constructor(
    /** The accepted socket; over TLS, once the handshake is done, the TLS socket on it. */
    public socket: Socket,
    /** The source address (an IPv4-mapped IPv6 address as its IPv4 form). */
    readonly client: string,
    private readonly gate: InboundGate,
  ) {}

  /** The TLS socket made on the accepted one: closing that closes the connection. */
  rebind(socket: Socket): void {
    this.socket = socket;
    socket.once('close', () => this.gate.forget(this));
  }

  get remote(): string {
    return `${this.client}:${this.socket.remotePort ?? '?'}`;
  }

  /** Bytes arrived: not idle. */
  touch(): void {
    this.lastActivity = monotonicMs();
  }

  /** A valid frame arrived: the handshake is done. */
  framed(): void {
    this.lastActivity = monotonicMs();
    if (this.state === 'handshake') this.gate.promote(this, 'client');
  }

  /** The connection carries a member's Raft messages: no caps, no timeouts from now on. */
  identified(): void {
    if (this.state !== 'peer') this.gate.promote(this, 'peer');
  }

  /** Whether one more request may be served now; false: refuse it (the caller answers with an error). */
  startRequest(): boolean {
    if (this.inFlight >= this.gate.limits.maxInFlight) {
      this.gate.refused(this, 'in_flight', `more than ${this.gate.limits.maxInFlight} requests in flight on one connection`);
      return false;
    }
    this.inFlight++;
    return true;
  }

  endRequest(): void {
    this.inFlight--;
    this.lastActivity = monotonicMs();
  }

  /** Closes the connection for a reason that is counted and logged. */
  refuse(reason: InboundRefusal, detail: string): void {
    this.gate.refused(this, reason, detail);
    this.socket.destroy();
  }
}

export class InboundGate {
  private counted = 0;
  private readonly byClient = new Map<string, number>();
  /** Connections in handshake, oldest first (a Set keeps insertion order). */
  private readonly handshaking = new Set<InboundConnection>();
  private readonly clients = new Set<InboundConnection>();
  private readonly peers = new Set<InboundConnection>();
  private sweeper: NodeJS.Timeout | null = null;
  private sweepEveryMs = 1_000;
  private lastSweep = 0;

  constructor(
    private current: InboundLimits,
    private readonly observer: InboundObserver = {},
  ) {}

  get limits(): InboundLimits {
    return this.current;
  }

  /**
   * New bounds (a reload). Caps decide every connection accepted from now on (one over a lowered
   * cap still first evicts the oldest connection in handshake); connections already open are not
   * closed for a lower cap. Timeouts apply to every open connection at the next sweep, whose
   * interval follows them. Members' links are untouched: they count against nothing.
   */
  update(limits: InboundLimits): void {
    this.current = limits;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    if (this.counted > 0) this.arm();
  }

  /** Connections counted against the caps (handshake and client). */
  get openConnections(): number {
    return this.counted;
  }

  get peerConnections(): number {
    return this.peers.size;
  }

  /** Takes a just-accepted socket in, or closes it (over a cap with nothing to evict). */
  admit(socket: Socket): InboundConnection | null {
    const address = socket.remoteAddress;
    if (address === undefined) {
      socket.destroy(); // already gone
      return null;
    }
    const client = address.startsWith('::ffff:') ? address.slice(7) : address;
    const { maxConns, maxConnsPerClient } = this.limits;
    if (maxConnsPerClient > 0 && (this.byClient.get(client) ?? 0) >= maxConnsPerClient && !this.evictOldest(client)) {
      this.refusedSocket(client, socket, 'max_conns_per_client', `${client} holds ${maxConnsPerClient} connections (limits.rpc_max_conns_per_client)`);
      return null;
    }
    if (this.counted >= maxConns && !this.evictOldest()) {
      this.refusedSocket(client, socket, 'max_conns', `this server takes at most ${maxConns} connections (limits.rpc_max_conns)`);
      return null;
    }
    const conn = new InboundConnection(socket, client, this);
    this.count(conn, +1);
    this.handshaking.add(conn);
    socket.once('close', () => this.forget(conn));
    this.arm();
    return conn;
  }

  /** Stops the timeouts (the transport is closing). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  promote(conn: InboundConnection, to: 'client' | 'peer'): void {
    if (conn.socket.destroyed) return;
    if (conn.state === 'handshake') this.handshaking.delete(conn);
    else if (conn.state === 'client') this.clients.delete(conn);
    if (to === 'peer') {
      if (conn.state !== 'peer') this.count(conn, -1);
      this.peers.add(conn);
    } else this.clients.add(conn);
    conn.state = to;
  }

  refused(conn: InboundConnection, reason: InboundRefusal, detail: string): void {
    this.observer.refused?.(reason, conn.remote, detail);
  }

  private refusedSocket(client: string, socket: Socket, reason: InboundRefusal, detail: string): void {
    this.observer.refused?.(reason, `${client}:${socket.remotePort ?? '?'}`, detail);
    socket.destroy();
  }

  /** Closes the oldest connection still in handshake (of `client`, when given); false if there is none. */
  private evictOldest(client?: string): boolean {
    for (const conn of this.handshaking) {
      if (client !== undefined && conn.client !== client) continue;
      const reason: InboundRefusal = client !== undefined ? 'max_conns_per_client' : 'max_conns';
      const cap = client !== undefined ? `limits.rpc_max_conns_per_client ${this.limits.maxConnsPerClient}` : `limits.rpc_max_conns ${this.limits.maxConns}`;
      conn.refuse(reason, `closed before its first frame to make room for a new connection (${cap})`);
      this.forget(conn); // now, not at its 'close': the new connection takes its place at once
      return true;
    }
    return false;
  }

  forget(conn: InboundConnection): void {
    if (conn.state === 'peer') {
      this.peers.delete(conn);
      return;
    }
    if (!this.handshaking.delete(conn) && !this.clients.delete(conn)) return; // forgotten already
    this.count(conn, -1);
  }

  private count(conn: InboundConnection, delta: 1 | -1): void {
    this.counted += delta;
    const n = (this.byClient.get(conn.client) ?? 0) + delta;
    if (n <= 0) this.byClient.delete(conn.client);
    else this.byClient.set(conn.client, n);
  }

  /** One timer for every connection's timeouts (a timer per socket would be 21,000 timers in a flood). */
  private arm(): void {
    if (this.sweeper) return;
    const { handshakeTimeoutMs, idleTimeoutMs } = this.limits;
    const shortest = Math.min(...[handshakeTimeoutMs, idleTimeoutMs].filter((ms) => ms > 0));
    if (!Number.isFinite(shortest)) return;
    this.sweepEveryMs = Math.min(1_000, Math.max(50, Math.floor(shortest / 5)));
    this.lastSweep = monotonicMs();
    this.sweeper = setInterval(() => this.sweep(), this.sweepEveryMs);
    this.sweeper.unref();
  }

  private sweep(): void {
    const now = monotonicMs();
    // A sweep that comes late found the event loop blocked (a start under load, a long task): timers
    // run before sockets are read, so a frame may be waiting unread. Give them one turn to be read.
    const late = now - this.lastSweep > 2 * this.sweepEveryMs + 100;
    this.lastSweep = now;
    if (late) return;
    const { handshakeTimeoutMs, idleTimeoutMs } = this.limits;
    if (handshakeTimeoutMs > 0) {
      for (const conn of this.handshaking) {
        if (now - conn.acceptedAt < handshakeTimeoutMs) break; // oldest first: the rest are younger
        conn.refuse('handshake_timeout', `no valid frame within ${handshakeTimeoutMs} ms (limits.rpc_handshake_timeout)`);
        this.forget(conn);
      }
    }
    if (idleTimeoutMs > 0) {
      for (const conn of this.clients) {
        if (conn.inFlight > 0 || now - conn.lastActivity < idleTimeoutMs) continue;
        conn.refuse('idle_timeout', `silent for ${idleTimeoutMs} ms with nothing in flight (limits.rpc_idle_timeout)`);
        this.forget(conn);
      }
    }
  }
}
