// One upstream (Consul's proxy/listener.go, upstream mode): a plain TCP listener on loopback; each
// connection goes over mutual TLS, with this service's leaf, to a healthy mesh endpoint of the
// destination — a sidecar or a native instance from `/v1/health/connect/:service?passing` (through
// the agent cache), or the answer of a prepared query executed with `?connect=true` — and the server
// must present the destination's SPIFFE identity from this cluster's trust domain.
import { createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import type { AgentApi } from './agent-api';
import type { ConnectionStats } from './connection-stats';
import type { UpstreamConfig } from './proxy-config';
import type { ProxyLog } from './proxy-log';
import { splice } from './splice';
import { spiffeIdOf } from './spiffe-peer';
import type { TlsIdentity } from './tls-material';

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

export class UpstreamListener {
  private server: Server | undefined;
  private readonly open = new Set<Socket>();

  constructor(
    private readonly cfg: UpstreamConfig,
    private readonly api: AgentApi,
    private readonly identity: () => TlsIdentity,
    private readonly stats: ConnectionStats,
    private readonly log: ProxyLog,
  ) {}

  async start(): Promise<number> {
    const server = createServer((s) => this.accepted(s));
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
    this.server?.close();
    if (drop) for (const s of this.open) s.destroy();
  }

  private accepted(local: Socket): void {
    local.pause();
    local.setNoDelay(true);
    this.open.add(local);
    local.on('close', () => this.open.delete(local));
    local.on('error', () => undefined);
    this.dial().then(
      (remote) => {
        if (local.destroyed) return remote.destroy();
        this.stats.outbound++;
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
    const a = await this.api.get<ServiceEntry[]>(`/v1/health/connect/${name}`, { passing: '', cached: '', ...dc });
    return a.body.map((e) => endpointOf(e, this.cfg.datacenter));
  }

  private async dial(): Promise<import('node:tls').TLSSocket> {
    const all = await this.endpoints();
    if (all.length === 0) throw new Error(`no healthy mesh endpoint for ${this.cfg.destinationName}`);
    const ep = all[Math.floor(Math.random() * all.length)]!;
    const id = this.identity();
    const expected = this.cfg.destinationType === 'service' ? this.cfg.destinationName : undefined;
    return new Promise((resolve, reject) => {
      const s = tlsConnect({
        host: ep.host,
        port: ep.port,
        ca: id.ca,
        cert: id.cert,
        key: id.key,
        timeout: this.cfg.connectTimeoutMs,
        // The identity is the SPIFFE URI, not a host name (Consul's verifyServerCertMatchesURI).
        checkServerIdentity: (_host: string, cert: PeerCertificate) => verifyPeer(cert, id.trustDomain, expected, ep.datacenter),
      });
      s.setNoDelay(true);
      const fail = (err: Error) => {
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
