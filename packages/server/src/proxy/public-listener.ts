// The proxy's public side (Consul's proxy/listener.go, public mode): a TLS listener with this
// service's leaf. A client must present a certificate that chains to the cluster's roots; its SPIFFE
// URI is then put to the agent (`/v1/agent/connect/authorize`, answered from the agent cache) and the
// connection is closed, before any byte reaches the application, unless an intention allows it.
// Allowed connections are joined to a plain TCP connection to the local service.
import { connect, type Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { AgentApi } from './agent-api';
import type { ConnectionStats } from './connection-stats';
import type { PublicListenerConfig } from './proxy-config';
import type { ProxyLog } from './proxy-log';
import { splice } from './splice';
import { colonSerial, spiffeUriOf } from './spiffe-peer';
import type { TlsIdentity } from './tls-material';
import { OpenSockets } from './open-sockets';
import { PROXY_CIPHERS } from './tls-material';

interface AuthorizeAnswer {
  Authorized: boolean;
  Reason: string;
}

export class PublicListener {
  private server: Server | undefined;
  private readonly open = new OpenSockets();

  constructor(
    private readonly cfg: PublicListenerConfig,
    private readonly service: string,
    private readonly api: AgentApi,
    private readonly stats: ConnectionStats,
    private readonly log: ProxyLog,
  ) {}

  async start(id: TlsIdentity): Promise<number> {
    const server = createServer({
      ...contextOf(id),
      requestCert: true,
      rejectUnauthorized: true,
      handshakeTimeout: this.cfg.handshakeTimeoutMs,
    });
    // Nagle off on the raw socket from the accept, not only once the handshake is done: the
    // handshake's later flights (Finished, session tickets) and the first bytes would otherwise wait
    // for the peer's delayed ACK (Go, Consul's proxy, sets TCP_NODELAY on every connection).
    server.on('connection', (raw: Socket) => raw.setNoDelay(true));
    server.on('secureConnection', (s) => this.accepted(s));
    // A failed handshake (no certificate, another CA's) is the client's problem, not the listener's.
    server.on('tlsClientError', (err) => {
      this.stats.errors++;
      this.log.debug('inbound TLS handshake failed', { err: err.message });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.cfg.bindPort, this.cfg.bindAddress, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as { port: number }).port;
    this.log.info('public listener started', { bind: `${this.cfg.bindAddress}:${port}`, local: this.cfg.localServiceAddress });
    return port;
  }

  /** A new leaf or new roots: used for the next handshakes; open connections keep theirs. */
  update(id: TlsIdentity): void {
    this.server?.setSecureContext(contextOf(id));
  }

  /** Stop accepting; with `drop`, close the open connections too. */
  close(drop: boolean): void {
    this.server?.close();
    if (drop) this.open.destroyAll();
  }

  private accepted(tls: TLSSocket): void {
    this.open.take(tls);
    const cert = tls.getPeerCertificate();
    const uri = spiffeUriOf(cert);
    if (!uri) return this.refuse(tls, 'client certificate has no SPIFFE URI');
    const t0 = performance.now();
    this.api
      .post<AuthorizeAnswer>('/v1/agent/connect/authorize', { Target: this.service, ClientCertURI: uri, ClientCertSerial: colonSerial(cert.serialNumber) })
      .then(
        (a) => {
          this.log.debug('authorized', { ms: Math.round((performance.now() - t0) * 100) / 100 });
          if (!a.body.Authorized) return this.refuse(tls, a.body.Reason, uri);
          this.forward(tls, uri);
        },
        (err: Error) => this.refuse(tls, `authorize failed: ${err.message}`, uri),
      );
  }

  private refuse(tls: TLSSocket, reason: string, source?: string): void {
    this.stats.refused++;
    this.log.info('inbound connection refused', { source, reason });
    tls.destroy();
  }

  private forward(tls: TLSSocket, source: string): void {
    if (tls.destroyed) return;
    const [host, port] = splitHostPort(this.cfg.localServiceAddress);
    const local = connect({ host, port, timeout: this.cfg.localConnectTimeoutMs });
    const failed = (err: Error) => {
      this.stats.errors++;
      this.log.warn('connecting to the local service failed', { local: this.cfg.localServiceAddress, err: err.message });
      local.destroy();
      tls.destroy();
    };
    local.once('timeout', () => failed(new Error('timed out')));
    local.once('error', failed);
    local.once('connect', () => {
      local.off('error', failed);
      local.setTimeout(0);
      local.setNoDelay(true);
      this.stats.accepted++;
      this.log.debug('inbound connection accepted', { source });
      splice(tls, local, this.stats);
      tls.resume();
    });
  }
}

export function contextOf(id: TlsIdentity): { ca: string[]; cert: string; key: string; ciphers: string; honorCipherOrder: boolean } {
  return { ca: id.ca, cert: id.cert, key: id.key, ciphers: PROXY_CIPHERS, honorCipherOrder: true };
}

export function splitHostPort(addr: string): [string, number] {
  const i = addr.lastIndexOf(':');
  const host = addr.slice(0, i).replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return [host === '0.0.0.0' ? '127.0.0.1' : host, Number(addr.slice(i + 1))];
}
