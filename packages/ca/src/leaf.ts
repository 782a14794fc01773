/**
 * Leaf issuance: check a service's CSR against the root's trust domain and sign it.
 * Mirrors Consul 1.4's built-in provider: CN = service, the one SPIFFE URI SAN copied
 * from the CSR, client+server auth, valid from one minute ago for 72 hours by default.
 */
import type { KeyObject } from 'node:crypto';
import { writeCertificate } from './certificate-writer';
import { readVerifiedCSR, createCSR } from './csr';
import { commonNameOnly } from './distinguished-name';
import { CertificateRequestError } from './errors';
import {
  authorityKeyIdentifier, basicConstraints, extKeyUsage, keyUsage, subjectAltName, subjectKeyIdentifier,
} from './extensions';
import { describePublicKey, type KeyType } from './keys';
import { rootSigningMaterial, rootTrustDomain } from './root';
import { checkedSerial, formatSerialNumber } from './serial';
import { parseSpiffeURI, serviceURI, type ServiceSpiffeId } from './spiffe';
import type { Leaf, RootCA } from './types';
import { isoSeconds, validityFor } from './validity';

export const DEFAULT_LEAF_TTL_HOURS = 72;
/** Leaves start a minute in the past so peers with slightly slow clocks accept them at once. */
const BACKDATE_MS = 60_000;

export interface SignLeafOptions {
  root: RootCA;
  csrPEM: string;
  /** Allocated by the caller through Raft; positive, and increasing across the cluster. */
  serial: number | bigint;
  ttlHours?: number;
  now?: Date;
  /** Extra DNS SANs to put beside the SPIFFE URI. */
  dnsNames?: string[];
  /** When given, the CSR's SPIFFE ID must name this datacenter. */
  dc?: string;
}

/** Sign a service's CSR; throws CertificateRequestError for anything wrong with the request. */
export function signLeaf(options: SignLeafOptions): Leaf {
  const serial = checkedSerial(options.serial, 'leaf serial');
  const root = rootSigningMaterial(options.root);
  const csr = readVerifiedCSR(options.csrPEM);
  checkKeyStrength(csr.publicKey);
  const id = requestedServiceId(csr.altNames.uris, root.trustDomain, options.dc);
  const uri = csr.altNames.uris[0]!;
  const { notBefore, notAfter } = validityFor(options.now ?? new Date(), options.ttlHours ?? DEFAULT_LEAF_TTL_HOURS, BACKDATE_MS);

  const cert = writeCertificate({
    serial,
    issuer: root.subject,
    subject: commonNameOnly(id.service),
    notBefore,
    notAfter,
    spki: csr.spki,
    extensions: [
      basicConstraints(false),
      keyUsage(['digitalSignature', 'keyEncipherment', 'dataEncipherment', 'keyAgreement']),
      extKeyUsage(['clientAuth', 'serverAuth']),
      subjectKeyIdentifier(csr.keyId),
      authorityKeyIdentifier(root.subjectKeyId),
      subjectAltName({ uris: [uri], dnsNames: options.dnsNames ?? [] }),
    ],
  }, root.signer);

  return {
    SerialNumber: formatSerialNumber(serial),
    CertPEM: [cert.pem, ...(options.root.IntermediateCerts ?? [])].map(withNewline).join(''),
    Service: id.service,
    ServiceURI: uri,
    ValidAfter: isoSeconds(notBefore),
    ValidBefore: isoSeconds(notAfter),
  };
}

export interface SignLeafForServiceOptions {
  root: RootCA;
  service: string;
  dc: string;
  serial: number | bigint;
  namespace?: string;
  keyType?: KeyType;
  ttlHours?: number;
  now?: Date;
}

/** Key, CSR and signature in one step, for callers that act as their own agent (tests, tools). */
export function signLeafForService(options: SignLeafForServiceOptions): Leaf & { PrivateKeyPEM: string } {
  const uri = serviceURI(rootTrustDomain(options.root), options.dc, options.service, options.namespace);
  const { csrPEM, privateKeyPEM } = createCSR({ uri, keyType: options.keyType });
  const leaf = signLeaf({ root: options.root, csrPEM, serial: options.serial, ttlHours: options.ttlHours, now: options.now });
  return { ...leaf, PrivateKeyPEM: privateKeyPEM };
}

function requestedServiceId(uris: string[], trustDomain: string, dc: string | undefined): ServiceSpiffeId {
  if (uris.length !== 1) {
    throw new CertificateRequestError(`CSR must carry exactly one URI SAN (a SPIFFE service ID), found ${uris.length}`);
  }
  const uri = uris[0]!;
  let id;
  try {
    id = parseSpiffeURI(uri);
  } catch (err) {
    throw new CertificateRequestError(`CSR URI SAN is not a SPIFFE ID: ${(err as Error).message}`);
  }
  if (id.kind !== 'service') throw new CertificateRequestError(`SPIFFE ID in CSR must be a service identity: ${uri}`);
  if (id.trustDomain.toLowerCase() !== trustDomain.toLowerCase()) {
    throw new CertificateRequestError(`SPIFFE ID in CSR from a different trust domain: ${uri}`);
  }
  if (dc !== undefined && id.datacenter !== dc) {
    throw new CertificateRequestError(`SPIFFE ID in CSR from a different datacenter: ${uri}`);
  }
  return id;
}

function checkKeyStrength(publicKey: KeyObject): void {
  let described;
  try {
    described = describePublicKey(publicKey);
  } catch (err) {
    throw new CertificateRequestError(`CSR key is unsupported: ${(err as Error).message}`);
  }
  const { keyType, bits } = described;
  const acceptable = keyType === 'ec' ? bits === 256 || bits === 384 : bits >= 2048;
  if (!acceptable) throw new CertificateRequestError(`CSR key is too weak or unsupported: ${keyType} ${bits || '?'} bits`);
}

function withNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : pem + '\n';
}

