/**
 * Assemble and sign an X.509 v3 certificate (RFC 5280 §4.1):
 *   Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
 * The caller supplies names and the public key as DER, so parts taken from other
 * certificates stay byte-identical.
 */
import { bitStringBytes, explicit, sequence, time, unsignedInteger } from './der-writer';
import type { Signer } from './keys';
import { toPem } from './pem';

export interface CertificateFields {
  serial: bigint;
  /** DER Name of the signer (its certificate's subject). */
  issuer: Buffer;
  /** DER Name of the certified entity. */
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** DER SubjectPublicKeyInfo of the certified key. */
  spki: Buffer;
  /** Each a complete DER Extension. */
  extensions: Buffer[];
}

export interface WrittenCertificate {
  der: Buffer;
  pem: string;
}

export function writeCertificate(fields: CertificateFields, signer: Signer): WrittenCertificate {
  if (!(fields.notBefore.getTime() < fields.notAfter.getTime())) {
    throw new RangeError('certificate notBefore must be earlier than notAfter');
  }
  const tbs = sequence(
    explicit(0, unsignedInteger(2n)), // version v3
    unsignedInteger(fields.serial),
    signer.algorithm,
    fields.issuer,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    fields.subject,
    fields.spki,
    explicit(3, sequence(...fields.extensions)),
  );
  const der = sequence(tbs, signer.algorithm, bitStringBytes(signer.sign(tbs)));
  return { der, pem: toPem('CERTIFICATE', der) };
}
