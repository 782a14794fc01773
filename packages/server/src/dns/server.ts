// The DNS sockets: UDP and TCP on one port (Consul's DNS on 8600). A datagram is one query; over
// TCP each message is framed by a two-byte length (RFC 1035 §4.2.2, RFC 7766), answered in order
// (tcp-connection.ts). Port 0 picks a free port for UDP and binds TCP to the same one.
//
// Every socket is bounded (docs/operations.md "DNS limits"): TCP connections in all and per client
// address (tcp-admission.ts), each connection's pipelined queries and first-query/idle timeouts
// (tcp-connection.ts), and the UDP queries being answered at once — past `udpMaxPending` a datagram
// is dropped unread, as a full socket buffer would drop it, so a flood costs bounded memory and
// the server answers again as soon as it ends (issue 33, finding 6).
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import { FLAG_AA, decode, encode, withRcode, type Packet } from './codec';
import type { Network } from './handler';
import type { DnsLimits } from './limits';
import type { DnsObserver } from './observer';
import { TcpAdmission, type RefusalLog } from './tcp-admission';
import { DnsTcpConnection, type TcpConnectionLimits } from './tcp-connection';

export type Respond = (req: Packet, network: Network, remoteIp: string) => Promise<Packet>;

export interface DnsServerOptions {
  host: string;
  port: number;
  respond: Respond;
  limits: DnsLimits;
  observer?: DnsObserver;
  /** Where refusals over the limits are logged (at most once per interval). */
  logger?: RefusalLog;
  onError?: (err: Error) => void;
}

const BIND_ATTEMPTS = 5;

/** What one TCP connection is bound by. */
function connectionLimits(l: DnsLimits): TcpConnectionLimits {
  return { maxInFlight: l.tcpMaxInFlight, firstQueryTimeoutMs: l.tcpFirstQueryTimeoutMs, idleTimeoutMs: l.tcpIdleTimeoutMs };
}

const unwrapMapped = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip);

/** FORMERR for a datagram whose header could be read but whose body could not. */
function formErr(msg: Buffer): Buffer | undefined {
  if (msg.length < 12) return undefined;
  const resp: Packet = { id: msg.readUInt16BE(0), type: 'response', flags: msg.readUInt16BE(2) & 0x7800, questions: [], answers: [], authorities: [], additionals: [] };
  withRcode(resp, 'FORMERR');
  resp.flags &= ~FLAG_AA;
  return encode(resp);
}

export class DnsServer {
  private readonly conns = new Map<Socket, DnsTcpConnection>();
  private readonly admission: TcpAdmission;
  /** UDP queries received and not yet answered (their answer not yet handed to the kernel). */
  private udpPending = 0;
  private limits: DnsLimits;

  private constructor(
    private readonly udp: UdpSocket,
    private readonly tcp: Server,
    private readonly opts: DnsServerOptions,
  ) {
    this.limits = opts.limits;
    this.admission = new TcpAdmission(opts.limits.maxConns, opts.limits.maxConnsPerClient, opts.observer, opts.logger);
    this.admission.install(tcp);
    udp.on('message', (msg, rinfo) => this.onDatagram(msg, rinfo));
    udp.on('error', (err) => opts.onError?.(err));
    tcp.on('connection', (sock) => this.onConnection(sock));
    tcp.on('error', (err) => opts.onError?.(err));
  }

  static async listen(opts: DnsServerOptions): Promise<DnsServer> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < (opts.port === 0 ? BIND_ATTEMPTS : 1); attempt++) {
      const udp = createSocket({ type: isIPv6(opts.host) ? 'udp6' : 'udp4' });
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once('error', reject);
          udp.bind(opts.port, opts.host, () => {
            udp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        throw err;
      }
      const port = udp.address().port;
      const tcp = createServer({ pauseOnConnect: false });
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen(port, opts.host, () => {
            tcp.off('error', reject);
            resolve();
          });
        });
        return new DnsServer(udp, tcp, opts);
      } catch (err) {
        udp.close();
        lastErr = err;
        // A free UDP port whose TCP twin is taken: try another (only when the port was ours to pick).
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') break;
      }
    }
    throw lastErr;
  }

  get port(): number {
    return this.udp.address().port;
  }

  get address(): string {
    const a = this.udp.address();
    return `${a.address}:${a.port}`;
  }

  /** The limits in force. */
  get currentLimits(): DnsLimits {
    return this.limits;
  }

  /**
   * New limits (a reload): the TCP caps decide every connection accepted from now on (open ones
   * are not closed for a lower cap); the pipelining bound and the first-query and idle timeouts
   * apply to open connections too (tcp-connection.ts setLimits); the UDP bound to the next datagram.
   */
  setLimits(limits: DnsLimits): void {
    this.limits = limits;
    this.admission.update(limits.maxConns, limits.maxConnsPerClient);
    for (const conn of this.conns.values()) conn.setLimits(connectionLimits(limits));
  }

  async close(): Promise<void> {
    for (const c of this.conns.keys()) c.destroy();
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }

  private onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    if (this.udpPending >= this.limits.udpMaxPending) {
      this.opts.observer?.udpShed();
      return;
    }
    this.udpPending++;
    void this.answer(msg, 'udp', unwrapMapped(rinfo.address)).then((out) => {
      if (!out) {
        this.udpPending--;
        return;
      }
      try {
        this.udp.send(out, rinfo.port, rinfo.address, (err) => {
          this.udpPending--;
          if (err) this.opts.onError?.(err);
        });
      } catch (err) {
        // The socket closed while the answer was being built (the agent is stopping).
        this.udpPending--;
        this.opts.onError?.(err as Error);
      }
    });
  }

  private onConnection(sock: Socket): void {
    const remoteIp = unwrapMapped(sock.remoteAddress ?? '');
    if (!sock.remoteAddress || !this.admission.admit(sock, remoteIp)) {
      sock.destroy();
      return;
    }
    const { observer } = this.opts;
    const conn = new DnsTcpConnection(sock, {
      ...connectionLimits(this.limits),
      answer: (msg) => this.answer(msg, 'tcp', remoteIp),
      timedOut: (reason) => observer?.tcpTimedOut(reason),
    });
    this.conns.set(sock, conn);
    sock.on('close', () => this.conns.delete(sock));
  }

  /** The encoded answer to one message: FORMERR when it does not decode, none to a non-query. Never rejects. */
  private async answer(msg: Buffer, network: Network, remoteIp: string): Promise<Buffer | undefined> {
    try {
      const req = decode(msg);
      if (req.type !== 'query') return undefined;
      return encode(await this.opts.respond(req, network, remoteIp));
    } catch {
      try {
        return formErr(msg);
      } catch {
        return undefined;
      }
    }
  }
}
