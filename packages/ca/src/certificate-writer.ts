/**
 * Assemble and sign an X.509 v3 certificate (RFC 5280 §4.1) with forge's ASN.1 encoder:
 *   Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
 * forge's own certificate writer (pki.getTBSCertificate) can only hold an RSA public key
 * and always gives the signature algorithm a NULL parameter, which ECDSA forbids, so the
 * TBSCertificate is put together here from forge ASN.1 parts and signed by Node's crypto.
 * Names and the public key come in as ASN.1, often as parsed from another certificate.
 */
import {
  asn1, bitString, CONTEXT_SPECIFIC, encodedExtensions, sequence, smallInteger, T, time, toDer, UNIVERSAL, util,
  type Asn1, type Extension,
} from './asn1';
import type { Signer } from './keys';
import { toPem } from './pem';
import { serialIntegerHex } from './serial';

export interface CertificateFields {
  serial: bigint;
  /** Name of the signer (its certificate's subject). */
  issuer: Asn1;
  /** Name of the certified entity. */
  subject: Asn1;
  notBefore: Date;
  notAfter: Date;
  /** SubjectPublicKeyInfo of the certified key. */
  spki: Asn1;
  extensions: Extension[];
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
    asn1.create(CONTEXT_SPECIFIC, 0, true, [smallInteger(2)]), // version v3
    asn1.create(UNIVERSAL, T.INTEGER, false, util.hexToBytes(serialIntegerHex(fields.serial))),
    signer.algorithm,
    fields.issuer,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    fields.subject,
    fields.spki,
    asn1.create(CONTEXT_SPECIFIC, 3, true, [sequence(...encodedExtensions(fields.extensions))]),
  );
  const der = toDer(sequence(tbs, signer.algorithm, bitString(signer.sign(toDer(tbs)))));
  return { der, pem: toPem('CERTIFICATE', der) };
}
