/**
 * node-forge as the CA uses it: ASN.1 DER encoding and parsing (`forge.asn1`), PEM
 * armour (`forge.pem`), the OID table (`forge.pki.oids`) and X.509 extension encoding and
 * decoding (`forge.pki`). Keys and signatures stay with Node's crypto: forge implements
 * RSA only, and the CA's default keys are EC P-256 (see docs/dependencies.md).
 *
 * forge works on "binary strings" (one char per byte); Node's crypto on Buffers. The
 * conversions between them live here, with the few shorthands the CA builds
 * structures with.
 */
import type forgeApi from 'node-forge';

/**
 * Only forge's X.509 module and what it requires itself (ASN.1, OIDs, PEM, RSA, message digests:
 * 23 of forge's 42 modules): its index also loads TLS, SSH, PKCS#7/#12, ed25519, ciphers — ~0.5 MiB
 * of heap in every agent that the CA never calls (issue #30, memory at rest). Each module adds its
 * part to the one forge object that lib/forge holds (and the index returns).
 */
/* eslint-disable @typescript-eslint/no-require-imports */
require('node-forge/lib/asn1');
require('node-forge/lib/oids');
require('node-forge/lib/pem');
require('node-forge/lib/util');
require('node-forge/lib/md.all'); // every digest x509 may name, as the index loads them
require('node-forge/lib/x509');
const forge = require('node-forge/lib/forge') as typeof forgeApi;
/* eslint-enable @typescript-eslint/no-require-imports */

// Parts of forge's public API that @types/node-forge does not describe.
declare module 'node-forge' {
  namespace asn1 {
    interface FromDerOptions {
      strict?: boolean;
      parseAllBytes?: boolean;
      decodeBitStrings?: boolean;
      maxDepth?: number;
    }
    function fromDer(bytes: Bytes | util.ByteBuffer, options: FromDerOptions): Asn1;

    /** forge's declarative schema for `asn1.validate` (see forge's x509.js validators). */
    interface Validator {
      name: string;
      tagClass: Class;
      type: Type;
      constructed: boolean;
      optional?: boolean;
      capture?: string;
      captureAsn1?: string;
      captureBitStringValue?: string;
      value?: Validator[];
    }
    function validate(obj: Asn1, validator: Validator, capture: Record<string, unknown>, errors?: string[]): boolean;
  }

  namespace pki {
    /** An extension as forge's parser returns it, or as its encoder takes it. */
    interface Extension {
      id?: string;
      name?: string;
      critical?: boolean;
      /** DER of extnValue's contents (a binary string) when parsed; ASN.1 or a string when encoding. */
      value?: Bytes | asn1.Asn1;
      /** subjectAltName: GeneralNames by tag number (2 = dNSName, 6 = URI), values as binary strings. */
      altNames?: { type: number; value: Bytes }[];
      /** subjectKeyIdentifier, parsed: hex. */
      subjectKeyIdentifier?: string;
      /** authorityKeyIdentifier, to encode: a binary string. */
      keyIdentifier?: Bytes;
      [field: string]: unknown;
    }
    function certificateExtensionFromAsn1(ext: asn1.Asn1): Extension;
    function certificateExtensionsFromAsn1(exts: asn1.Asn1): Extension[];
    function certificateExtensionToAsn1(ext: Extension): asn1.Asn1;
    function certificateExtensionsToAsn1(exts: Extension[]): asn1.Asn1;
    interface CRIAttribute {
      type: string;
      name?: string;
      extensions?: Extension[];
    }
    function CRIAttributesAsArray(attributes: asn1.Asn1[]): CRIAttribute[];
  }
}

export const { asn1, pem, pki, util } = forge;
export type Asn1 = forgeApi.asn1.Asn1;
export type TagClass = forgeApi.asn1.Class;
export type Validator = forgeApi.asn1.Validator;
export type Extension = forgeApi.pki.Extension;

export const UNIVERSAL = asn1.Class.UNIVERSAL;
export const CONTEXT_SPECIFIC = asn1.Class.CONTEXT_SPECIFIC;
export const T = asn1.Type;

export function toBinary(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

export function fromBinary(binary: string): Buffer {
  return Buffer.from(binary, 'latin1');
}

/** The DER of an ASN.1 structure. */
export function toDer(node: Asn1): Buffer {
  return fromBinary(asn1.toDer(node).getBytes());
}

/**
 * Parse exactly one DER element. forge accepts some BER (indefinite lengths, non-minimal
 * lengths and integers) and re-encodes it as DER; requiring the input to equal its own
 * re-encoding keeps signatures, which cover the bytes as received, checkable against
 * `toDer()` of any part.
 */
export function fromDer(der: Buffer | string, what: string): Asn1 {
  const bytes = typeof der === 'string' ? der : toBinary(der);
  const node = asn1.fromDer(bytes, { strict: true, parseAllBytes: true, decodeBitStrings: false });
  if (asn1.toDer(node).getBytes() !== bytes) throw new Error(`${what} is not DER-encoded`);
  return node;
}

/** Check `node` against a forge validator and return what it captured; throws on mismatch. */
export function validated(node: Asn1, validator: Validator): Record<string, unknown> {
  const capture: Record<string, unknown> = {};
  const errors: string[] = [];
  if (!asn1.validate(node, validator, capture, errors)) {
    throw new Error(errors[0] ?? `not a ${validator.name}`);
  }
  return capture;
}

export function sequence(...items: Asn1[]): Asn1 {
  return asn1.create(UNIVERSAL, T.SEQUENCE, true, items);
}

export function set(...items: Asn1[]): Asn1 {
  return asn1.create(UNIVERSAL, T.SET, true, items);
}

export function oid(dotted: string): Asn1 {
  return asn1.create(UNIVERSAL, T.OID, false, asn1.oidToDer(dotted).getBytes());
}

/** A small non-negative INTEGER (versions). */
export function smallInteger(value: number): Asn1 {
  return asn1.create(UNIVERSAL, T.INTEGER, false, asn1.integerToDer(value).getBytes());
}

/** A BIT STRING of whole bytes (signatures). */
export function bitString(bytes: Uint8Array): Asn1 {
  return asn1.create(UNIVERSAL, T.BITSTRING, false, '\x00' + toBinary(bytes));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 (as forge's own writer). */
export function time(date: Date): Asn1 {
  const year = date.getUTCFullYear();
  if (!(year >= 1950 && year <= 9999)) throw new RangeError(`certificate time out of range: year ${year}`);
  return year < 2050
    ? asn1.create(UNIVERSAL, T.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(UNIVERSAL, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

/**
 * Fill in the ASN.1 value of each extension from its named fields (keyUsage flags,
 * cA, altNames, keyIdentifier…) with forge's encoders. forge exposes them only through a
 * certificate's setExtensions, which needs a certificate only for fields derived from
 * its (RSA) key; we always pass key identifiers explicitly, so a blank one serves.
 */
export function encodedExtensions(extensions: Extension[]): Asn1[] {
  pki.createCertificate().setExtensions(extensions);
  return extensions.map((e) => pki.certificateExtensionToAsn1(e));
}
