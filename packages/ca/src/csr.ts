/**
 * PKCS#10 certificate signing requests (RFC 2986), the agent's half of leaf issuance:
 * the agent makes a key and a CSR naming its SPIFFE ID; the server checks and signs it.
 *
 *   CertificationRequest ::= SEQUENCE { certificationRequestInfo, signatureAlgorithm, signature BIT STRING }
 *   CertificationRequestInfo ::= SEQUENCE { version 0, subject Name, subjectPKInfo, attributes [0] SET OF Attribute }
 *
 * forge encodes and parses them (asn1, pki.CRIAttributesAsArray, its extension codecs);
 * forge's own pki.certificationRequestFromAsn1/ToAsn1 hold only RSA keys, so the two
 * top-level structures are assembled and validated here, and Node's crypto signs.
 */
import type { KeyObject } from 'node:crypto';
import {
  asn1, bitString, CONTEXT_SPECIFIC, encodedExtensions, fromBinary, fromDer, oid, pki, sequence, set, smallInteger, T,
  toDer, UNIVERSAL, validated, type Asn1, type Validator,
} from './asn1';
import { CertificateRequestError } from './errors';
import { altNamesOf, subjectAltName, type AltNames } from './extensions';
import {
  generateKey, keyIdentifierOfBits, publicKeyFromSpki, signerFor, SPKI_VALIDATOR, verifySignature, type KeyType,
} from './keys';
import { OID } from './oids';
import { fromPem, toPem } from './pem';

export interface CreateCSROptions {
  /** The SPIFFE ID to request, e.g. from serviceURI(). */
  uri: string;
  keyType?: KeyType;
  keyBits?: number;
  dnsNames?: string[];
}

export interface CreatedCSR {
  csrPEM: string;
  /** SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`; a fresh key for every CSR. */
  privateKeyPEM: string;
}

/** What the agent does: a new key pair and a CSR with an empty subject and the URI as SAN. */
export function createCSR(options: CreateCSROptions): CreatedCSR {
  const key = generateKey(options.keyType ?? 'ec', options.keyBits);
  const signer = signerFor(key.privateKey);
  const san = subjectAltName({ uris: [options.uri], dnsNames: options.dnsNames ?? [] }, true);
  const extensionRequest = sequence(oid(OID.extensionRequest), set(sequence(...encodedExtensions([san]))));
  const info = sequence(
    smallInteger(0),
    pki.distinguishedNameToAsn1({ attributes: [] }), // empty subject: the identity is the URI SAN, as Consul's agent requests it
    fromDer(key.spki, 'SubjectPublicKeyInfo'),
    asn1.create(CONTEXT_SPECIFIC, 0, true, [extensionRequest]), // [0] IMPLICIT SET OF Attribute
  );
  const der = toDer(sequence(info, signer.algorithm, bitString(signer.sign(toDer(info)))));
  return { csrPEM: toPem('CERTIFICATE REQUEST', der), privateKeyPEM: key.privateKeyPEM };
}

export interface VerifiedCSR {
  /** The requester's SubjectPublicKeyInfo, as parsed and as DER. */
  spki: Asn1;
  spkiDer: Buffer;
  publicKey: KeyObject;
  /** RFC 5280 method-1 key identifier of the requester's key. */
  keyId: Buffer;
  altNames: AltNames;
}

/** Parse a CSR and check its self-signature; throws CertificateRequestError when either fails. */
export function readVerifiedCSR(csrPEM: string): VerifiedCSR {
  let parts: ReturnType<typeof parseCSR>;
  try {
    parts = parseCSR(csrPEM);
  } catch (err) {
    // Anything forge or the checks below throw while reading outside input is a bad request.
    throw new CertificateRequestError(`malformed certificate signing request: ${(err as Error).message}`);
  }
  let publicKey: KeyObject;
  try {
    publicKey = publicKeyFromSpki(parts.spkiDer);
  } catch (err) {
    throw new CertificateRequestError(`certificate signing request has an unusable public key: ${(err as Error).message}`);
  }
  if (!verifySignature(publicKey, parts.signatureOid, parts.info, parts.signature)) {
    throw new CertificateRequestError('certificate signing request signature is invalid');
  }
  return { spki: parts.spki, spkiDer: parts.spkiDer, publicKey, keyId: parts.keyId, altNames: parts.altNames };
}

/** RFC 2986 CertificationRequest, for forge's asn1.validate (after forge's certificationRequestValidator). */
const CSR_VALIDATOR: Validator = {
  name: 'CertificationRequest', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true,
  value: [
    {
      name: 'CertificationRequestInfo', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true, captureAsn1: 'info',
      value: [
        { name: 'CertificationRequestInfo.version', tagClass: UNIVERSAL, type: T.INTEGER, constructed: false, capture: 'version' },
        { name: 'CertificationRequestInfo.subject', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
        SPKI_VALIDATOR,
        {
          name: 'CertificationRequestInfo.attributes', tagClass: CONTEXT_SPECIFIC, type: 0, constructed: true, optional: true,
          captureAsn1: 'attributes',
        },
      ],
    },
    {
      name: 'CertificationRequest.signatureAlgorithm', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true,
      value: [{ name: 'AlgorithmIdentifier.algorithm', tagClass: UNIVERSAL, type: T.OID, constructed: false, capture: 'signatureOid' }],
    },
    {
      name: 'CertificationRequest.signature', tagClass: UNIVERSAL, type: T.BITSTRING, constructed: false,
      captureBitStringValue: 'signature',
    },
  ],
};

function parseCSR(csrPEM: string) {
  const csr = fromDer(fromPem('CERTIFICATE REQUEST', csrPEM), 'certificate signing request');
  const parts = validated(csr, CSR_VALIDATOR);
  if ((csr.value as Asn1[]).length !== 3) throw new Error('CertificationRequest has trailing fields');
  if (parts.version !== '\x00') throw new Error('unsupported CSR version');
  const spki = parts.spki as Asn1;
  const attributes = parts.attributes as Asn1 | undefined;
  return {
    info: toDer(parts.info as Asn1),
    spki,
    spkiDer: toDer(spki),
    keyId: keyIdentifierOfBits(parts.publicKeyBits as string),
    signatureOid: asn1.derToOid(parts.signatureOid as string),
    signature: fromBinary(parts.signature as string),
    altNames: attributes === undefined ? { uris: [], dnsNames: [] } : requestedAltNames(attributes.value as Asn1[]),
  };
}

/** The subjectAltName entries of the CSR's extensionRequest attribute(s). */
function requestedAltNames(attributes: Asn1[]): AltNames {
  const names: AltNames = { uris: [], dnsNames: [] };
  for (const attribute of pki.CRIAttributesAsArray(attributes)) {
    for (const ext of attribute.extensions ?? []) {
      if (ext.id !== OID.subjectAltName) continue;
      const san = altNamesOf(ext);
      names.uris.push(...san.uris);
      names.dnsNames.push(...san.dnsNames);
    }
  }
  return names;
}
