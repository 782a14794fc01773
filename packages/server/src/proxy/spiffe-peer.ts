// The SPIFFE identity a peer's certificate carries: its one `URI:spiffe://…` subjectAltName entry.
import { parseSpiffeURI, type SpiffeId } from '@registry/ca';
import type { PeerCertificate } from 'node:tls';

/** The URI SAN of a certificate, or undefined when it has none. */
export function spiffeUriOf(cert: Pick<PeerCertificate, 'subjectaltname'> | undefined): string | undefined {
  const san = cert?.subjectaltname;
  if (!san) return undefined;
  for (const part of san.split(/,\s*/)) if (part.startsWith('URI:spiffe://')) return part.slice('URI:'.length);
  return undefined;
}

export function spiffeIdOf(cert: Pick<PeerCertificate, 'subjectaltname'> | undefined): SpiffeId | undefined {
  const uri = spiffeUriOf(cert);
  if (!uri) return undefined;
  try {
    return parseSpiffeURI(uri);
  } catch {
    return undefined;
  }
}

/** Node's serial (hex) in Consul's colon form, as authorize's ClientCertSerial carries it. */
export function colonSerial(hex: string | undefined): string {
  const h = (hex ?? '').toLowerCase();
  const even = h.length % 2 ? `0${h}` : h;
  return even.match(/../g)?.join(':') ?? '';
}
