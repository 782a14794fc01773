/**
 * Key pairs and signatures, all through Node's native crypto (fast, and the only way to
 * get EC here: node-forge is RSA-only). Private keys travel as PEM in Consul's forms:
 * `EC PRIVATE KEY` (SEC1) and `RSA PRIVATE KEY` (PKCS#1). forge only encodes and parses
 * the structures around them (AlgorithmIdentifier, SubjectPublicKeyInfo).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, KeyObject } from 'node:crypto';
import { asn1, fromBinary, fromDer, oid, sequence, T, UNIVERSAL, validated, type Asn1, type Validator } from './asn1';
import { OID } from './oids';

export type KeyType = 'rsa' | 'ec';

export const DEFAULT_KEY_BITS: Record<KeyType, number> = { ec: 256, rsa: 2048 };

const EC_CURVES: Record<number, string> = { 256: 'prime256v1', 384: 'secp384r1' };

export interface GeneratedKey {
  privateKey: KeyObject;
  privateKeyPEM: string;
  /** DER SubjectPublicKeyInfo of the public half. */
  spki: Buffer;
}

export function generateKey(keyType: KeyType, keyBits = DEFAULT_KEY_BITS[keyType]): GeneratedKey {
  let privateKey: KeyObject;
  let publicKey: KeyObject;
  if (keyType === 'ec') {
    const namedCurve = EC_CURVES[keyBits];
    if (namedCurve === undefined) throw new RangeError(`EC keys must be 256 or 384 bits, got ${keyBits}`);
    ({ privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve }));
  } else if (keyType === 'rsa') {
    if (!Number.isInteger(keyBits) || keyBits < 2048 || keyBits > 8192 || keyBits % 8 !== 0) {
      throw new RangeError(`RSA keys must be 2048..8192 bits (a multiple of 8), got ${keyBits}`);
    }
    ({ privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: keyBits }));
  } else {
    throw new RangeError(`unknown key type ${JSON.stringify(keyType)} (want 'ec' or 'rsa')`);
  }
  return {
    privateKey,
    privateKeyPEM: privateKey.export({ type: keyType === 'ec' ? 'sec1' : 'pkcs1', format: 'pem' }).toString(),
    spki: publicKey.export({ type: 'spki', format: 'der' }),
  };
}

export function loadPrivateKey(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' });
}

export function spkiOf(key: KeyObject): Buffer {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return publicKey.export({ type: 'spki', format: 'der' });
}

type Hash = 'sha256' | 'sha384' | 'sha512';

/** Signature algorithms we produce and accept, by OID. */
const SIGNATURE_ALGORITHMS: Record<string, { keyType: KeyType; hash: Hash }> = {
  [OID.sha256WithRSAEncryption]: { keyType: 'rsa', hash: 'sha256' },
  [OID.sha384WithRSAEncryption]: { keyType: 'rsa', hash: 'sha384' },
  [OID.sha512WithRSAEncryption]: { keyType: 'rsa', hash: 'sha512' },
  [OID.ecdsaWithSHA256]: { keyType: 'ec', hash: 'sha256' },
  [OID.ecdsaWithSHA384]: { keyType: 'ec', hash: 'sha384' },
  [OID.ecdsaWithSHA512]: { keyType: 'ec', hash: 'sha512' },
};

export interface Signer {
  /** AlgorithmIdentifier to put in the TBS and around the signature (never modified). */
  algorithm: Asn1;
  sign(data: Buffer): Buffer;
}

/** How a private key signs: RSA PKCS#1 v1.5 or ECDSA (DER signature), hash matched to key size as Go does. */
export function signerFor(privateKey: KeyObject): Signer {
  const type = privateKey.asymmetricKeyType;
  if (type === 'rsa') {
    // RFC 4055: the RSA algorithm identifiers carry an explicit NULL parameter.
    const algorithm = sequence(oid(OID.sha256WithRSAEncryption), asn1.create(UNIVERSAL, T.NULL, false, ''));
    return { algorithm, sign: (data) => sign('sha256', data, privateKey) };
  }
  if (type === 'ec') {
    const curve = privateKey.asymmetricKeyDetails?.namedCurve;
    const p384 = curve === 'secp384r1';
    // RFC 5758: ECDSA identifiers have no parameters.
    const algorithm = sequence(oid(p384 ? OID.ecdsaWithSHA384 : OID.ecdsaWithSHA256));
    const hash: Hash = p384 ? 'sha384' : 'sha256';
    return { algorithm, sign: (data) => sign(hash, data, { key: privateKey, dsaEncoding: 'der' }) };
  }
  throw new RangeError(`unsupported signing key type ${String(type)}`);
}

/** Parsing a public key is OpenSSL's slowest step here (≈0.3 ms): do it once per request. */
export function publicKeyFromSpki(spki: Buffer): KeyObject {
  return createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

/**
 * Check `signature` over `data` with `publicKey`, under the signature algorithm named by
 * `algorithmOid`. Returns false for a bad signature, an unknown algorithm, or an
 * algorithm that does not fit the key.
 */
export function verifySignature(publicKey: KeyObject, algorithmOid: string, data: Buffer, signature: Buffer): boolean {
  const algorithm = SIGNATURE_ALGORITHMS[algorithmOid];
  if (algorithm === undefined) return false;
  if (publicKey.asymmetricKeyType !== algorithm.keyType) return false;
  const key = algorithm.keyType === 'ec' ? { key: publicKey, dsaEncoding: 'der' as const } : publicKey;
  try {
    return verify(algorithm.hash, data, key, signature);
  } catch {
    return false; // malformed signature encoding
  }
}

/** SubjectPublicKeyInfo (RFC 5280 §4.1), for forge's asn1.validate. */
export const SPKI_VALIDATOR: Validator = {
  name: 'SubjectPublicKeyInfo', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true, captureAsn1: 'spki',
  value: [
    { name: 'SubjectPublicKeyInfo.algorithm', tagClass: UNIVERSAL, type: T.SEQUENCE, constructed: true },
    {
      name: 'SubjectPublicKeyInfo.subjectPublicKey', tagClass: UNIVERSAL, type: T.BITSTRING, constructed: false,
      captureBitStringValue: 'publicKeyBits',
    },
  ],
};

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING's bytes (a forge binary string). */
export function keyIdentifierOfBits(publicKeyBits: string): Buffer {
  return createHash('sha1').update(fromBinary(publicKeyBits)).digest();
}

/** The method-1 key identifier of a DER SubjectPublicKeyInfo. */
export function keyIdentifier(spki: Buffer): Buffer {
  return keyIdentifierOfBits(validated(fromDer(spki, 'SubjectPublicKeyInfo'), SPKI_VALIDATOR).publicKeyBits as string);
}

/** What kind of key this is, for policy checks on CSRs. */
export function describePublicKey(key: KeyObject): { keyType: KeyType; bits: number } {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') return { keyType: 'rsa', bits: details.modulusLength ?? 0 };
  if (key.asymmetricKeyType === 'ec') {
    const bits = Object.entries(EC_CURVES).find(([, curve]) => curve === details.namedCurve)?.[0];
    return { keyType: 'ec', bits: bits === undefined ? 0 : Number(bits) };
  }
  throw new RangeError(`unsupported public key type ${String(key.asymmetricKeyType)}`);
}
