/**
 * The X.509 v3 extensions the CA writes (RFC 5280 §4.2), and a reader for the one it
 * needs to inspect in requests and certificates: subjectAltName.
 */
import { boolean, implicitPrimitive, octetString, oid, sequence, TAG, namedBits } from './der-writer';
import { childrenOf, decodeOid, DerError, expectTag, readSingle, type DerElement } from './der-reader';
import { OID } from './oids';

/** RFC 5280 §4.2.1.3 KeyUsage bit positions. */
export const KEY_USAGE = {
  digitalSignature: 0,
  nonRepudiation: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
} as const;

export function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(oid(id), boolean(true), octetString(value))
    : sequence(oid(id), octetString(value)); // DEFAULT FALSE is omitted in DER
}

export function basicConstraints(isCA: boolean): Buffer {
  // cA DEFAULT FALSE: an end-entity's value is the empty SEQUENCE.
  return extension(OID.basicConstraints, true, isCA ? sequence(boolean(true)) : sequence());
}

export function keyUsage(bits: readonly number[]): Buffer {
  return extension(OID.keyUsage, true, namedBits(bits));
}

export function extKeyUsage(purposes: readonly string[]): Buffer {
  return extension(OID.extKeyUsage, false, sequence(...purposes.map((p) => oid(p))));
}

export function subjectKeyIdentifier(keyId: Buffer): Buffer {
  return extension(OID.subjectKeyIdentifier, false, octetString(keyId));
}

export function authorityKeyIdentifier(keyId: Buffer): Buffer {
  // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING, … }
  return extension(OID.authorityKeyIdentifier, false, sequence(implicitPrimitive(0, keyId)));
}

export interface AltNames {
  uris: string[];
  dnsNames: string[];
}

const GENERAL_NAME_DNS = 0x82; // [2] IMPLICIT IA5String
const GENERAL_NAME_URI = 0x86; // [6] IMPLICIT IA5String

/** RFC 5280 §4.2.1.6: critical exactly when the subject is empty and the SAN is the identity. */
export function subjectAltName(names: AltNames, critical = false): Buffer {
  const general = [
    ...names.dnsNames.map((d) => implicitPrimitive(2, ia5(d, 'DNS name'))),
    ...names.uris.map((u) => implicitPrimitive(6, ia5(u, 'URI'))),
  ];
  return extension(OID.subjectAltName, critical, sequence(...general));
}

function ia5(value: string, what: string): Buffer {
  // IA5String is 7-bit ASCII; SPIFFE URIs are percent-encoded so they always fit.
  if (!/^[\x00-\x7f]*$/.test(value)) throw new RangeError(`${what} must be ASCII: ${JSON.stringify(value)}`);
  return Buffer.from(value, 'ascii');
}

/** The URI and DNS entries of a subjectAltName extension value (the OCTET STRING's contents). */
export function readSubjectAltName(value: Buffer): AltNames {
  const names: AltNames = { uris: [], dnsNames: [] };
  for (const name of childrenOf(expectTag(readSingle(value), TAG.SEQUENCE, 'GeneralNames'))) {
    if (name.tag === GENERAL_NAME_URI) names.uris.push(name.contents.toString('latin1'));
    else if (name.tag === GENERAL_NAME_DNS) names.dnsNames.push(name.contents.toString('latin1'));
  }
  return names;
}

export interface ParsedExtension {
  id: string;
  critical: boolean;
  /** The contents of extnValue (the DER of the extension's own structure). */
  value: Buffer;
  /** The whole Extension, for copying unchanged. */
  der: Buffer;
}

/** Parse `Extensions ::= SEQUENCE OF Extension`. */
export function readExtensions(sequenceOfExtensions: DerElement): ParsedExtension[] {
  return childrenOf(expectTag(sequenceOfExtensions, TAG.SEQUENCE, 'Extensions')).map((ext) => {
    const parts = childrenOf(expectTag(ext, TAG.SEQUENCE, 'Extension'));
    const id = decodeOid(expectTag(parts[0], TAG.OID, 'extnID'));
    let critical = false;
    let index = 1;
    if (parts[index]?.tag === TAG.BOOLEAN) {
      critical = parts[index]!.contents[0] !== 0;
      index++;
    }
    const value = expectTag(parts[index], TAG.OCTET_STRING, 'extnValue').contents;
    if (parts.length !== index + 1) throw new DerError('Extension has trailing fields');
    return { id, critical, value, der: ext.der };
  });
}

/** The keyIdentifier inside a subjectKeyIdentifier extension value. */
export function readSubjectKeyIdentifier(value: Buffer): Buffer {
  return expectTag(readSingle(value), TAG.OCTET_STRING, 'SubjectKeyIdentifier').contents;
}
