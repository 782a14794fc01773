/**
 * The object identifiers the CA writes or looks for: forge's table (`forge.pki.oids`,
 * name → dotted form) where it has them. It has none for elliptic-curve cryptography
 * (forge implements RSA only), so the ECDSA signature algorithms are spelled out here.
 */
import { pki } from './asn1';

function forgeOid(name: string): string {
  const dotted = pki.oids[name];
  if (dotted === undefined) throw new Error(`node-forge has no OID named ${name}`);
  return dotted;
}

export const OID = {
  commonName: forgeOid('commonName'),

  subjectKeyIdentifier: forgeOid('subjectKeyIdentifier'),
  subjectAltName: forgeOid('subjectAltName'),
  authorityKeyIdentifier: forgeOid('authorityKeyIdentifier'),

  extensionRequest: forgeOid('extensionRequest'),

  sha256WithRSAEncryption: forgeOid('sha256WithRSAEncryption'),
  sha384WithRSAEncryption: forgeOid('sha384WithRSAEncryption'),
  sha512WithRSAEncryption: forgeOid('sha512WithRSAEncryption'),
  // RFC 5758 §3.2; not in forge's table.
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA384: '1.2.840.10045.4.3.3',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
} as const;
