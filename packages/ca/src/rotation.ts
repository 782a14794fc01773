/**
 * Root rotation support. When the active root changes, clients that still trust only
 * the old root must accept leaves signed by the new one. A cross-signed certificate
 * bridges them: the new root's subject and public key, certified by the old root's key.
 * Consul stores it in the new root's IntermediateCerts and appends it to issued leaves.
 */
import { readCertificate } from './certificate-reader';
import { writeCertificate } from './certificate-writer';
import { authorityKeyIdentifier, copiedExtension } from './extensions';
import { OID } from './oids';
import { rootSigningMaterial } from './root';
import { checkedSerial } from './serial';
import type { RootCA } from './types';
import { validityFor } from './validity';

/**
 * The bridge is only needed until every client has fetched the new root (roots are
 * watched with blocking queries) and old leaves (72 h) have expired: a week is ample.
 */
export const DEFAULT_CROSS_SIGN_TTL_HOURS = 7 * 24;
const BACKDATE_MS = 60_000;

export interface CrossSignOptions {
  oldRoot: RootCA;
  newRoot: RootCA;
  /** Allocated by the caller through Raft, like every other serial. */
  serial: number | bigint;
  ttlHours?: number;
  now?: Date;
}

/** PEM of the new root re-issued by the old root. */
export function crossSign(options: CrossSignOptions): string {
  const serial = checkedSerial(options.serial, 'cross-sign serial');
  const oldRoot = rootSigningMaterial(options.oldRoot);
  const newRoot = readCertificate(options.newRoot.RootCert);
  const { notBefore, notAfter } = validityFor(options.now ?? new Date(), options.ttlHours ?? DEFAULT_CROSS_SIGN_TTL_HOURS, BACKDATE_MS);

  // Keep every extension of the new root (CA:true, key usage, its SKI and SPIFFE SAN)
  // except the authority key id, which must now name the old root's key.
  const extensions = newRoot.extensions
    .filter((e) => e.id !== OID.authorityKeyIdentifier)
    .map(copiedExtension);
  extensions.push(authorityKeyIdentifier(oldRoot.subjectKeyId));

  return writeCertificate({
    serial,
    issuer: oldRoot.subject,
    subject: newRoot.subject,
    notBefore,
    notAfter,
    spki: newRoot.spki,
    extensions,
  }, oldRoot.signer).pem;
}
