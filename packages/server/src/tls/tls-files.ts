// The agent's TLS settings (config/tls-config.ts) turned into Node's TLS options, reading the PEM
// files once at start. The server port (Raft, RPC, area links) serves TLS as soon as the agent has a
// certificate and key, and plain connections too unless verify_incoming_rpc (Consul's RPC port does
// the same; the transport tells them apart by the first byte). Servers of a datacenter dial each
// other with TLS when verify_outgoing or verify_incoming_rpc is set; an area link uses TLS when the
// area has UseTLS or when they would (wanDial), checking the remote server's certificate against
// server.<its datacenter>.registry under verify_server_hostname.
import { readFile } from 'node:fs/promises';
import { checkServerIdentity, type ConnectionOptions, type PeerCertificate, type TlsOptions } from 'node:tls';
import type { TlsConfig } from '../config/tls-config';

export interface AgentTls {
  /**
   * TLS on the server port; undefined: plain TCP only. `acceptPlain`: plain connections are served
   * too (no verify_incoming_rpc); `dial`: how this datacenter's servers are dialled (absent: plain).
   */
  rpc?: { server: TlsOptions; dial?: ConnectionOptions; acceptPlain?: boolean };
  /** The HTTPS listener's options; undefined: no HTTPS. */
  https?: TlsOptions;
  /**
   * How to dial a server of datacenter `peerDc` through an area with UseTLS `useTls`: TLS options
   * (the same object for the same arguments), or null for plain TCP.
   */
  wanDial(peerDc: string, useTls: boolean): ConnectionOptions | null;
}

/** The name a server's certificate must carry under verify_server_hostname (Consul: server.<dc>.consul). */
export function serverName(datacenter: string): string {
  return `server.${datacenter}.registry`;
}

async function pem(path: string | undefined, what: string): Promise<Buffer | undefined> {
  if (!path) return undefined;
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

export async function loadAgentTls(t: TlsConfig, datacenter: string): Promise<AgentTls> {
  const [cert, key, ca] = await Promise.all([pem(t.certFile, 'cert_file'), pem(t.keyFile, 'key_file'), pem(t.caFile, 'ca_file')]);
  const dialTo = (dc: string): ConnectionOptions => {
    const name = serverName(dc);
    return {
      cert,
      key,
      ca,
      minVersion: 'TLSv1.2',
      rejectUnauthorized: t.verifyOutgoing,
      // Peers are dialled by IP: the usual host-name check is replaced by the server name, or skipped.
      checkServerIdentity: t.verifyServerHostname ? (_host: string, peer: PeerCertificate) => checkServerIdentity(name, peer) : () => undefined,
    };
  };
  const dialTls = t.verifyIncomingRpc || t.verifyOutgoing;
  const wan = new Map<string, ConnectionOptions>();
  const out: AgentTls = {
    wanDial(peerDc, useTls) {
      if (!useTls && !dialTls) return null;
      const dc = peerDc.toLowerCase();
      let options = wan.get(dc);
      if (!options) wan.set(dc, (options = dialTo(dc)));
      return options;
    },
  };
  if (dialTls || (cert && key)) {
    out.rpc = {
      // Client certificates are always asked for; without verify_incoming_rpc one is not required.
      server: { cert, key, ca, requestCert: true, rejectUnauthorized: t.verifyIncomingRpc, minVersion: 'TLSv1.2' },
      acceptPlain: !t.verifyIncomingRpc,
      ...(dialTls ? { dial: dialTo(datacenter) } : {}),
    };
  }
  if (t.httpsPort >= 0) {
    out.https = { cert, key, ca, requestCert: t.verifyIncomingHttps, rejectUnauthorized: t.verifyIncomingHttps, minVersion: 'TLSv1.2' };
  }
  return out;
}
