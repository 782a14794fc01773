/**
 * Pull out of a certificate the parts the CA reuses: its subject (the issuer name of
 * everything it signs), its public key, its extensions and its key identifier. forge
 * parses (asn1.fromDer, asn1.validate, pki.certificateExtensionsFromAsn1); its own
 * pki.certificateFromAsn1 cannot be used because it refuses any key that is not RSA.
 */
import { CONTEXT_SPECIFIC, fromDer, pki, T, toDer, UNIVERSAL, validated, type Asn1, type Extension, type Validator } from './asn1';
import { altNamesOf } from './extensions';
import { keyIdentifierOfBits, SPKI_VALIDATOR } from './keys';
import { OID } from './oids';
import { fromPem } from './pem';

export interface CertificateParts {
  der: Buffer;
  subject: Asn1;
  spki: Asn1;
  spkiDer: Buffer;
  /** As forge parses them: id, critical, value (extnValue's DER) and decoded fields. */
  extensions: Extension[];
  /** The subjectKeyIdentifier extension, or the RFC 5280 method-1 hash when absent. */
  subjectKeyId: Buffer;
  uris: string[];
}

/** RFC 5280 §4.1 Certificate, for forge's asn1.validate (after forge's x509CertificateValidator). */
const CERTIFICATE_VALIDATOR: Validator = {
  name: 'Certificate', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true,
  value: [
    {
      name: 'Certificate.TBSCertificate', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true,
      value: [
        { name: 'TBSCertificate.version', tagClass: CONTEXT_SPECIFIC, type: 0, constructed: true, optional: true },
        { name: 'TBSCertificate.serialNumber', tagClass: UNIVERSAL, type: T.INTEGER, constructed: false },
        { name: 'TBSCertificate.signature', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
        { name: 'TBSCertificate.issuer', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
        { name: 'TBSCertificate.validity', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
        { name: 'TBSCertificate.subject', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true, captureAsn1: 'subject' },
        SPKI_VALIDATOR,
        { name: 'TBSCertificate.issuerUniqueID', tagClass: CONTEXT_SPECIFIC, type: 1, constructed: true, optional: true },
        { name: 'TBSCertificate.subjectUniqueID', tagClass: CONTEXT_SPECIFIC, type: 2, constructed: true, optional: true },
        {
          name: 'TBSCertificate.extensions', tagClass: CONTEXT_SPECIFIC, type: 3, constructed: true, optional: true,
          captureAsn1: 'extensions',
        },
      ],
    },
    { name: 'Certificate.signatureAlgorithm', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
    { name: 'Certificate.signatureValue', tagClass: UNIVERSAL, type: T.BITSTRING, constructed: false },
  ],
};

export function readCertificate(pem: string): CertificateParts {
  const der = fromPem('CERTIFICATE', pem);
  const parts = validated(fromDer(der, 'certificate'), CERTIFICATE_VALIDATOR);
  const spki = parts.spki as Asn1;
  const extensions = parts.extensions === undefined ? [] : pki.certificateExtensionsFromAsn1(parts.extensions as Asn1);

  const ski = extensions.find((e) => e.id === OID.subjectKeyIdentifier);
  const san = extensions.find((e) => e.id === OID.subjectAltName);
  return {
    der,
    subject: parts.subject as Asn1,
    spki,
    spkiDer: toDer(spki),
    extensions,
    subjectKeyId: ski?.subjectKeyIdentifier === undefined
      ? keyIdentifierOfBits(parts.publicKeyBits as string)
      : Buffer.from(ski.subjectKeyIdentifier, 'hex'),
    uris: san === undefined ? [] : altNamesOf(san).uris,
  };
}
