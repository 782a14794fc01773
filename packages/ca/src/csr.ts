/**
 * PKCS#10 certificate signing requests (RFC 2986), the agent's half of leaf issuance:
 * the agent makes a key and a CSR naming its SPIFFE ID; the server checks and signs it.
 *
 *   CertificationRequest ::= SEQUENCE { certificationRequestInfo, signatureAlgorithm, signature BIT STRING }
 *   CertificationRequestInfo ::= SEQUENCE { version 0, subject Name, subjectPKInfo, attributes [0] SET OF Attribute }
 */
import { bitStringBytesOf, childrenOf, decodeOid, DerError, expectTag, readSingle, type DerElement } from './der-reader';
import { bitStringBytes, oid, sequence, set, TAG, tlv, unsignedInteger } from './der-writer';
import { CertificateRequestError } from './errors';
import { readExtensions, readSubjectAltName, subjectAltName, type AltNames } from './extensions';
import type { KeyObject } from 'node:crypto';
import { generateKey, publicKeyFromSpki, signerFor, verifySignature, type KeyType } from './keys';
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
  const extensionRequest = sequence(
    oid(OID.extensionRequest),
    set(sequence(subjectAltName({ uris: [options.uri], dnsNames: options.dnsNames ?? [] }, true))),
  );
  const info = sequence(
    unsignedInteger(0n),
    sequence(), // empty subject: the identity is the URI SAN, as Consul's agent requests it
    key.spki,
    tlv(0xa0, extensionRequest), // [0] IMPLICIT SET OF Attribute
  );
  const der = sequence(info, signer.algorithm, bitStringBytes(signer.sign(info)));
  return { csrPEM: toPem('CERTIFICATE REQUEST', der), privateKeyPEM: key.privateKeyPEM };
}

export interface VerifiedCSR {
  /** DER SubjectPublicKeyInfo of the requester's key. */
  spki: Buffer;
  publicKey: KeyObject;
  altNames: AltNames;
}

/** Parse a CSR and check its self-signature; throws CertificateRequestError when either fails. */
export function readVerifiedCSR(csrPEM: string): VerifiedCSR {
  let parts: { info: Buffer; spki: Buffer; algorithm: Buffer; signature: Buffer; altNames: AltNames };
  try {
    parts = parseCSR(csrPEM);
  } catch (err) {
    if (err instanceof DerError || err instanceof SyntaxError) {
      throw new CertificateRequestError(`malformed certificate signing request: ${err.message}`);
    }
    throw err;
  }
  let publicKey: KeyObject;
  try {
    publicKey = publicKeyFromSpki(parts.spki);
  } catch (err) {
    throw new CertificateRequestError(`certificate signing request has an unusable public key: ${(err as Error).message}`);
  }
  if (!verifySignature(publicKey, parts.algorithm, parts.info, parts.signature)) {
    throw new CertificateRequestError('certificate signing request signature is invalid');
  }
  return { spki: parts.spki, publicKey, altNames: parts.altNames };
}

function parseCSR(csrPEM: string) {
  const der = fromPem('CERTIFICATE REQUEST', csrPEM);
  const [info, algorithm, signature, ...rest] = childrenOf(expectTag(readSingle(der), TAG.SEQUENCE, 'CertificationRequest'));
  if (rest.length > 0) throw new DerError('CertificationRequest has trailing fields');
  const [version, , spki, attributes] = childrenOf(expectTag(info, TAG.SEQUENCE, 'CertificationRequestInfo'));
  if (expectTag(version, TAG.INTEGER, 'version').contents.toString('hex') !== '00') {
    throw new DerError('unsupported CSR version');
  }
  return {
    info: info!.der,
    spki: expectTag(spki, TAG.SEQUENCE, 'subjectPKInfo').der,
    algorithm: expectTag(algorithm, TAG.SEQUENCE, 'signatureAlgorithm').der,
    signature: bitStringBytesOf(expectTag(signature, TAG.BIT_STRING, 'signature')),
    altNames: attributes === undefined ? { uris: [], dnsNames: [] } : requestedAltNames(expectTag(attributes, 0xa0, 'attributes')),
  };
}

function requestedAltNames(attributes: DerElement): AltNames {
  const names: AltNames = { uris: [], dnsNames: [] };
  for (const attribute of childrenOf(attributes)) {
    const [type, values] = childrenOf(expectTag(attribute, TAG.SEQUENCE, 'Attribute'));
    if (decodeOid(expectTag(type, TAG.OID, 'attribute type')) !== OID.extensionRequest) continue;
    for (const extensions of childrenOf(expectTag(values, TAG.SET, 'attribute values'))) {
      for (const ext of readExtensions(extensions)) {
        if (ext.id !== OID.subjectAltName) continue;
        const san = readSubjectAltName(ext.value);
        names.uris.push(...san.uris);
        names.dnsNames.push(...san.dnsNames);
      }
    }
  }
  return names;
}
