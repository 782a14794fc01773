// Raft messages and internal RPC over one TCP port. Each server dials each peer once and
// keeps the connection; what it receives on the connections others dialled are their Raft
// messages and requests, answered on the same connection.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type ConnectionOptions, type TlsOptions } from 'node:tls';
import type { Message, ServerInfo } from '../core/types';
import type { CallOptions, Transport } from '../interfaces';
import { flushCoalesced, writeCoalesced } from './coalesced-write';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder, FrameEncoder, type EncodedFrame } from './frame-codec';
import { inboundFrameProblem } from './frame-shape';
import { DEFAULT_INBOUND_LIMITS, InboundGate, type InboundConnection, type InboundLimits, type InboundObserver } from './inbound-limits';
import { PeerConnection } from './peer-connection';
import { RemoteError, RpcConnectionError, RpcTimeoutError } from './rpc-errors';
import { FrameKind, toWireError, type Frame } from './wire';
import { joinHostPort, senderAddress, type Caller } from './sender-address';

export interface TcpTransportOptions {
  /** The address to listen on (may be a wildcard: 0.0.0.0, ::). */
  host: string;
  /**
   * The host others reach this server by (its advertised address; an IP or a host name). Frames
   * name their sender by it and `address` reports it with the listening port. Absent: `host`.
   */
  advertise?: string;
  /** 0 picks a free port; `address` then reports it. */
  port: number;
  maxFrameBytes?: number;
  /** Default deadline of `call`. */
  defaultTimeoutMs?: number;
  /**
   * Dial another address than the one a peer is known by (test-only: partition tests put a
   * proxy on every link). Keys are peer addresses, values the address to connect to.
   */
  dialMap?: Readonly<Record<string, string>>;
  /**
   * TLS on this port (docs/operations.md "TLS"): `server` makes the listener accept TLS (with
   * `requestCert` + `rejectUnauthorized`, only peers with a certificate from its CA); with
   * `acceptPlain` it takes plain connections too, told apart by their first byte (a TLS handshake
   * starts with 0x16, a frame with the high byte of its 4-byte length, < 0x16 for frames under
   * 352 MiB — a connection's first frame is small, or at most a restore's state, capped at 256 MiB),
   * as Consul's RPC port serves both unless verify_incoming_rpc.
   * `dial` is how connections to other servers are made by default (CA, own certificate, name
   * check); absent: plain. setDialTls() overrides it per address (area links, UseTLS).
   */
  tls?: { server: TlsOptions; dial?: ConnectionOptions; acceptPlain?: boolean };
  /** Bounds on accepted connections (inbound-limits.ts); unset fields take DEFAULT_INBOUND_LIMITS. */
  inbound?: Partial<InboundLimits>;
  /** Told of every connection closed or frame refused by those bounds. */
  inboundObserver?: InboundObserver;
}

/**
 * Unsent answers one connection may hold: past this, its requests are not read until the client
 * has read its answers (a client that pipelines requests and never reads would otherwise grow the
 * server's memory without bound, as issue 31 showed for DNS over TCP).
 */
const MAX_UNSENT_ANSWER_BYTES = 16 * 1024 * 1024;
/** Connections one member may hold exempt from the caps (its link, and its next while the old one closes). */
const PEER_LINKS_PER_MEMBER = 2;

/** First byte of a TLS record carrying a handshake (a ClientHello). */
const TLS_HANDSHAKE = 0x16;

interface PendingCall {
  address: string;
  method: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

type Handler = (body: unknown, caller: Caller) => Promise<unknown> | unknown;

export class TcpTransport implements Transport {
  private readonly encoder = new FrameEncoder();
  private readonly peers = new Map<string, PeerConnection>();
  private readonly inbound = new Set<Socket>();
  private readonly gate: InboundGate;
  /** TLS connections admitted as raw sockets, by remote address and port, until their handshake ends. */
  private readonly admittedTls = new Map<string, InboundConnection>();
  /** Connections exempted as each member's (inbound-limits.ts "peer"), by node id. */
  private readonly memberLinks = new Map<string, InboundConnection[]>();
  private isMember: (id: string) => boolean = () => false;
  private readonly handlers = new Map<string, Handler>();
  private readonly pending = new Map<number, PendingCall>();
  /** Per-address dial options set by setDialTls (null: plain). */
  private readonly dialOverrides = new Map<string, ConnectionOptions | null>();
  private messageHandler: (message: Message, fromAddress?: string) => void = () => undefined;
  private nextCallId = 1;
  private closed = false;

  private constructor(
    private readonly server: Server,
    /** The advertised address with the listening port: how frames name this server. */
    readonly address: string,
    /** Where it listens (`host:port` as bound, perhaps a wildcard). */
    readonly bindAddress: string,
    private readonly maxFrameBytes: number,
    private readonly defaultTimeoutMs: number,
    private readonly dialMap: Readonly<Record<string, string>> = {},
    private readonly dialTls: ConnectionOptions | undefined,
    tls: TcpTransportOptions['tls'],
    limits: InboundLimits,
    observer: InboundObserver | undefined,
  ) {
    this.gate = new InboundGate(limits, observer);
    // Every connection is admitted (or refused) as a raw socket, before any TLS: the handshake
    // timeout covers a TLS handshake too. A TLS server hands over the socket once the handshake
    // (and client-certificate check) passed; a failed handshake (a plain client, a certificate from
    // another CA) just closes it.
    if (!tls) {
      server.on('connection', (socket: Socket) => {
        const conn = this.admit(socket);
        if (conn) this.accept(socket, conn);
      });
    } else if (!tls.acceptPlain) {
      server.prependListener('connection', (socket: Socket) => this.admitTls(socket));
      server.on('secureConnection', (socket: Socket) => this.acceptTls(socket));
      server.on('tlsClientError', () => undefined);
    } else {
      const secure = createTlsServer({ ...tls.server, noDelay: true });
      secure.on('secureConnection', (socket: Socket) => this.acceptTls(socket));
      secure.on('tlsClientError', () => undefined);
      server.on('connection', (socket: Socket) => {
        const conn = this.admit(socket);
        if (conn) this.sniff(socket, conn, secure);
      });
    }
    // A failed accept (EMFILE and the like, which the caps should make rare) loses that connection;
    // with no listener Node would end the process.
    server.on('error', () => undefined);
  }

  static async listen(options: TcpTransportOptions): Promise<TcpTransport> {
    const tlsOnly = options.tls && !options.tls.acceptPlain;
    const server = tlsOnly ? createTlsServer({ ...options.tls!.server, noDelay: true }) : createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A deep accept queue (the kernel caps it at somaxconn): a burst of connections waits there,
      // costing no descriptor, until the caps admit or close each one; a short queue would leave
      // the rest half-open on the client's side.
      server.listen({ port: options.port, host: options.host, backlog: 65_535 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    return new TcpTransport(
      server,
      joinHostPort(options.advertise ?? options.host, port),
      joinHostPort(options.host, port),
      options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
      options.defaultTimeoutMs ?? 5000,
      options.dialMap,
      options.tls?.dial,
      options.tls,
      { ...DEFAULT_INBOUND_LIMITS, ...definedOnly(options.inbound) },
      options.inboundObserver,
    );
  }

  /** The bounds this transport applies to accepted connections. */
  get inboundLimits(): Readonly<InboundLimits> {
    return this.gate.limits;
  }

  /** New bounds for accepted connections (a reload; unset fields take DEFAULT_INBOUND_LIMITS): inbound-limits.ts `update`. */
  setInboundLimits(limits: Partial<InboundLimits>): Readonly<InboundLimits> {
    this.gate.update({ ...DEFAULT_INBOUND_LIMITS, ...definedOnly(limits) });
    return this.gate.limits;
  }

  /** Connections counted against the caps now (not members' links). */
  get inboundConnections(): number {
    return this.gate.openConnections;
  }

  /**
   * Who is a member (the owner's Raft configuration): a connection that delivers a Raft message
   * from one is exempt from the caps and timeouts from then on.
   */
  setMemberCheck(isMember: (id: string) => boolean): void {
    this.isMember = isMember;
  }

  /**
   * How connections to `address` are made from now on: with these TLS options, plain (null), or as
   * the transport's default (undefined). A connection already open another way is closed (calls
   * on it fail as on any lost link; the next one dials anew).
   */
  setDialTls(address: string, tls: ConnectionOptions | null | undefined): void {
    const current = this.dialOverrides.has(address) ? this.dialOverrides.get(address) : undefined;
    if (current === tls) return;
    if (tls === undefined) this.dialOverrides.delete(address);
    else this.dialOverrides.set(address, tls);
    const peer = this.peers.get(address);
    if (peer) {
      peer.close();
      this.peers.delete(address);
      this.failCallsTo(address, new Error('link security changed'));
    }
  }

  flush(): void {
    flushCoalesced();
  }

  send(to: ServerInfo, message: Message): void {
    if (this.closed) return;
    const frame: Frame = [FrameKind.Raft, message, this.address];
    this.peer(to.address).write(this.encoder.encode(frame), false);
  }

  onMessage(handler: (message: Message, fromAddress?: string) => void): void {
    this.messageHandler = handler;
  }

  handle(method: string, handler: Handler): void {
    this.handlers.set(method, handler);
  }

  call(address: string, method: string, body: unknown, timeoutMs = this.defaultTimeoutMs, options?: CallOptions): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('transport is closed'));
    const id = this.nextCallId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (options?.discardOnTimeout) this.peers.get(address)?.reset(`${method} timed out after ${timeoutMs} ms`);
        reject(new RpcTimeoutError(address, method, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { address, method, resolve, reject, timer });
      const frame: Frame = [FrameKind.Request, id, method, body];
      let encoded: EncodedFrame;
      try {
        encoded = this.encoder.encodeParts(frame);
      } catch (err) {
        this.settle(id)?.reject(err as Error);
        return;
      }
      if (!this.peer(address).write(encoded, true)) {
        this.settle(id)?.reject(new RpcConnectionError(address, method, new Error('send queue full')));
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const peer of this.peers.values()) peer.close();
    this.peers.clear();
    for (const socket of this.inbound) socket.destroy();
    this.inbound.clear();
    this.gate.close();
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(new Error('transport is closed'));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private peer(address: string): PeerConnection {
    let peer = this.peers.get(address);
    if (!peer) {
      peer = new PeerConnection(
        this.dialMap[address] ?? address,
        {
          onFrame: (value) => this.onResponse(value as Frame),
          onDown: (error) => this.failCallsTo(address, error),
        },
        this.maxFrameBytes,
        this.dialOverrides.has(address) ? (this.dialOverrides.get(address) ?? undefined) : this.dialTls,
      );
      this.peers.set(address, peer);
    }
    return peer;
  }

  private settle(id: number): PendingCall | undefined {
    const call = this.pending.get(id);
    if (!call) return undefined;
    this.pending.delete(id);
    clearTimeout(call.timer);
    return call;
  }

  private onResponse(frame: Frame): void {
    if (frame[0] !== FrameKind.Response) return;
    const [, id, error, body] = frame;
    const call = this.settle(id);
    if (!call) return; // timed out already
    if (error) call.reject(new RemoteError(error.message, error.name, error.data));
    else call.resolve(body);
  }

  private failCallsTo(address: string, error: Error): void {
    for (const [id, call] of this.pending) {
      if (call.address === address) this.settle(id)?.reject(new RpcConnectionError(address, call.method, error));
    }
  }

  /** A connection to a port serving TLS and plain: its first byte says which it is. */
  private sniff(socket: Socket, conn: InboundConnection, secure: Server): void {
    // Held until it closes: close() ends a connection whether or not it became TLS.
    this.inbound.add(socket);
    socket.on('close', () => this.inbound.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        this.admittedTls.set(remoteKey(socket), conn);
        socket.once('close', () => this.admittedTls.delete(remoteKey(socket)));
        secure.emit('connection', socket);
      } else this.accept(socket, conn);
      process.nextTick(() => socket.resume());
    });
  }

  private admit(socket: Socket): InboundConnection | null {
    if (this.closed) {
      socket.destroy();
      return null;
    }
    socket.on('error', () => undefined); // a refused or reset socket is no error of the server's
    return this.gate.admit(socket);
  }

  /** A raw socket on a TLS-only port: admitted now, handed over by 'secureConnection' after the handshake. */
  private admitTls(socket: Socket): void {
    const conn = this.admit(socket);
    if (!conn) return;
    const key = remoteKey(socket);
    this.admittedTls.set(key, conn);
    this.inbound.add(socket);
    socket.once('close', () => {
      this.inbound.delete(socket);
      this.admittedTls.delete(key);
    });
  }

  private acceptTls(socket: Socket): void {
    const key = remoteKey(socket);
    const conn = this.admittedTls.get(key);
    this.admittedTls.delete(key);
    if (!conn) {
      socket.destroy(); // its raw socket was closed meanwhile (a timeout, an eviction)
      return;
    }
    conn.rebind(socket);
    this.accept(socket, conn);
  }

  private accept(socket: Socket, conn: InboundConnection): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.inbound.add(socket);
    socket.setNoDelay(true);
    const decoder = new FrameDecoder(this.maxFrameBytes);
    socket.on('data', (chunk: Buffer) => {
      conn.touch();
      let frames: unknown[];
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        // Not msgpack, or a frame announcing more than maxFrameBytes (never allocated: refused on its header).
        conn.refuse('bad_frame', (err as Error).message);
        return;
      }
      for (const frame of frames) {
        if (socket.destroyed) return;
        const problem = inboundFrameProblem(frame);
        if (problem) {
          conn.refuse('bad_frame', problem);
          return;
        }
        conn.framed();
        const f = frame as Frame;
        if (f[0] === FrameKind.Raft) {
          if (conn.state !== 'peer') this.identify(conn, f[1].from);
          this.deliver(f[1], senderAddress(f[2], socket.remoteAddress));
        } else if (f[0] === FrameKind.Request) this.serve(socket, conn, f[1], f[2], f[3]);
      }
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => this.inbound.delete(socket));
  }

  /** A member's Raft message: its connection leaves the caps (at most PEER_LINKS_PER_MEMBER per member). */
  private identify(conn: InboundConnection, from: string): void {
    if (!this.isMember(from)) return;
    const links = (this.memberLinks.get(from) ?? []).filter((c) => !c.socket.destroyed);
    if (links.length >= PEER_LINKS_PER_MEMBER) return; // a copy claiming the same id stays counted
    links.push(conn);
    this.memberLinks.set(from, links);
    conn.identified();
  }

  private deliver(message: Message, fromAddress: string | undefined): void {
    try {
      this.messageHandler(message, fromAddress);
    } catch {
      // A message the node cannot handle is as good as lost; Raft tolerates that, the link stays up.
    }
  }

  private serve(socket: Socket, conn: InboundConnection, id: number, method: string, body: unknown): void {
    if (!conn.startRequest()) {
      this.answer(socket, id, new Error(`too many requests in flight on this connection (at most ${this.gate.limits.maxInFlight})`), null);
      return;
    }
    let answered = false;
    const reply = (error: unknown, result: unknown) => {
      if (answered) return;
      answered = true;
      conn.endRequest();
      this.answer(socket, id, error, result);
    };
    const handler = this.handlers.get(method);
    if (!handler) {
      reply(new Error(`unknown rpc method "${method}"`), null);
      return;
    }
    try {
      Promise.resolve(handler(body, { remoteHost: socket.remoteAddress })).then(
        (result) => reply(null, result ?? null),
        (err) => reply(err ?? new Error('rejected'), null),
      );
    } catch (err) {
      reply(err, null);
    }
  }

  private answer(socket: Socket, id: number, error: unknown, result: unknown): void {
    if (socket.destroyed) return;
    let encoded: EncodedFrame;
    try {
      const frame: Frame = [FrameKind.Response, id, error === null ? null : toWireError(error), result];
      encoded = this.encoder.encode(frame);
    } catch (err) {
      encoded = this.encoder.encode([FrameKind.Response, id, toWireError(err), null] satisfies Frame);
    }
    writeCoalesced(socket, encoded);
    // A client that does not read its answers: stop reading its requests until it does.
    if (socket.writableLength > MAX_UNSENT_ANSWER_BYTES && !socket.isPaused()) {
      socket.pause();
      socket.once('drain', () => socket.resume());
    }
  }
}

/** Unset fields left out, so that spreading over the defaults keeps them. */
function definedOnly<T extends object>(partial: Partial<T> | undefined): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(partial ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function remoteKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
