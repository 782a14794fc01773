// The DNS sockets: UDP and TCP on one port (Consul's DNS on 8600). A datagram is one query; over
// TCP each message is framed by a two-byte length (RFC 1035 §4.2.2, RFC 7766), answered in order.
// Port 0 picks a free port for UDP and binds TCP to the same one.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import { FLAG_AA, decode, encode, withRcode, type Packet } from './codec';
import type { Network } from './handler';

export type Respond = (req: Packet, network: Network, remoteIp: string) => Promise<Packet>;

export interface DnsServerOptions {
  host: string;
  port: number;
  respond: Respond;
  onError?: (err: Error) => void;
}

/** An idle TCP connection is closed after this long (RFC 7766 suggests seconds, not minutes). */
const TCP_IDLE_MS = 10_000;
const BIND_ATTEMPTS = 5;

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
  private readonly conns = new Set<Socket>();

  private constructor(
    private readonly udp: UdpSocket,
    private readonly tcp: Server,
    private readonly opts: DnsServerOptions,
  ) {
    udp.on('message', (msg, rinfo) => void this.onDatagram(msg, rinfo));
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

  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }

  private async onDatagram(msg: Buffer, rinfo: RemoteInfo): Promise<void> {
    let out: Buffer | undefined;
    try {
      const req = decode(msg);
      if (req.type !== 'query') return;
      out = encode(await this.opts.respond(req, 'udp', unwrapMapped(rinfo.address)));
    } catch {
      out = formErr(msg);
    }
    if (out) this.udp.send(out, rinfo.port, rinfo.address, (err) => err && this.opts.onError?.(err));
  }

  private onConnection(sock: Socket): void {
    this.conns.add(sock);
    sock.setNoDelay(true);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    sock.on('close', () => this.conns.delete(sock));
    sock.on('error', () => sock.destroy());
    const remoteIp = unwrapMapped(sock.remoteAddress ?? '');
    let buffered: Buffer = Buffer.alloc(0);
    // Answers go back in the order the queries came (one chain per connection).
    let chain = Promise.resolve();
    sock.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0);
        if (buffered.length < 2 + len) break;
        const msg = buffered.subarray(2, 2 + len);
        buffered = buffered.subarray(2 + len);
        chain = chain.then(() => this.answerTcp(sock, msg, remoteIp));
      }
    });
  }

  private async answerTcp(sock: Socket, msg: Buffer, remoteIp: string): Promise<void> {
    let out: Buffer | undefined;
    try {
      const req = decode(msg);
      if (req.type !== 'query') return;
      out = encode(await this.opts.respond(req, 'tcp', remoteIp));
    } catch {
      out = formErr(msg);
    }
    if (!out || sock.destroyed) return;
    const len = Buffer.alloc(2);
    len.writeUInt16BE(out.length);
    sock.write(Buffer.concat([len, out]));
  }
}
