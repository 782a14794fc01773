// The agent's TLS settings (config/tls-config.ts) turned into Node's TLS options, reading the PEM
// files once at start. The server port (Raft, RPC, area links) is TLS-only when verify_outgoing or
// verify_incoming_rpc is set: Consul tells TLS from plain by a first byte on one port, Node cannot
// hand an already-read byte to a TLS socket, so every server of a cluster uses TLS or none does.
import { readFile } from 'node:fs/promises';
import { checkServerIdentity, type ConnectionOptions, type PeerCertificate, type TlsOptions } from 'node:tls';
import type { TlsConfig } from '../config/tls-config';

export interface AgentTls {
  /** TLS on the server port, both ways; undefined: plain TCP. */
  rpc?: { server: TlsOptions; dial: ConnectionOptions };
  /** The HTTPS listener's options; undefined: no HTTPS. */
  https?: TlsOptions;
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
  const out: AgentTls = {};
  if (t.verifyIncomingRpc || t.verifyOutgoing) {
    const name = serverName(datacenter);
    out.rpc = {
      // Client certificates are always asked for; without verify_incoming_rpc one is not required.
      server: { cert, key, ca, requestCert: true, rejectUnauthorized: t.verifyIncomingRpc, minVersion: 'TLSv1.2' },
      dial: {
        cert,
        key,
        ca,
        minVersion: 'TLSv1.2',
        rejectUnauthorized: t.verifyOutgoing,
        // Peers are dialled by IP: the usual host-name check is replaced by the server name, or skipped.
        checkServerIdentity: t.verifyServerHostname
          ? (_host: string, peer: PeerCertificate) => checkServerIdentity(name, peer)
          : () => undefined,
      },
    };
  }
  if (t.httpsPort >= 0) {
    out.https = { cert, key, ca, requestCert: t.verifyIncomingHttps, rejectUnauthorized: t.verifyIncomingHttps, minVersion: 'TLSv1.2' };
  }
  return out;
}
