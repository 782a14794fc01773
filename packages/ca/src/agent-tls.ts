/**
 * The agent TLS files of `registry tls ca create` / `tls cert create` (Consul 1.4's command/tls):
 * a CA for the agents' own TLS (HTTPS, the server port) — not Connect's CA — and the server,
 * client and CLI certificates it signs. As Consul makes them: EC P-256 keys in SEC1 PEM
 * (`EC PRIVATE KEY`), random 128-bit serials, ECDSA-SHA256 signatures, a CA with keyCertSign,
 * cRLSign and digitalSignature (and, when asked, critical DNS name constraints), leaves with
 * digitalSignature and keyEncipherment, the extended key usages given and their SANs.
 * Built from the same forge ASN.1 parts as the Connect CA (docs/dependencies.md).
 */
import { createPublicKey, randomBytes, X509Certificate } from 'node:crypto';
import { asn1, CONTEXT_SPECIFIC, fromDer, sequence, type Extension } from './asn1';
import { readCertificate } from './certificate-reader';
import { writeCertificate } from './certificate-writer';
import { commonNameOnly } from './distinguished-name';
import { authorityKeyIdentifier, basicConstraints, extKeyUsage, keyUsage, subjectKeyIdentifier } from './extensions';
import { generateKey, keyIdentifier, loadPrivateKey, signerFor, spkiOf } from './keys';
import { wholeSeconds } from './validity';

const DAY_MS = 86_400_000;
/** GeneralName tags (RFC 5280 §4.2.1.6). */
const DNS_NAME = 2;
const IP_ADDRESS = 7;

export interface AgentTlsFiles {
  certPem: string;
  keyPem: string;
  /** The certificate's serial number. */
  serial: bigint;
}

export interface AgentCaOptions {
  /** Validity from now, in days (Consul's -days, default 1825). */
  days: number;
  /** Permitted DNS subtrees (critical); none: no name constraints. */
  permittedDnsDomains?: readonly string[];
  now?: Date;
}

export interface AgentCertOptions {
  caCertPem: string;
  caKeyPem: string;
  commonName: string;
  days: number;
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
  extKeyUsage: readonly ('serverAuth' | 'clientAuth')[];
  now?: Date;
}

/** Consul's serial: uniform below 2^128 (zero, which X.509 forbids, drawn again). */
function randomSerial(): bigint {
  for (;;) {
    const n = BigInt('0x' + randomBytes(16).toString('hex'));
    if (n > 0n) return n;
  }
}

function validity(now: Date, days: number): { notBefore: Date; notAfter: Date } {
  if (!(Number.isInteger(days) && days > 0)) throw new RangeError(`days must be a positive whole number, got ${days}`);
  const notBefore = wholeSeconds(now);
  return { notBefore, notAfter: new Date(notBefore.getTime() + days * DAY_MS) };
}

/** NameConstraints ::= SEQUENCE { permittedSubtrees [0] GeneralSubtrees } of dNSName bases. */
function nameConstraints(domains: readonly string[]): Extension {
  const subtrees = domains.map((d) => {
    if (!/^[\x21-\x7e]+$/.test(d)) throw new RangeError(`name constraint must be an ASCII DNS name: ${JSON.stringify(d)}`);
    return sequence(asn1.create(CONTEXT_SPECIFIC, DNS_NAME, false, d));
  });
  return { id: '2.5.29.30', name: 'nameConstraints', critical: true, value: sequence(asn1.create(CONTEXT_SPECIFIC, 0, true, subtrees)) };
}

export function createAgentCa(options: AgentCaOptions): AgentTlsFiles {
  const serial = randomSerial();
  const key = generateKey('ec', 256);
  const keyId = keyIdentifier(key.spki);
  const name = commonNameOnly(`Registry Agent CA ${serial}`);
  const extensions: Extension[] = [
    basicConstraints(true),
    keyUsage(['digitalSignature', 'keyCertSign', 'cRLSign']),
    subjectKeyIdentifier(keyId),
    authorityKeyIdentifier(keyId),
  ];
  if (options.permittedDnsDomains?.length) extensions.push(nameConstraints(options.permittedDnsDomains));
  const cert = writeCertificate(
    { serial, issuer: name, subject: name, ...validity(options.now ?? new Date(), options.days), spki: fromDer(key.spki, 'SubjectPublicKeyInfo'), extensions },
    signerFor(key.privateKey),
  );
  return { certPem: cert.pem, keyPem: key.privateKeyPEM, serial };
}

export function createAgentCert(options: AgentCertOptions): AgentTlsFiles {
  const ca = readCertificate(options.caCertPem);
  const caKey = loadPrivateKey(options.caKeyPem);
  if (!spkiOf(createPublicKey(caKey)).equals(ca.spkiDer)) throw new Error('the CA key does not belong to the CA certificate');
  const serial = randomSerial();
  const key = generateKey('ec', 256);
  const altNames = [
    ...options.dnsNames.map((value) => {
      if (!/^[\x21-\x7e]+$/.test(value)) throw new RangeError(`DNS name must be ASCII: ${JSON.stringify(value)}`);
      return { type: DNS_NAME, value };
    }),
    ...options.ipAddresses.map((ip) => ({ type: IP_ADDRESS, ip })),
  ];
  const extensions: Extension[] = [
    basicConstraints(false),
    keyUsage(['digitalSignature', 'keyEncipherment']),
    ...(options.extKeyUsage.length ? [extKeyUsage(options.extKeyUsage)] : []),
    subjectKeyIdentifier(keyIdentifier(key.spki)),
    authorityKeyIdentifier(ca.subjectKeyId),
  ];
  if (altNames.length) extensions.push({ name: 'subjectAltName', altNames } as Extension);
  const cert = writeCertificate(
    {
      serial,
      issuer: ca.subject,
      subject: commonNameOnly(options.commonName),
      ...validity(options.now ?? new Date(), options.days),
      spki: fromDer(key.spki, 'SubjectPublicKeyInfo'),
      extensions,
    },
    signerFor(caKey),
  );
  // Consul verifies what it made against the CA before saving it.
  if (!new X509Certificate(cert.pem).verify(createPublicKey(caKey))) throw new Error('the new certificate does not verify against the CA');
  return { certPem: cert.pem, keyPem: key.privateKeyPEM, serial };
}
