/**
 * Root CA generation (Consul 1.4's built-in provider, renamed): a self-signed CA
 * certificate whose only SAN is the URI `spiffe://<trust-domain>`, valid 10 years.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { fromDer, type Asn1 } from './asn1';
import { readCertificate } from './certificate-reader';
import { writeCertificate } from './certificate-writer';
import { commonNameOnly } from './distinguished-name';
import {
  authorityKeyIdentifier, basicConstraints, keyUsage, subjectAltName, subjectKeyIdentifier,
} from './extensions';
import { generateKey, keyIdentifier, loadPrivateKey, signerFor, spkiOf, type KeyType, type Signer } from './keys';
import { checkedSerial, colonHex } from './serial';
import { parseSpiffeURI, signingURI, trustDomainFor } from './spiffe';
import type { RootCA } from './types';
import { isoSeconds, validityFor } from './validity';

export const ROOT_NAME = 'Registry CA Root Cert';
export const DEFAULT_ROOT_TTL_HOURS = 10 * 365 * 24;
export const DEFAULT_KEY_TYPE: KeyType = 'ec';
/** Roots are back-dated like leaves so a server with a slightly slow clock accepts them at once. */
const BACKDATE_MS = 60_000;

export interface GenerateRootOptions {
  clusterId: string;
  /** Defaults to `<clusterId>.registry` (lower-case). */
  trustDomain?: string;
  keyType?: KeyType;
  /** EC: 256 (default) or 384. RSA: 2048 (default) to 8192. */
  keyBits?: number;
  ttlHours?: number;
  /** Allocated by the caller through Raft; must be positive. */
  serial: number;
  now?: Date;
}

export function generateRoot(options: GenerateRootOptions): RootCA {
  const serial = checkedSerial(options.serial, 'root serial');
  const trustDomain = options.trustDomain ?? trustDomainFor(options.clusterId);
  const key = generateKey(options.keyType ?? DEFAULT_KEY_TYPE, options.keyBits);
  const { notBefore, notAfter } = validityFor(options.now ?? new Date(), options.ttlHours ?? DEFAULT_ROOT_TTL_HOURS, BACKDATE_MS);
  const keyId = keyIdentifier(key.spki);
  const name = commonNameOnly(`Registry CA ${serial}`);

  const cert = writeCertificate({
    serial,
    issuer: name,
    subject: name,
    notBefore,
    notAfter,
    spki: fromDer(key.spki, 'SubjectPublicKeyInfo'),
    extensions: [
      basicConstraints(true),
      keyUsage(['digitalSignature', 'keyCertSign', 'cRLSign']),
      subjectKeyIdentifier(keyId),
      authorityKeyIdentifier(keyId),
      subjectAltName({ uris: [signingURI(trustDomain)], dnsNames: [] }),
    ],
  }, signerFor(key.privateKey));

  return {
    ID: certificateFingerprint(cert.der),
    Name: ROOT_NAME,
    SerialNumber: options.serial,
    SigningKeyID: colonHex(keyId),
    NotBefore: isoSeconds(notBefore),
    NotAfter: isoSeconds(notAfter),
    RootCert: cert.pem,
    PrivateKey: key.privateKeyPEM,
    IntermediateCerts: null,
  };
}

/** SHA-1 over the certificate DER, colon-hex: how Consul names roots. */
export function certificateFingerprint(der: Buffer): string {
  return colonHex(createHash('sha1').update(der).digest());
}

/** The trust domain a root certifies, read from its `spiffe://<trust-domain>` URI SAN. */
export function rootTrustDomain(root: Pick<RootCA, 'RootCert'>): string {
  return prepared(root.RootCert).trustDomain;
}

/** What signing with a root needs, parsed once per root and reused. */
export interface RootSigningMaterial {
  /** The root's subject as parsed (never modified): the issuer of what it signs. */
  subject: Asn1;
  subjectKeyId: Buffer;
  trustDomain: string;
  signer: Signer;
}

interface PreparedCert {
  subject: Asn1;
  subjectKeyId: Buffer;
  spkiDer: Buffer;
  trustDomain: string;
}

// Parsing PEM keys and certificates costs more than an EC signature, and the server
// signs with the same one or two roots for months: keep a few parsed ones.
const CACHE_LIMIT = 8;
const certCache = new Map<string, PreparedCert>();
const materialCache = new Map<string, RootSigningMaterial>();

function remember<V>(cache: Map<string, V>, key: string, make: () => V): V {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const value = make();
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
  return value;
}

function prepared(rootCert: string): PreparedCert {
  return remember(certCache, rootCert, () => {
    const parts = readCertificate(rootCert);
    const signing = parts.uris.map((u) => parseSpiffeURI(u)).find((id) => id.kind === 'signing');
    if (signing === undefined) throw new Error('root certificate has no spiffe://<trust-domain> URI SAN');
    return { subject: parts.subject, subjectKeyId: parts.subjectKeyId, spkiDer: parts.spkiDer, trustDomain: signing.trustDomain };
  });
}

export function rootSigningMaterial(root: Pick<RootCA, 'RootCert' | 'PrivateKey'>): RootSigningMaterial {
  return remember(materialCache, root.RootCert + root.PrivateKey, () => {
    const cert = prepared(root.RootCert);
    const privateKey = loadPrivateKey(root.PrivateKey);
    if (!spkiOf(createPublicKey(privateKey)).equals(cert.spkiDer)) {
      throw new Error('root PrivateKey does not belong to RootCert');
    }
    return { subject: cert.subject, subjectKeyId: cert.subjectKeyId, trustDomain: cert.trustDomain, signer: signerFor(privateKey) };
  });
}
