// One upstream (Consul's proxy/listener.go, upstream mode): a plain TCP listener on loopback; each
// connection goes over mutual TLS, with this service's leaf, to a healthy mesh endpoint of the
// destination — a sidecar or a native instance from `/v1/health/connect/:service?passing`, followed
// by blocking queries so that a connection does not wait for a lookup (a cached read per connection
// cost ~6 ms, most of a new connection's time, measured: bench/connect), or the answer of a prepared
// query executed with `?connect=true` for each connection — and the server must present the
// destination's SPIFFE identity from this cluster's trust domain.
import { createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import type { AgentApi } from './agent-api';
import { blockingLoop, type BlockingLoop } from './blocking-loop';
import type { ConnectionStats } from './connection-stats';
import type { UpstreamConfig } from './proxy-config';
import type { ProxyLog } from './proxy-log';
import { splice } from './splice';
import { spiffeIdOf } from './spiffe-peer';
import type { TlsIdentity } from './tls-material';
import { OpenSockets } from './open-sockets';

interface Endpoint {
  host: string;
  port: number;
  /** The datacenter the instance is in (its SPIFFE ID names it). */
  datacenter: string;
}

interface ServiceEntry {
  Node: { Address: string; Datacenter?: string };
  Service: { Address: string; Port: number };
}

/** Endpoints whose TLS sessions an upstream keeps (oldest dropped first). */
const MAX_SESSIONS = 256;

export class UpstreamListener {
  private server: Server | undefined;
  private readonly open = new OpenSockets();
  /** The destination's passing endpoints, kept current (service upstreams only). */
  private watch: BlockingLoop | undefined;
  private current: Endpoint[] = [];
  /**
   * TLS sessions to resume, by endpoint, for the identity they were made with: a resumed handshake
   * skips both certificate signatures and chain checks (most of a new connection's CPU). Dropped
   * when the leaf or the roots change, so that a rotation is followed by full handshakes.
   */
  private sessions = new Map<string, Buffer>();
  private sessionsFor: TlsIdentity | undefined;

  constructor(
    private readonly cfg: UpstreamConfig,
    private readonly api: AgentApi,
    private readonly identity: () => TlsIdentity,
    private readonly stats: ConnectionStats,
    private readonly log: ProxyLog,
  ) {}

  async start(): Promise<number> {
    // Nagle off from the accept (OpenSockets.take sets it again; Go's net sets it on every TCP conn).
    const server = createServer({ noDelay: true }, (s) => this.accepted(s));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.cfg.localBindPort, this.cfg.localBindAddress, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as { port: number }).port;
    this.log.info('upstream listener started', { bind: `${this.cfg.localBindAddress}:${port}`, destination: `${this.cfg.destinationType}:${this.cfg.destinationName}` });
    return port;
  }

  close(drop: boolean): void {
    this.watch?.stop();
    this.server?.close();
    if (drop) this.open.destroyAll();
  }

  private accepted(local: Socket): void {
    this.open.take(local);
    const t0 = performance.now();
    this.dial().then(
      (remote) => {
        // The TLS handshake is most of a new connection's cost (docs/benchmarks.md, Connect proxy).
        this.log.debug('upstream connection dialled', { destination: this.cfg.destinationName, ms: Math.round((performance.now() - t0) * 100) / 100, resumed: remote.isSessionReused() });
        if (local.destroyed) return remote.destroy();
        this.stats.accepted++;
        splice(local, remote, this.stats);
        local.resume();
      },
      (err: Error) => {
        this.stats.errors++;
        this.log.warn('upstream connection failed', { destination: this.cfg.destinationName, err: err.message });
        local.destroy();
      },
    );
  }

  private async endpoints(): Promise<Endpoint[]> {
    const dc: Record<string, string> = this.cfg.datacenter ? { dc: this.cfg.datacenter } : {};
    const name = encodeURIComponent(this.cfg.destinationName);
    if (this.cfg.destinationType === 'prepared_query') {
      const a = await this.api.get<{ Datacenter: string; Nodes: ServiceEntry[] }>(`/v1/query/${name}/execute`, { connect: 'true', ...dc });
      return a.body.Nodes.map((e) => endpointOf(e, a.body.Datacenter));
    }
    if (!this.watch) {
      this.watch = blockingLoop<ServiceEntry[]>(
        (last, signal) => this.api.block(`/v1/health/connect/${name}`, { passing: '', ...dc }, { index: last.index }, signal),
        (entries) => (this.current = entries.map((e) => endpointOf(e, this.cfg.datacenter))),
        (err) => this.log.warn('watching the upstream\'s endpoints failed', { destination: this.cfg.destinationName, err: err.message }),
      );
    }
    try {
      await this.watch.ready;
    } catch (err) {
      // The first lookup failed: the next connection starts again.
      this.watch.stop();
      this.watch = undefined;
      throw err;
    }
    return this.current;
  }

  private async dial(): Promise<import('node:tls').TLSSocket> {
    const all = await this.endpoints();
    if (all.length === 0) throw new Error(`no healthy mesh endpoint for ${this.cfg.destinationName}`);
    const ep = all[Math.floor(Math.random() * all.length)]!;
    const id = this.identity();
    if (this.sessionsFor !== id) {
      this.sessions = new Map();
      this.sessionsFor = id;
    }
    const sessions = this.sessions;
    const key = `${ep.host}:${ep.port}`;
    const expected = this.cfg.destinationType === 'service' ? this.cfg.destinationName : undefined;
    return new Promise((resolve, reject) => {
      const s = tlsConnect({
        host: ep.host,
        port: ep.port,
        secureContext: id.context,
        session: sessions.get(key),
        timeout: this.cfg.connectTimeoutMs,
        // The identity is the SPIFFE URI, not a host name (Consul's verifyServerCertMatchesURI).
        checkServerIdentity: (_host: string, cert: PeerCertificate) => verifyPeer(cert, id.trustDomain, expected, ep.datacenter),
      });
      s.setNoDelay(true);
      s.on('session', (session: Buffer) => {
        if (sessions.size >= MAX_SESSIONS && !sessions.has(key)) sessions.delete(sessions.keys().next().value!);
        sessions.set(key, session);
      });
      const fail = (err: Error) => {
        sessions.delete(key);
        s.destroy();
        reject(err);
      };
      s.once('timeout', () => fail(new Error(`connecting to ${ep.host}:${ep.port} timed out`)));
      s.once('error', fail);
      s.once('secureConnect', () => {
        s.off('error', fail);
        s.setTimeout(0);
        resolve(s);
      });
    });
  }
}

function endpointOf(e: ServiceEntry, datacenter: string | undefined): Endpoint {
  return { host: e.Service.Address || e.Node.Address, port: e.Service.Port, datacenter: e.Node.Datacenter || datacenter || '' };
}

/** undefined when the server's certificate names the expected service of this trust domain. */
export function verifyPeer(cert: PeerCertificate, trustDomain: string, service: string | undefined, datacenter: string): Error | undefined {
  const id = spiffeIdOf(cert);
  if (!id || id.kind !== 'service') return new Error('peer certificate has no SPIFFE service identity');
  if (id.trustDomain !== trustDomain.toLowerCase()) return new Error(`peer certificate is from trust domain ${id.trustDomain}, not ${trustDomain}`);
  if (service !== undefined && (id.service !== service || (datacenter !== '' && id.datacenter !== datacenter))) {
    return new Error(`peer certificate is for ${id.service} in ${id.datacenter}, not ${service}`);
  }
  return undefined;
}
