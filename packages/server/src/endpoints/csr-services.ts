// The services a certificate signing request names, read without trusting its shape: what a
// Connect.Sign caller must hold service:write on (Consul's ConnectCA.Sign checks the CSR's SPIFFE
// service). The CA package parses CSRs only while signing; here it is enough to find every SPIFFE
// URI in the DER, since the signer takes its service from the one URI SAN, which must be there.
import { parseSpiffeURI } from '@registry/ca';

/** GeneralName uniformResourceIdentifier: context-specific, primitive, tag 6 (IA5String). */
const URI_TAG = 0x86;
const SCHEME = 'spiffe://';

/**
 * The service of every SPIFFE URI in the PEM blocks of `csrPEM`; null when any such URI cannot be
 * read as a service identity in a URI TLV (the caller then refuses: a CSR we cannot read must not
 * slip past the check). An empty list is a CSR without SPIFFE URIs, which the signer refuses itself.
 */
export function csrServices(csrPEM: string): string[] | null {
  const services: string[] = [];
  for (const der of pemBodies(csrPEM)) {
    // The signer's URI match is case-insensitive: search a lower-cased copy (latin1 keeps offsets).
    const text = der.toString('latin1').toLowerCase();
    for (let at = text.indexOf(SCHEME); at >= 0; at = text.indexOf(SCHEME, at + 1)) {
      const uri = uriAt(der, at);
      if (uri === null) return null;
      try {
        const id = parseSpiffeURI(uri);
        if (id.kind !== 'service') return null;
        services.push(id.service);
      } catch {
        return null;
      }
    }
  }
  return services;
}

/** The URI whose content starts at `at`, from its DER header (short or one-byte long length). */
function uriAt(der: Buffer, at: number): string | null {
  let len: number;
  if (at >= 2 && der[at - 2] === URI_TAG && der[at - 1]! < 0x80) len = der[at - 1]!;
  else if (at >= 3 && der[at - 3] === URI_TAG && der[at - 2] === 0x81) len = der[at - 1]!;
  else return null;
  if (at + len > der.length) return null;
  return der.subarray(at, at + len).toString('latin1');
}

function pemBodies(text: string): Buffer[] {
  const out: Buffer[] = [];
  const re = /-----BEGIN [^-]+-----([\s\S]*?)-----END [^-]+-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'));
  return out;
}
