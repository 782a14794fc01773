// A throwaway PKI for TLS tests: a CA and certificates it signs, with node-forge (RSA keys made by
// Node's crypto, which is much faster than forge's own key generation).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';

export interface Ca {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  certPem: string;
}

export interface Issued {
  certPem: string;
  keyPem: string;
}

function keyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey; keyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()) as forge.pki.rsa.PublicKey,
    privateKey: forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey,
    keyPem,
  };
}

function base(cn: string, publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = '01' + randomBytes(8).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: cn }]);
  return cert;
}

export function makeCa(name: string): Ca {
  const { publicKey, privateKey } = keyPair();
  const cert = base(name, publicKey);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { cert, key: privateKey, certPem: forge.pki.certificateToPem(cert) };
}

/** A certificate for both TLS ends (server and client auth) naming `dnsNames` and 127.0.0.1. */
export function issue(ca: Ca, cn: string, dnsNames: string[]): Issued {
  const { publicKey, keyPem } = keyPair();
  const cert = base(cn, publicKey);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), { type: 7, ip: '127.0.0.1' }] },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** Writes a CA and a certificate as ca.pem, cert.pem, key.pem in a new temporary folder. */
export function writePki(ca: Ca, leaf: Issued): { dir: string; caFile: string; certFile: string; keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'registry-tls-'));
  const files = { dir, caFile: join(dir, 'ca.pem'), certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') };
  writeFileSync(files.caFile, ca.certPem);
  writeFileSync(files.certFile, leaf.certPem);
  writeFileSync(files.keyFile, leaf.keyPem, { mode: 0o600 });
  return files;
}
