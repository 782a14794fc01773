/**
 * The X.509 v3 extensions the CA writes (RFC 5280 §4.2), described in forge's terms:
 * forge's encoders turn the named fields into DER (`encodedExtensions` in asn1.ts) and
 * its parser (`pki.certificateExtensionFromAsn1`) reads them back.
 */
import { asn1, T, toBinary, UNIVERSAL, type Extension } from './asn1';

export type KeyUsage =
  | 'digitalSignature' | 'nonRepudiation' | 'keyEncipherment' | 'dataEncipherment' | 'keyAgreement'
  | 'keyCertSign' | 'cRLSign';

export function basicConstraints(isCA: boolean): Extension {
  // cA DEFAULT FALSE: forge writes an end-entity's value as the empty SEQUENCE.
  return { name: 'basicConstraints', critical: true, cA: isCA };
}

export function keyUsage(usages: readonly KeyUsage[]): Extension {
  const ext: Extension = { name: 'keyUsage', critical: true };
  for (const usage of usages) ext[usage] = true;
  return ext;
}

export function extKeyUsage(purposes: readonly ('clientAuth' | 'serverAuth')[]): Extension {
  const ext: Extension = { name: 'extKeyUsage' };
  for (const purpose of purposes) ext[purpose] = true;
  return ext;
}

export function subjectKeyIdentifier(keyId: Buffer): Extension {
  // forge would derive this from the certificate's key, which it can only do for RSA.
  return { name: 'subjectKeyIdentifier', value: asn1.create(UNIVERSAL, T.OCTETSTRING, false, toBinary(keyId)) };
}

export function authorityKeyIdentifier(keyId: Buffer): Extension {
  // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING, … }
  return { name: 'authorityKeyIdentifier', keyIdentifier: toBinary(keyId) };
}

export interface AltNames {
  uris: string[];
  dnsNames: string[];
}

/** GeneralName tag numbers (RFC 5280 §4.2.1.6), as forge's altNames use them. */
const GENERAL_NAME_DNS = 2;
const GENERAL_NAME_URI = 6;

/** RFC 5280 §4.2.1.6: critical exactly when the subject is empty and the SAN is the identity. */
export function subjectAltName(names: AltNames, critical = false): Extension {
  return {
    name: 'subjectAltName',
    critical,
    altNames: [
      ...names.dnsNames.map((d) => ({ type: GENERAL_NAME_DNS, value: ia5(d, 'DNS name') })),
      ...names.uris.map((u) => ({ type: GENERAL_NAME_URI, value: ia5(u, 'URI') })),
    ],
  };
}

function ia5(value: string, what: string): string {
  // IA5String is 7-bit ASCII; SPIFFE URIs are percent-encoded so they always fit.
  if (!/^[\x00-\x7f]*$/.test(value)) throw new RangeError(`${what} must be ASCII: ${JSON.stringify(value)}`);
  return value;
}

/** The URI and DNS entries of a subjectAltName parsed by forge. */
export function altNamesOf(ext: Extension): AltNames {
  const names: AltNames = { uris: [], dnsNames: [] };
  for (const name of ext.altNames ?? []) {
    if (name.type === GENERAL_NAME_URI) names.uris.push(name.value);
    else if (name.type === GENERAL_NAME_DNS) names.dnsNames.push(name.value);
  }
  return names;
}

/** A parsed extension as forge will re-encode it unchanged: id, criticality and the extnValue bytes. */
export function copiedExtension(ext: Extension): Extension {
  return { id: ext.id, critical: ext.critical, value: ext.value };
}
