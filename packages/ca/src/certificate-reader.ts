/**
 * Pull out of a certificate the raw parts the CA reuses: its subject (the issuer name of
 * everything it signs), its public key, its extensions and its key identifier.
 */
import { childrenOf, expectTag, readSingle } from './der-reader';
import { TAG } from './der-writer';
import { readExtensions, readSubjectAltName, readSubjectKeyIdentifier, type ParsedExtension } from './extensions';
import { keyIdentifier } from './keys';
import { OID } from './oids';
import { fromPem } from './pem';

export interface CertificateParts {
  der: Buffer;
  subject: Buffer;
  spki: Buffer;
  extensions: ParsedExtension[];
  /** The subjectKeyIdentifier extension, or the RFC 5280 method-1 hash when absent. */
  subjectKeyId: Buffer;
  uris: string[];
}

export function readCertificate(pem: string): CertificateParts {
  const der = fromPem('CERTIFICATE', pem);
  const [tbs] = childrenOf(expectTag(readSingle(der), TAG.SEQUENCE, 'Certificate'));
  const fields = childrenOf(expectTag(tbs, TAG.SEQUENCE, 'TBSCertificate'));
  // version [0] is optional; every certificate we handle is v3 and has it.
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = expectTag(fields[offset + 4], TAG.SEQUENCE, 'subject').der;
  const spki = expectTag(fields[offset + 5], TAG.SEQUENCE, 'subjectPublicKeyInfo').der;
  const extensionsWrapper = fields.slice(offset + 6).find((f) => f.tag === 0xa3);
  const extensions = extensionsWrapper === undefined ? [] : readExtensions(readSingle(extensionsWrapper.contents));

  const ski = extensions.find((e) => e.id === OID.subjectKeyIdentifier);
  const san = extensions.find((e) => e.id === OID.subjectAltName);
  return {
    der,
    subject,
    spki,
    extensions,
    subjectKeyId: ski === undefined ? keyIdentifier(spki) : readSubjectKeyIdentifier(ski.value),
    uris: san === undefined ? [] : readSubjectAltName(san.value).uris,
  };
}

